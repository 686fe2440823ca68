"""``mleboard submit`` of a large upload against gunicorn: memory of the client and of the
web processes, throughput on loopback, and the time to resume after an interruption
(method: docs/benchmarks.md). It drops and creates the database ``--database-url`` names.

Run from the repository root (about 3 x the size in free disk):

    .venv/bin/python perf/submit_bench.py --gib 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"
MiB = 1024 * 1024


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class Sampler:
    def __init__(self, web_master: int):
        self.web_master = web_master
        self.client_pid = 0
        self.peak_client = 0
        self.peak_worker = 0
        self.baseline_worker = max((rss_kib(p) for p in children(web_master)), default=0)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self._stop.wait(0.1):
            if self.client_pid:
                self.peak_client = max(self.peak_client, rss_kib(self.client_pid))
            for worker in children(self.web_master):
                self.peak_worker = max(self.peak_worker, rss_kib(worker))

    def stop(self):
        self._stop.set()
        self.thread.join()


def make_run_group(folder: Path, gib: float) -> Path:
    group = folder / "2024-10-01T00-00-00-GMT_run-group_bench"
    run = group / "spaceship-titanic_00000000-0000-0000-0000-000000000000"
    (run / "submission").mkdir(parents=True)
    (run / "logs").mkdir()
    (run / "submission" / "submission.csv").write_text("PassengerId,Transported\n0013_01,False\n")
    block = os.urandom(64 * MiB)
    left = int(gib * 1024 * MiB)
    index = 0
    while left > 0:
        size = min(512 * MiB, left)
        with open(run / "logs" / f"part-{index:03d}.log", "wb") as handle:
            for start in range(0, size, len(block)):
                handle.write(block[: min(len(block), size - start)])
        left -= size
        index += 1
    (group / "metadata.json").write_text(
        json.dumps({"run_group": group.name, "runs": {run.name: {}}})
    )
    return group


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=5.0)
    parser.add_argument(
        "--database-url", default="postgresql://postgres@127.0.0.1:5432/mleboard_submit_bench"
    )
    parser.add_argument("--port", type=int, default=8411)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk-size", type=int, default=16, help="MiB per request")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="submit-bench-"))
    db_name = args.database_url.rsplit("/", 1)[1]
    admin_url = args.database_url.rsplit("/", 1)[0] + "/postgres"
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "MLEBOARD_VAR_DIR": str(work / "var"),
        "MLEBOARD_MEDIA_ROOT": str(work / "media"),
        "SECRET_KEY": "bench-only",
        "MLEBOARD_UPLOAD_MAX_TOTAL_BYTES": str(4 * int(args.gib * 1024) * MiB),
        "MLEBOARD_UPLOAD_MAX_FILE_BYTES": str(1024 * MiB),
        "MLEBOARD_PAGE_CACHE": "0",
        "PYTHONPATH": str(ROOT),
    }
    web = None
    try:
        for sql in (f"DROP DATABASE IF EXISTS {db_name}", f"CREATE DATABASE {db_name}"):
            subprocess.run(["psql", admin_url, "-qc", sql], check=True)
        # Migrate, load the catalogue, make the user and its token in one process.
        setup = (
            "from django.contrib.auth.models import User\n"
            "from django.core.management import call_command\n"
            "call_command('migrate', verbosity=0)\n"
            "call_command('load_catalogue', verbosity=0)\n"
            "User.objects.create_user('bench', password='x')\n"
            "call_command('create_token', 'bench', '--name', 'bench')\n"
        )
        token = (
            subprocess.run(
                [str(BIN / "python"), "manage.py", "shell", "-c", setup],
                cwd=ROOT,
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        web = subprocess.Popen(
            [
                str(BIN / "gunicorn"),
                "webapp.project.wsgi:application",
                "--bind",
                f"127.0.0.1:{args.port}",
                "--workers",
                str(args.workers),
                "--timeout",
                "120",
                "--no-control-socket",
            ],
            cwd=ROOT,
            env=env,
            stdout=open(work / "gunicorn.log", "w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        site = f"http://127.0.0.1:{args.port}"
        for _ in range(300):
            try:
                urllib.request.urlopen(site + "/api/uploads/tus/", timeout=2)
            except urllib.error.HTTPError:
                break
            except OSError:
                time.sleep(0.2)
        print(f"writing a run group of {args.gib} GiB ...", flush=True)
        group = make_run_group(work / "runs", args.gib)
        cli_env = {
            **env,
            "MLEBOARD_TOKEN": token,
            "XDG_CACHE_HOME": str(work / "cache"),
            "XDG_CONFIG_HOME": str(work / "config"),
        }
        base = [
            str(BIN / "python"),
            "-m",
            "cli",
            "submit",
            str(group),
            "--site",
            site,
            "--scaffold",
            "bench",
            "--model",
            "none",
            "--no-wait",
            "--chunk-size",
            str(args.chunk_size),
        ]

        sampler = Sampler(web.pid)
        started = time.monotonic()
        proc = subprocess.Popen(base, cwd=ROOT, env=cli_env, stderr=subprocess.PIPE, text=True)
        sampler.client_pid = proc.pid
        _out, err = proc.communicate()
        elapsed = time.monotonic() - started
        sampler.stop()
        if proc.returncode != 0:
            print(err)
            return 1
        size = sum(f.stat().st_size for f in group.rglob("*") if f.is_file())
        print(
            f"upload of {size / 1024**3:.2f} GiB: {elapsed:.1f} s, {size / elapsed / MiB:.0f} MiB/s on loopback (command start to upload stored, chunks of {args.chunk_size} MiB)"
        )
        print(
            f"peak resident memory: client {sampler.peak_client / 1024:.0f} MiB; each gunicorn worker {sampler.peak_worker / 1024:.0f} MiB (at rest {sampler.baseline_worker / 1024:.0f} MiB)"
        )

        # Interrupt at about 40%, then resume.
        resume_cmd = [*base, "--name", "bench resume"]
        proc = subprocess.Popen(
            resume_cmd, cwd=ROOT, env=cli_env, stderr=subprocess.PIPE, text=True
        )
        request = urllib.request.Request(
            site + "/api/uploads/tus/", headers={"Authorization": f"Token {token}"}
        )
        offset = 0
        while proc.poll() is None:
            uploads = json.load(urllib.request.urlopen(request))["uploads"]
            if uploads and uploads[0]["offset"] >= 0.4 * uploads[0]["length"]:
                proc.send_signal(signal.SIGINT)
                break
            time.sleep(0.05)
        proc.communicate()
        uploads = json.load(urllib.request.urlopen(request))["uploads"]
        if not uploads:
            print(
                f"the second upload ended (exit {proc.returncode}) before it was 40% sent: no resume measured; use a larger --gib"
            )
            return 0
        print(f"interrupted with SIGINT: exit code {proc.returncode} (3 = resumable)")
        offset, key_url = uploads[0]["offset"], uploads[0]["url"]
        started = time.monotonic()
        proc = subprocess.Popen(
            resume_cmd, cwd=ROOT, env=cli_env, stderr=subprocess.PIPE, text=True
        )
        detail = urllib.request.Request(site + key_url, headers={"Authorization": f"Token {token}"})
        resumed_after = None
        while proc.poll() is None:
            now = json.load(urllib.request.urlopen(detail))
            if now["offset"] > offset or now["state"] != "receiving":
                resumed_after = time.monotonic() - started
                break
            time.sleep(0.02)
        _out, err = proc.communicate()
        total = time.monotonic() - started
        print(
            f"resumed at {offset / 1024**3:.2f} GiB of {size / 1024**3:.2f}: first new byte stored {resumed_after:.2f} s after the command started; the rest sent in {total:.1f} s (exit {proc.returncode})"
        )
        return 0
    finally:
        if web is not None:
            os.killpg(web.pid, signal.SIGTERM)
            web.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
