"""One site of a drill: a fresh var dir and database, and web, grading worker, beat (and a
private redis-server) started as ``make run`` starts them, each killable and restartable."""

from __future__ import annotations

import ast
import contextlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from .database import Db, PrivatePostgres, recreate_pg_database
from .disk import SmallDisk
from .processes import REPO, STARTED, DrillAbort, Proc, free_port, log, port_in_use, wait_for
from .uploads import http_answers, post_upload

ACCESS_LOG = "gunicorn-access.log"
# Variables of the caller's environment that must not leak into the drill's processes.
_SCRUB_PREFIXES = ("MLEBOARD_", "CELERY_")
_SCRUB = {
    "DATABASE_URL",
    "CACHE_URL",
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "DJANGO_SETTINGS_MODULE",
    "GUNICORN_CMD_ARGS",
    "WEB_CONCURRENCY",
    "WORKER_CONCURRENCY",
}


class Site:
    def __init__(self, args, drill: str):
        self.args = args
        self.drill = drill
        self.backend = args.backend
        self.var = Path(tempfile.mkdtemp(prefix=f"mleboard-drill-{drill}-"))
        self.media = self.var / "media"
        self.data = self.var / "data"
        self.logs = self.var / "log"
        self.tmp = self.var / "tmp"
        for folder in (self.media, self.data, self.logs, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)
        self.bin = Path(args.bin)
        self.port = free_port()
        self.token = ""
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in _SCRUB and not k.startswith(_SCRUB_PREFIXES)
        }
        env.update(
            MLEBOARD_VAR_DIR=str(self.var),
            MLEBOARD_MEDIA_ROOT=str(self.media),
            MLEBOARD_DATA_DIR=str(self.data),
            MLEBOARD_STALE_AFTER_S=str(args.stale_after),
            MLEBOARD_REAPER_INTERVAL_S=str(args.reaper_interval),
            SECRET_KEY="drill-only-key",
            DEBUG="0",
            TMPDIR=str(self.tmp),  # Django's temporary upload files land here, to count
            PYTHONUNBUFFERED="1",
            PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
        )
        self.disk = None
        if drill == "disk":
            self.disk = SmallDisk(self.media, args.disk_mib)
            env["MLEBOARD_MEDIA_MIN_FREE_BYTES"] = str(args.disk_min_free)
        self.pg = None
        if self.backend == "pg-redis":
            database_url = args.database_url
            if drill == "database":  # a cluster to stop: the drill's own, never the shared one
                self.pg = PrivatePostgres()
                database_url = self.pg.url
            env["DATABASE_URL"] = database_url
            env["CELERY_BROKER_URL"] = f"redis://127.0.0.1:{args.redis_port}/0"
            self.db = Db(database_url, None)
        else:
            self.db = Db(None, self.var / "mleboard.sqlite3")
        self.env = env
        self.redis = Proc(
            "redis",
            [
                args.redis_server,
                "--port",
                str(args.redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.var),
            ],
            env,
            self.logs / "redis.log",
        )
        # Web, worker and beat as `make run` and compose start them (webapp/ops/processes.py),
        # with the drill's ports, sizes and logs.
        declared = env | {
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "WEB_CONCURRENCY": "2",
            "WORKER_CONCURRENCY": "2",
            "MLEBOARD_LOG_TO_FILES": "1",  # the workers' and beat's logs under var/log/
        }
        self.web = Proc(
            "gunicorn",
            # An option given again overrides the declared one (gunicorn's last wins).
            self.declared_argv("web", declared, "--access-logfile", str(self.logs / ACCESS_LOG)),
            env,
            self.logs / "gunicorn.log",
        )
        # Where the worker's start is read from (its "ready.").
        self.worker_log = self.logs / "worker-grading.log"
        worker_argv = self.declared_argv("grading-worker", declared)
        if str(self.worker_log) not in worker_argv:
            raise RuntimeError(f"the grading worker logs elsewhere: {shlex.join(worker_argv)}")
        self.worker = Proc(
            "worker",
            worker_argv,
            env | {"MLEBOARD_GRADING_FAULT_DELAY": str(args.fault_delay)},
            self.logs / "worker-grading.out",
        )
        self.beat = Proc("beat", self.declared_argv("beat", declared), env, self.logs / "beat.out")

    def declared_argv(self, name: str, env: dict[str, str], *extra: str) -> list[str]:
        """Process ``name``'s command line from its one declaration, asked as a person
        would (``python -m webapp.ops.processes argv NAME``), then ``extra``."""
        done = subprocess.run(
            [str(self.bin / "python"), "-m", "webapp.ops.processes", "argv", name],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"webapp.ops.processes argv {name} failed:\n{done.stderr[-2000:]}")
        return shlex.split(done.stdout) + list(extra)

    # -- set-up --

    def manage(self, *argv: str, timeout: float = 600) -> str:
        done = subprocess.run(
            [str(self.bin / "python"), "manage.py", *argv],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"manage.py {argv[0]} failed ({done.returncode}):\n{done.stdout[-2000:]}"
                f"\n{done.stderr[-4000:]}"
            )
        return done.stdout

    def setup(self) -> None:
        if self.disk is not None:
            self.disk.mount()  # before any process writes to the media folder
        if self.backend == "pg-redis":
            if self.pg is not None:
                self.pg.init()
                self.pg.start()
            recreate_pg_database(self.env["DATABASE_URL"])
            self.start_redis()
        started = time.monotonic()
        # migrate, load_catalogue, collectstatic (the pages link the static files by their
        # hashed names, from its manifest) and the demo, in one process.
        out = self.manage("shell", "-c", SETUP_SHELL)
        match = re.search(r"^TOKEN=(\w+)$", out, re.M)
        if not match:
            raise RuntimeError(f"no token in the set-up's output: {out[-500:]}")
        self.token = match.group(1)
        log(f"set up {self.backend} in {time.monotonic() - started:.1f} s (var dir {self.var})")

    def start_redis(self) -> None:
        if port_in_use(self.args.redis_port):
            raise RuntimeError(
                f"port {self.args.redis_port} is in use: the drill needs a private redis-server"
            )
        self.redis.start()
        wait_for("redis-server", self.redis_ping, 30)

    def redis_ping(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.args.redis_port), timeout=2) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")

    def start_web(self) -> None:
        self.web.start()
        self._wait_web()

    def _wait_web(self) -> None:
        wait_for("gunicorn", lambda: self.alive_or_raise(self.web) and self._http(), 60)

    def _http(self) -> bool:
        return http_answers(self.port, self.token)

    def start_worker(self) -> None:
        self._wait_worker(self._launch_worker())

    def _launch_worker(self) -> int:
        """Start the worker; the offset of its log where this start's lines begin."""
        offset = self.worker_log.stat().st_size if self.worker_log.exists() else 0
        self.worker.start()
        return offset

    def _wait_worker(self, offset: int) -> None:
        def ready() -> bool:
            self.alive_or_raise(self.worker)
            with open(self.worker_log, "rb") as fh:
                fh.seek(offset)
                return b" ready." in fh.read()

        wait_for("the grading worker", ready, 90)

    def start_beat(self) -> None:
        self.beat.start()
        self._check_beat()

    def _check_beat(self) -> None:
        time.sleep(1)
        self.alive_or_raise(self.beat)

    @staticmethod
    def alive_or_raise(proc: Proc) -> bool:
        if not proc.alive():
            raise DrillAbort(f"{proc.name} exited (see {proc.log_path})")
        return True

    def start_all(self) -> None:
        """Web, worker and beat started together (each takes seconds to load the site),
        then each waited for."""
        self.web.start()
        offset = self._launch_worker()
        self.beat.start()
        self._wait_web()
        self._wait_worker(offset)
        self._check_beat()

    def stop(self) -> None:
        for proc in (self.web, self.beat, self.worker, self.redis):
            proc.stop(grace=10)
            if proc in STARTED:
                STARTED.remove(proc)
        if self.pg is not None:
            with contextlib.suppress(OSError):
                shutil.copy(self.pg.log_path, self.logs / "postgres.log")
            self.pg.remove()
        if self.disk is not None:
            self.disk.unmount()

    # -- observing --

    def upload(self, archive: bytes, name: str) -> dict:
        status, answer = post_upload(self.port, self.token, archive, name)
        log(f"POST /api/uploads/ {name} ({len(archive) / 1e6:.1f} MB): {status} {answer}")
        if status != 202:
            raise RuntimeError(f"upload refused: {status} {answer}")
        return answer

    def sweeps(self) -> tuple[int, int]:
        """(sweeps that sent, took back or failed work, ``sweep:`` lines) in the worker's
        log (its log file, else its captured output)."""
        best = (0, 0)
        for path in (self.worker_log, self.worker.log_path):
            if not path.exists():
                continue
            active = lines = 0
            for match in re.finditer(
                r"(?:^|\] )sweep: (\{.*\})$", path.read_text(errors="replace"), re.M
            ):
                lines += 1
                try:
                    report = ast.literal_eval(match.group(1))
                except (ValueError, SyntaxError):
                    continue
                if report.get("sent") or report.get("taken_back") or report.get("failed"):
                    active += 1
            best = max(best, (active, lines))
        return best

    def spool_files(self) -> list[Path]:
        return [p for p in self.media.glob("upload-*") if p.is_file()]


SETUP_SHELL = """
from pathlib import Path
from django.conf import settings
from django.core.management import call_command

call_command("migrate", interactive=False, verbosity=0)
call_command("load_catalogue", verbosity=0)
call_command("collectstatic", interactive=False, verbosity=0)

from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from benchmark.demo import DEMO_COMPETITIONS, build_demo
from webapp.competitions.models import Competition
from webapp.competitions.services import leaderboard_import_file

build = build_demo(Path(settings.MLEBOARD_DATA_DIR), seeds=1)
for cid in DEMO_COMPETITIONS:
    board = leaderboard_import_file(Competition.objects.get(slug=cid), build.leaderboards[cid])
    board.is_synthetic = True
    board.save(update_fields=["is_synthetic"])
user = get_user_model().objects.create_user("drill")
print("TOKEN=" + Token.objects.create(user=user).key)
"""
