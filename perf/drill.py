"""Failure drills: kill real processes of a running mleboard while it grades uploads, and
check that the database-owned work (``webapp.work``, ``webapp.ops.sweeper``) still ends with
every upload graded and every run holding exactly one current grade report.

Each drill gets a fresh database and a fresh var dir (``tempfile.mkdtemp``), runs
``manage.py migrate`` and ``load_catalogue``, builds the demo competitions'
prepared data with ``benchmark.demo.build_demo`` (and imports their synthetic
leaderboards), creates a user with a DRF token, and starts, each in its own process group
with its log in the var dir, the command lines ``make run`` uses (``webapp/ops/processes.py``):
gunicorn (2 workers), the grading worker (concurrency 2, with
``MLEBOARD_GRADING_FAULT_DELAY=2``, so kills land mid-grading) and beat (the sweeper every
``MLEBOARD_REAPER_INTERVAL_S`` = 5 s, claims silent for ``MLEBOARD_STALE_AFTER_S`` = 20 s
taken back). The drills:

1. ``worker``: upload an archive of N runs (3 seeds x 4 demo competitions), wait until a
   run is being graded, SIGKILL the worker's process group (main process and pool
   children), wait 3 s, start it again.
2. ``broker`` (``--backend pg-redis`` only; the embedded broker has no process to kill):
   upload another archive, once grading is under way SIGKILL the private redis-server,
   keep it down 15 s, start it again on the same port (empty: queued tasks are lost).
3. ``web``: send a big archive (padded with a random ``logs/run.log``) over a raw socket
   and SIGKILL gunicorn's process group while the body is being sent; start gunicorn again
   and re-send the same archive normally (the answer's ``duplicate`` and ``resumed`` are
   printed).
4. ``database`` (``--backend pg-redis`` only; SQLite is a file, not a server): on a private
   PostgreSQL cluster the drill makes (``initdb``, ``pg_ctl`` on a free port, as the
   ``postgres`` user when run as root; never the machine's shared server), upload an
   archive, once grading is under way stop the cluster (``pg_ctl stop -m immediate``) for
   ``--database-down`` s (20). Meanwhile it asks, again and again, for ``/`` and
   ``/api/leaderboard/`` (anonymous, cached before the stop), ``/api/experiments/`` and the
   upload's status (token) and posts new uploads: every answer must be a 200 (a cached page)
   or a 503 with ``Retry-After``, never a 500 or a broken connection. Then it starts the
   cluster again and the workers must finish the grading by themselves.
5. ``disk``: the media folder on a small filesystem of its own, a tmpfs of ``--disk-mib``
   MiB (24) the drill mounts (root only: without root, or where the mount is refused, the
   drill says so and skips it), with ``MLEBOARD_MEDIA_MIN_FREE_BYTES`` = ``--disk-min-free``
   (1 MiB). Once grading of a first upload is under way it posts an upload of
   ``--big-mb`` MB (40; a random ``logs/run.log``), which must be answered 507 (read while
   the body is still being sent, so a refusal before the body is read counts); then
   ``--after-uploads`` (2) ordinary uploads, which must be accepted (202). Checked besides
   the invariants below: no new file of 1 MiB or more and nothing in ``incoming/`` left in
   the media folder; the filesystem holds no space the files in it do not account for (a
   removed but still open spool file would), after the refusal and at the end; free space
   after the refusal back to what it was before the big upload, less what the files grading
   wrote take; and no answer of 500 or above but 507 in gunicorn's access log. With
   ``--fill-uploads N`` (0: off) it posts, before the ordinary ones, N uploads at once, each
   0.4 of the room left above the margin: each must be answered 202 or 507 (at least one
   507, its files gone), and the accepted ones must be graded. With gunicorn's 2 workers two
   are taken and pass the check before the body is read (it asks twice the declared size, so
   two together still fit); the third meets it after them and gets 507 before its body is
   read: the disk never fills during a write here. The accepted ones do not hold yet: below
   a 1 MiB margin they leave no room to read them, and reading fails (``ENOSPC``).

After the last restart of a drill it polls until every upload is ``graded`` (deadline
``--deadline`` s, 240), then checks the invariants: every upload graded; all N runs graded,
none failed; every run holds exactly one current report (``is_current``); and prints the
seconds from the last restart to all graded, the sweeps that sent or took back work (the
worker log's ``sweep:`` lines) and the ``upload-*`` spool files left in the media root
after the sweeper's spool clean-up window (reported, not checked; ``--spool-wait-max``
bounds the wait for it). Each drill expects one upload; ``disk`` one, the accepted ones of those at once and
``--after-uploads``. It exits 0 when every invariant of every drill holds, else 1.

Backends:

* ``--backend pg-redis`` (default): PostgreSQL at ``--database-url``
  (``postgresql://postgres@127.0.0.1:5432/mleboard_drill``, dropped and created for each
  drill) and a private ``redis-server --port 6391 --save '' --appendonly no`` this script
  starts, kills and restarts (``CELERY_BROKER_URL=redis://127.0.0.1:6391/0``).
* ``--backend embedded``: SQLite and the filesystem broker under the var dir.

Run it from the repository root:

    .venv/bin/python perf/drill.py --backend pg-redis
    .venv/bin/python perf/drill.py --backend embedded
    .venv/bin/python perf/drill.py --drill worker --seeds 2 --keep

Every process it starts is stopped on exit (atexit and try/finally), by its own process
group id. Var dirs are removed unless a drill failed or ``--keep`` is given.
"""

from __future__ import annotations

import argparse
import ast
import atexit
import concurrent.futures
import contextlib
import http.client
import json
import os
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from drill_archive import build_archive, multipart_body  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ACCESS_LOG = "gunicorn-access.log"
DRILLS = ("worker", "broker", "web", "database", "disk")
METADATA = '{"scaffold":"drill","model":"none"}'
REDIS_PORT = 6391

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


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


class DrillAbort(RuntimeError):
    """The drill cannot go on (a process it needs exited)."""


def wait_for(what: str, predicate: Callable[[], object], timeout: float, every: float = 0.2):
    """Poll ``predicate`` until it returns something true; raise TimeoutError after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except DrillAbort:
            raise
        except Exception:  # a service still starting
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


# --- processes ------------------------------------------------------------------------------

_STARTED: list[Proc] = []


class Proc:
    """A child process in its own process group (``start_new_session``), its output
    appended to ``log_path``; killed and stopped by that group only."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_path: Path):
        self.name, self.argv, self.env, self.log_path = name, argv, env, log_path
        self.popen: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as out:
            self.popen = subprocess.Popen(
                self.argv,
                cwd=REPO,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.starts += 1
        if self not in _STARTED:
            _STARTED.append(self)

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def signal_group(self, sig: int) -> None:
        if self.popen is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def kill(self) -> None:
        """SIGKILL the whole process group (main process and its children)."""
        self.signal_group(signal.SIGKILL)
        if self.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=10)

    def stop(self, grace: float = 10) -> None:
        if self.popen is None:
            return
        # The main process first (a warm shutdown of its own children), then the group.
        with contextlib.suppress(ProcessLookupError):
            self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        # The main process may be gone while children of its group remain: kill the group.
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)


def stop_all() -> None:
    for proc in reversed(_STARTED):
        with contextlib.suppress(Exception):
            proc.stop(grace=5)
    _STARTED.clear()


atexit.register(stop_all)


def _exit_on_signal(signum, _frame):
    raise SystemExit(128 + signum)


# --- the database ---------------------------------------------------------------------------


class Db:
    """Read-only queries on the drill's database (PostgreSQL or the SQLite file)."""

    def __init__(self, url: str | None, sqlite_path: Path | None):
        self.url, self.sqlite_path = url, sqlite_path

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        if self.url:
            import psycopg

            with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
                return conn.execute(sql, params).fetchall()
        conn = sqlite3.connect(f"file:{self.sqlite_path}?mode=ro", uri=True, timeout=30)
        try:
            return conn.execute(sql.replace("%s", "?"), params).fetchall()
        finally:
            conn.close()

    def uploads(self) -> list[tuple]:
        return self.query("SELECT id, status, experiment_id, error FROM results_upload ORDER BY id")

    def run_counts(self) -> dict[str, int]:
        return dict(self.query("SELECT status, COUNT(*) FROM results_run GROUP BY status"))

    def current_reports(self) -> list[tuple]:
        """(run id, status, number of current reports) of every run."""
        return self.query(
            "SELECT r.id, r.status, (SELECT COUNT(*) FROM results_gradereport g "
            "WHERE g.run_id = r.id AND g.is_current) FROM results_run r ORDER BY r.id"
        )


def recreate_pg_database(url: str) -> None:
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise SystemExit(f"refusing to drop a database named {name!r}")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


class PrivatePostgres:
    """A PostgreSQL cluster of the drill's own, to stop and start: ``initdb`` in a fresh
    folder, ``pg_ctl`` on a free port (as the ``postgres`` user when the drill runs as root,
    which PostgreSQL refuses), trust authentication on 127.0.0.1 only."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="mleboard-drill-pg-"))
        self.data = self.dir / "data"
        self.log_path = self.dir / "postgres.log"
        self.port = free_port()
        self.user = "postgres" if os.geteuid() == 0 else None
        self.running = False

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/mleboard_drill"

    def _run(self, *argv: str) -> None:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        done = subprocess.run(
            prefix + list(argv), capture_output=True, text=True, timeout=180, cwd=self.dir
        )
        if done.returncode:
            raise RuntimeError(f"{argv[0]} failed: {done.stdout[-1000:]} {done.stderr[-1000:]}")

    def init(self) -> None:
        if self.user:
            shutil.chown(self.dir, self.user)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        _CLUSTERS.append(self)

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 "
            f"-c unix_socket_directories={self.dir} -c fsync=off"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log_path), "-o", options,
                  "-w", "start")  # fmt: skip
        self.running = True

    def stop(self) -> None:
        """Stop at once, as a crash would (no checkpoint; connections cut)."""
        if self.running:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
            self.running = False

    def remove(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
        if self in _CLUSTERS:
            _CLUSTERS.remove(self)


_CLUSTERS: list[PrivatePostgres] = []
atexit.register(lambda: [cluster.remove() for cluster in list(_CLUSTERS)])


# --- a small disk (drill disk) --------------------------------------------------------------

MiB = 1024**2
# Space a filesystem may hold that no file under it accounts for (tmpfs rounds to pages).
DISK_SLACK = 256 * 1024


@dataclass(frozen=True)
class DiskSnapshot:
    free: int  # bytes free (statvfs: available to unprivileged users)
    used: int  # bytes the filesystem says are used
    held: int  # bytes the files under it hold (st_blocks)
    files: dict[str, int]  # path (relative) -> size

    @property
    def unaccounted(self) -> int:
        """Used space no file accounts for: a removed file some process keeps open."""
        return self.used - self.held


class SmallDisk:
    """A tmpfs of ``mib`` MiB mounted on ``path`` (the media folder) by the drill, which must
    run as root; unmounted when the drill stops, and on exit."""

    def __init__(self, path: Path, mib: int):
        self.path, self.mib = path, mib
        self.mounted = False

    @staticmethod
    def cannot_mount() -> str:
        """Why the drill cannot mount a tmpfs here ('' when it can: tried on a scratch
        folder)."""
        if os.geteuid() != 0:
            return (
                "drill disk mounts a small tmpfs on the media folder and needs root: run it "
                "as root, or leave it out (--drill worker --drill web ...)"
            )
        scratch = tempfile.mkdtemp(prefix="mleboard-drill-mount-")
        try:
            done = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", scratch],
                capture_output=True,
                text=True,
                timeout=30,
            )
            if done.returncode:
                said = " ".join(done.stderr.split())[:200]
                return (
                    f"drill disk cannot mount a tmpfs here ({said}); it "
                    "needs root allowed to mount (CAP_SYS_ADMIN)"
                )
            subprocess.run(["umount", scratch], capture_output=True, timeout=30)
            return ""
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"drill disk cannot mount a tmpfs here ({exc})"
        finally:
            with contextlib.suppress(OSError):
                os.rmdir(scratch)

    def mount(self) -> None:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.mib}m,mode=0755", "tmpfs", str(self.path)],
            check=True,
            capture_output=True,
            timeout=30,
        )
        self.mounted = True
        _MOUNTS.append(self)
        log(f"media folder on a {self.mib} MiB tmpfs: {self.snapshot().free / MiB:.1f} MiB free")

    def unmount(self) -> None:
        if not self.mounted:
            return
        done = subprocess.run(["umount", str(self.path)], capture_output=True, timeout=30)
        if done.returncode:  # still busy: detach it, the kernel frees it when released
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, timeout=30)
        self.mounted = False
        if self in _MOUNTS:
            _MOUNTS.remove(self)

    def _read(self) -> tuple[int, int, int, dict[str, int]]:
        vfs = os.statvfs(self.path)
        held, files = 0, {}
        for folder, _dirs, names in os.walk(self.path):
            for name in names:
                path = Path(folder, name)
                with contextlib.suppress(FileNotFoundError):
                    st = path.lstat()
                    held += st.st_blocks * 512
                    files[str(path.relative_to(self.path))] = st.st_size
        return vfs.f_bavail * vfs.f_frsize, (vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize, held, files

    def snapshot(self) -> DiskSnapshot:
        """Free, used and held bytes read together: again while grading changed the
        filesystem during the walk (the used bytes differ before and after it)."""
        for _ in range(50):
            first = os.statvfs(self.path)
            free, used, held, files = self._read()
            last = os.statvfs(self.path)
            if (first.f_bfree, first.f_bavail) == (last.f_bfree, last.f_bavail):
                break
            time.sleep(0.05)
        return DiskSnapshot(free, used, held, files)


_MOUNTS: list[SmallDisk] = []
atexit.register(lambda: [disk.unmount() for disk in list(_MOUNTS)])


# --- HTTP -----------------------------------------------------------------------------------


def post_upload(port: int, token: str, archive: bytes, name: str, timeout: float = 300):
    """POST the archive to /api/uploads/: (HTTP status, answer as a dict)."""
    body, ctype = multipart_body({"metadata": METADATA}, "archive", name, archive)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(
            "POST",
            "/api/uploads/",
            body=body,
            headers={"Authorization": f"Token {token}", "Content-Type": ctype},
        )
        response = conn.getresponse()
        raw = response.read()
    finally:
        conn.close()
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = {"raw": raw[:300].decode(errors="replace")}
    return response.status, answer


def http_answers(port: int, token: str) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/api/uploads/999999999/", headers={"Authorization": f"Token {token}"})
        return conn.getresponse().status in (200, 404)
    finally:
        conn.close()


def post_answer_early(port: int, token: str, body: bytes, ctype: str, timeout: float = 120):
    """POST /api/uploads/ over a raw socket, the body sent by a thread while the answer is
    read, as a browser does: a refusal sent before the body is read is seen. (status, 0 when
    no answer came; answer's body; bytes of the body sent; how the sending ended)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    state = {"sent": 0, "ended": "sent it all"}

    def send() -> None:
        try:
            for offset in range(0, len(body), SlowSender.CHUNK):
                sock.sendall(body[offset : offset + SlowSender.CHUNK])
                state["sent"] = min(len(body), offset + SlowSender.CHUNK)
        except OSError as exc:
            state["ended"] = f"{type(exc).__name__} after the answer"

    raw = b""
    try:
        sock.sendall(
            f"POST /api/uploads/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Token {token}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        )
        sender = threading.Thread(target=send, name="body-sender", daemon=True)
        sender.start()
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                raw += chunk
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sender.join(timeout=timeout)
    finally:
        sock.close()
    head, _, answer = raw.partition(b"\r\n\r\n")
    match = re.match(rb"HTTP/1\.[01] (\d{3})", head)
    return (int(match.group(1)) if match else 0), answer, state["sent"], state["ended"]


class SlowSender(threading.Thread):
    """Sends an upload request over a raw socket in chunks, slowly once ``mark`` of the
    body is out (then sets ``reached``), so that a kill lands while the body is sent."""

    CHUNK = 256 * 1024

    def __init__(self, port: int, token: str, archive: bytes, name: str, mark: float = 0.3):
        super().__init__(name="slow-sender", daemon=True)
        self.port, self.token, self.mark = port, token, mark
        self.body, self.ctype = multipart_body({"metadata": METADATA}, "archive", name, archive)
        self.sent = 0
        self.reached = threading.Event()
        self.outcome = ""

    def run(self) -> None:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=30) as sock:
                head = (
                    f"POST /api/uploads/ HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                    f"Authorization: Token {self.token}\r\nContent-Type: {self.ctype}\r\n"
                    f"Content-Length: {len(self.body)}\r\nConnection: close\r\n\r\n"
                )
                sock.sendall(head.encode())
                for offset in range(0, len(self.body), self.CHUNK):
                    sock.sendall(self.body[offset : offset + self.CHUNK])
                    self.sent = min(len(self.body), offset + self.CHUNK)
                    if self.sent >= self.mark * len(self.body):
                        self.reached.set()
                        time.sleep(0.02)
                answer = sock.recv(200)
                self.outcome = f"answered: {answer[:60]!r}" if answer else "closed, no answer"
        except OSError as exc:
            self.outcome = f"{type(exc).__name__}: {exc}"
        finally:
            self.reached.set()


# --- one site: database, broker, web, worker, beat ------------------------------------------


@dataclass
class DrillResult:
    drill: str
    backend: str
    skipped: str = ""
    uploads: list[tuple] = field(default_factory=list)
    runs_expected: int = 0
    uploads_expected: int = 1
    runs: dict[str, int] = field(default_factory=dict)
    bad_reports: list[tuple] = field(default_factory=list)
    seconds_to_graded: float | None = None
    sweeps_active: int = 0
    sweeps_logged: int = 0
    spool_left: int | None = None
    django_tmp_left: int | None = None
    disk_before: DiskSnapshot | None = None
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    var_dir: str = ""


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
            if proc in _STARTED:
                _STARTED.remove(proc)
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


# --- the drills -----------------------------------------------------------------------------


def wait_runs(site: Site, status: str, at_least: int = 1, timeout: float = 120) -> dict:
    return wait_for(
        f"{at_least} run(s) {status}",
        lambda: (c := site.db.run_counts()).get(status, 0) >= at_least and c,
        timeout,
        every=0.1,
    )


def drill_worker(site: Site, result: DrillResult) -> float:
    archive, runs = build_archive(site.data, seeds=site.args.seeds, salt="worker")
    result.runs_expected = runs
    site.upload(archive, "drill-worker.zip")
    counts = wait_runs(site, "running")
    site.worker.kill()
    result.notes.append(f"worker group SIGKILLed with runs {counts}")
    log(f"worker SIGKILLed (pid group {site.worker.popen.pid}); runs then: {counts}")
    time.sleep(3)
    site.start_worker()
    log("worker restarted")
    return time.monotonic()


def drill_broker(site: Site, result: DrillResult) -> float:
    archive, runs = build_archive(site.data, seeds=site.args.seeds, salt="broker")
    result.runs_expected = runs
    site.upload(archive, "drill-broker.zip")
    counts = wait_runs(site, "graded")
    site.redis.kill()
    result.notes.append(f"redis SIGKILLed for {site.args.broker_down:.0f} s with runs {counts}")
    log(f"redis-server SIGKILLed; runs then: {counts}; down for {site.args.broker_down} s")
    time.sleep(site.args.broker_down)
    log(f"runs while the broker was down: {site.db.run_counts()}")
    site.start_redis()
    log("redis-server restarted (empty)")
    return time.monotonic()


def drill_web(site: Site, result: DrillResult) -> float:
    archive, runs = build_archive(
        site.data, seeds=site.args.seeds, salt="web", pad_bytes=int(site.args.pad_mb * 1024**2)
    )
    result.runs_expected = runs
    sender = SlowSender(site.port, site.token, archive, "drill-web.zip")
    sender.start()
    if not sender.reached.wait(timeout=60):
        raise DrillAbort("the slow upload never got under way")
    sent_at_kill = sender.sent
    site.web.kill()
    sender.join(timeout=60)
    total = len(sender.body)
    log(
        f"gunicorn SIGKILLed with {sent_at_kill / 1e6:.1f} of {total / 1e6:.1f} MB of the body "
        f"sent; sender: {sender.outcome}"
    )
    result.notes.append(
        f"gunicorn SIGKILLed at {sent_at_kill / 1e6:.1f}/{total / 1e6:.1f} MB sent "
        f"({sender.outcome})"
    )
    if sent_at_kill >= total:
        result.failures.append("drill: the kill did not land while the body was being sent")
    rows = site.db.uploads()
    result.notes.append(f"upload rows after the kill: {len(rows)}")
    site.start_web()
    restarted = time.monotonic()
    log("gunicorn restarted; sending the same archive again")
    answer = site.upload(archive, "drill-web.zip")
    result.notes.append(
        f"re-send: duplicate={answer.get('duplicate')} resumed={answer.get('resumed')} "
        f"id={answer.get('id')}"
    )
    return restarted


def probe(port: int, method: str, path: str, token: str = "", body: bytes = b"", ctype=""):
    """(status, Retry-After) of one request; status 0 for a broken connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Token {token}"} if token else {}
    if ctype:
        headers["Content-Type"] = ctype
    try:
        conn.request(method, path, body=body or None, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("Retry-After")
    except (OSError, http.client.HTTPException):
        return 0, None
    finally:
        conn.close()


def drill_database(site: Site, result: DrillResult) -> float:
    archive, runs = build_archive(site.data, seeds=site.args.seeds, salt="database")
    result.runs_expected = runs
    answer = site.upload(archive, "drill-database.zip")
    anonymous = ["/", "/api/leaderboard/"]
    # Into the page cache of each gunicorn worker (each keeps its own copies when no Redis
    # holds the pages): asked four at a time, while the first renders the others wait for
    # another worker.
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for path in anonymous * 2:
            list(pool.map(probe, [site.port] * 4, ["GET"] * 4, [path] * 4))
    counts = wait_runs(site, "graded")
    site.pg.stop()
    log(f"PostgreSQL stopped; runs then: {counts}; down for {site.args.database_down} s")
    extra, _ = build_archive(site.data, seeds=1, salt="database-during")
    body, ctype = multipart_body({"metadata": METADATA}, "archive", "during.zip", extra)
    asks = [("GET", path, "", b"", "") for path in anonymous + ["/api/experiments/"]] + [
        ("GET", f"/api/uploads/{answer.get('id')}/", site.token, b"", ""),
        ("POST", "/api/uploads/", site.token, body, ctype),
    ]
    seen: dict[tuple[str, int], int] = {}
    bad: list[str] = []
    down_until = time.monotonic() + site.args.database_down
    while time.monotonic() < down_until:
        for method, path, token, data, kind in asks:
            status, retry_after = probe(site.port, method, path, token, data, kind)
            name = f"{method} {path.split('?')[0]}"
            seen[(name, status)] = seen.get((name, status), 0) + 1
            if status not in (200, 503) or (status == 503 and not retry_after):
                bad.append(f"{name}: {status} (Retry-After {retry_after})")
        time.sleep(0.5)  # a client's pace, not a flood
    answers = ", ".join(f"{name} {status} x{n}" for (name, status), n in sorted(seen.items()))
    log(f"answers while the database was away: {answers}")
    result.notes.append(f"while away: {answers}")
    if bad:
        result.failures.append(
            f"{len(bad)} answer(s) neither a cached page nor a 503 with Retry-After: "
            + "; ".join(sorted(set(bad))[:10])
        )
    site.pg.start()
    log("PostgreSQL started again")
    return time.monotonic()


def drill_disk(site: Site, result: DrillResult) -> float:
    args, disk = site.args, site.disk
    archive, runs = build_archive(site.data, seeds=args.seeds, salt="disk")
    result.runs_expected = runs
    result.uploads_expected = 1 + args.after_uploads
    site.upload(archive, "drill-disk.zip")
    counts = wait_runs(site, "running")
    before = disk.snapshot()
    result.disk_before = before
    big, _ = build_archive(site.data, seeds=1, salt="disk-big", pad_bytes=int(args.big_mb * 1e6))
    body, ctype = multipart_body({"metadata": METADATA}, "archive", "drill-disk-big.zip", big)
    log(
        f"runs {counts}; {before.free / MiB:.2f} MiB free; posting {len(body) / 1e6:.1f} MB "
        f"to a {args.disk_mib} MiB filesystem"
    )
    status, answer, sent, ended = post_answer_early(site.port, site.token, body, ctype)
    after = disk.snapshot()
    message = answer[:160].decode(errors="replace")
    log(f"big upload: {status} after {sent / 1e6:.1f} of {len(body) / 1e6:.1f} MB sent: {message}")
    result.notes.append(
        f"big upload ({len(body) / 1e6:.1f} MB): {status or 'no answer'} with "
        f"{sent / 1e6:.1f} MB of it sent ({ended}): {message}"
    )
    if status != 507:
        result.failures.append(f"the big upload was answered {status or 'nothing'}, not 507")
    elif b"storage" not in answer:
        result.failures.append(f"the 507 says nothing of the storage: {message}")
    grown = after.held - before.held
    result.notes.append(
        f"free space: {before.free / MiB:.2f} MiB before the big upload, "
        f"{after.free / MiB:.2f} MiB after its refusal (files grading wrote meanwhile: "
        f"{grown / MiB:+.2f} MiB)"
    )
    if after.free < before.free - max(grown, 0) - DISK_SLACK:
        result.failures.append(
            f"free space not back after the refusal: {before.free} B before, {after.free} B "
            f"after, of which the files written meanwhile take {grown} B"
        )
    check_disk(site, result, before, after, "after the refusal")
    fill_at_once(site, result)
    for number in range(args.after_uploads):
        extra, n = build_archive(site.data, seeds=1, salt=f"disk-after-{number}")
        result.runs_expected += n
        site.upload(extra, f"drill-disk-after-{number}.zip")  # raises unless 202
    return time.monotonic()


def fill_at_once(site: Site, result: DrillResult) -> None:
    """``--fill-uploads`` uploads at once, each 0.4 of the room above the margin: together
    they do not fit. Each must be answered 202 or 507; the accepted ones are graded."""
    count = site.args.fill_uploads
    if count < 1:
        return
    space = site.disk.snapshot()
    size = int(0.4 * (space.free - site.args.disk_min_free))
    bodies = []
    for number in range(count):
        archive, runs = build_archive(
            site.data, seeds=1, salt=f"disk-fill-{number}", pad_bytes=size
        )
        body = multipart_body(
            {"metadata": METADATA}, "archive", f"drill-disk-fill-{number}.zip", archive
        )
        bodies.append((body, runs))
    start = threading.Barrier(count)
    answers: list[tuple] = [()] * count

    def send(number: int) -> None:
        (body, ctype), _runs = bodies[number]
        start.wait()
        answers[number] = post_answer_early(site.port, site.token, body, ctype)

    threads = [threading.Thread(target=send, args=(n,), daemon=True) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    statuses = []
    for number, answer in enumerate(answers):
        status, text, sent, _ended = answer or (0, b"", 0, "")
        (body, _ctype), runs = bodies[number]
        whole = "whole body sent" if sent >= len(body) else f"{sent / 1e6:.1f} MB sent"
        statuses.append(f"{status or 'no answer'} ({whole})")
        if status == 202:
            result.uploads_expected += 1
            result.runs_expected += runs
        elif status != 507:
            result.failures.append(
                f"an upload filling the disk got {status or 'no answer'}, not 202 or 507: "
                f"{text[:160].decode(errors='replace')}"
            )
    log(f"{count} uploads of {size / MiB:.1f} MiB at once: {', '.join(statuses)}")
    refused = [f"drill-disk-fill-{n}.zip" for n, a in enumerate(answers) if a and a[0] == 507]
    now = site.disk.snapshot()
    left = sorted(path for path in now.files if path.endswith(tuple(refused)))
    if left:
        result.failures.append(f"refused uploads left files in the media folder: {left}")
    check_disk(site, result, result.disk_before, now, "after the uploads at once", big=False)
    result.notes.append(f"{count} uploads of {size / MiB:.1f} MiB at once: {', '.join(statuses)}")
    if not any(a and a[0] == 507 for a in answers):
        result.failures.append("drill: the uploads at once all fit, the disk never filled")


def check_disk(
    site: Site,
    result: DrillResult,
    before: DiskSnapshot,
    now: DiskSnapshot,
    when: str,
    big: bool = True,
) -> None:
    """No partial file in the media folder (with ``big``: no new file of 1 MiB or more,
    which only accepted uploads of ``--fill-uploads`` may add), no space held by a removed
    file, no 500."""
    new_big = sorted(
        f"{path} ({size / MiB:.1f} MiB)"
        for path, size in now.files.items()
        if big and size >= MiB and before.files.get(path) != size
    )
    if new_big:
        result.failures.append(f"{when}: a file of 1 MiB or more appeared: {new_big}")
    incoming = sorted(path for path in now.files if path.startswith("incoming/"))
    if incoming:
        result.failures.append(f"{when}: files left in incoming/: {incoming[:5]}")
    if now.unaccounted > before.unaccounted + DISK_SLACK:
        result.failures.append(
            f"{when}: the filesystem holds {now.unaccounted / MiB:.2f} MiB no file accounts "
            f"for ({before.unaccounted / MiB:.2f} MiB before): a removed file still open"
        )
    access = site.logs / ACCESS_LOG
    codes: dict[str, int] = {}
    if access.exists():
        for match in re.finditer(r'" (\d{3}) ', access.read_text(errors="replace")):
            codes[match.group(1)] = codes.get(match.group(1), 0) + 1
    errors = {code: n for code, n in codes.items() if code >= "500" and code != "507"}
    if errors:
        result.failures.append(f"{when}: answers of 500 or above (507 aside): {errors}")
    result.notes.append(
        f"{when}: {now.free / MiB:.2f} MiB free, {now.unaccounted / 1024:.0f} KiB held by no "
        f"file, {len(now.files)} files, answers {dict(sorted(codes.items()))}"
    )


def after_disk(site: Site, result: DrillResult) -> None:
    end = site.disk.snapshot()
    big = not site.args.fill_uploads
    check_disk(site, result, result.disk_before, end, "at the end", big=big)


DRILL_FUNCS = {
    "worker": drill_worker,
    "broker": drill_broker,
    "web": drill_web,
    "database": drill_database,
    "disk": drill_disk,
}
# Checks after every upload is graded, for the drills that have them.
AFTER_FUNCS = {"disk": after_disk}


def finish(site: Site, result: DrillResult, restarted: float) -> None:
    """Wait for every upload to be graded, then check and record the invariants."""
    deadline = restarted + site.args.deadline
    last = None
    while True:
        uploads = site.db.uploads()
        states = [u[1] for u in uploads]
        if uploads and all(s == "graded" for s in states):
            result.seconds_to_graded = time.monotonic() - restarted
            break
        snapshot = (tuple(states), tuple(sorted(site.db.run_counts().items())))
        if snapshot != last:
            log(f"uploads {list(snapshot[0])}, runs {dict(snapshot[1])}")
            last = snapshot
        if time.monotonic() > deadline:
            result.failures.append(
                f"not every upload graded {site.args.deadline:.0f} s after the last restart: "
                f"{states}"
            )
            break
        time.sleep(1)
    # Let figures and the last sweep settle before reading the end state.
    time.sleep(2)
    check(site, result)
    wait_spool(site, result)


def check(site: Site, result: DrillResult) -> None:
    result.uploads = [(u[0], u[1]) for u in site.db.uploads()]
    result.runs = site.db.run_counts()
    reports = site.db.current_reports()
    result.bad_reports = [(run_id, n) for run_id, _status, n in reports if n != 1]
    total = sum(result.runs.values())
    graded = result.runs.get("graded", 0)
    failed = result.runs.get("failed", 0)
    if len(result.uploads) != result.uploads_expected:
        result.failures.append(
            f"expected {result.uploads_expected} upload(s), found {len(result.uploads)}"
        )
    for pk, status in result.uploads:
        if status != "graded":
            error = next((u[3] for u in site.db.uploads() if u[0] == pk), "")
            result.failures.append(f"upload {pk} is {status} ({error[:200]})")
    if total != result.runs_expected:
        result.failures.append(f"{total} runs, expected {result.runs_expected}")
    if graded != total or failed:
        result.failures.append(f"runs not all graded: {result.runs}")
    if result.bad_reports:
        shown = ", ".join(f"run {r}: {n}" for r, n in result.bad_reports[:10])
        result.failures.append(
            f"{len(result.bad_reports)} run(s) without exactly one current report ({shown})"
        )
    result.sweeps_active, result.sweeps_logged = site.sweeps()
    result.django_tmp_left = sum(1 for p in site.tmp.iterdir() if p.is_file())


def wait_spool(site: Site, result: DrillResult) -> None:
    """Spool files are removed by the sweeper once idle for max(STALE, 300) s: if any
    remain, wait (at most ``--spool-wait-max`` s) until that window and a sweep passed."""
    spool = site.spool_files()
    if spool and site.args.spool_wait_max > 0:
        window = max(site.args.stale_after, 300) + 2 * site.args.reaper_interval + 2
        newest = max(p.stat().st_mtime for p in spool if p.exists()) if spool else time.time()
        wait = min(site.args.spool_wait_max, max(0.0, newest + window - time.time()))
        log(f"{len(spool)} spool file(s) in the media root; waiting {wait:.0f} s for clean-up")
        time.sleep(wait)
        spool = site.spool_files()
    result.spool_left = len(spool)


def run_drill(args, drill: str) -> DrillResult:
    result = DrillResult(drill=drill, backend=args.backend)
    if drill == "broker" and args.backend == "embedded":
        result.skipped = "no broker process (embedded filesystem broker under var/)"
        log(f"drill {drill}: skipped, {result.skipped}")
        return result
    if drill == "database" and args.backend == "embedded":
        result.skipped = "no database server to stop (SQLite is a file under var/)"
        log(f"drill {drill}: skipped, {result.skipped}")
        return result
    if drill == "disk" and (refusal := SmallDisk.cannot_mount()):
        result.skipped = refusal
        log(f"drill {drill}: skipped, {refusal}")
        return result
    log(f"=== drill {drill} ({args.backend}) ===")
    site = Site(args, drill)
    result.var_dir = str(site.var)
    try:
        site.setup()
        site.start_all()
        restarted = DRILL_FUNCS[drill](site, result)
        finish(site, result, restarted)
        if drill in AFTER_FUNCS:
            AFTER_FUNCS[drill](site, result)
    except Exception as exc:  # a time-out, a process that exited, a refused upload
        result.failures.append(f"drill aborted: {type(exc).__name__}: {exc}")
        with contextlib.suppress(Exception):
            check(site, result)
    except BaseException:  # interrupted (Ctrl-C, SIGTERM): stop, keep the var dir, go on out
        log(f"drill {drill} interrupted; its var dir is kept: {site.var}")
        raise
    finally:
        site.stop()
    if result.failures:
        excerpt(site)
    elif not args.keep:
        shutil.rmtree(site.var, ignore_errors=True)
        result.var_dir = ""
    print_result(result)
    return result


def excerpt(site: Site) -> None:
    """Errors and tracebacks from the logs of a failed drill."""
    for path in sorted(site.logs.glob("*")):
        if path.name == ACCESS_LOG:
            continue
        lines = path.read_text(errors="replace").splitlines()
        hits = [
            line
            for line in lines
            if re.search(r"ERROR|CRITICAL|Traceback|Error:|WARNING/Main|sweep:", line)
            and "No hostname was supplied" not in line
        ]
        if hits:
            print(f"--- {path} ({len(hits)} notable lines, last 15) ---")
            for line in hits[-15:]:
                print(f"    {line[:240]}")


# --- output ---------------------------------------------------------------------------------


def print_result(r: DrillResult) -> None:
    if r.skipped:
        return
    print(f"--- drill {r.drill} ({r.backend}) ---")
    print(f"  uploads:                 {r.uploads}")
    total = sum(r.runs.values())
    print(
        f"  runs total/graded/failed: {total}/{r.runs.get('graded', 0)}/{r.runs.get('failed', 0)}"
        f" (expected {r.runs_expected}; all states {r.runs})"
    )
    print(f"  runs with != 1 current report: {len(r.bad_reports)}")
    secs = "-" if r.seconds_to_graded is None else f"{r.seconds_to_graded:.1f}"
    print(f"  seconds from last restart to all graded: {secs}")
    print(f"  sweeps that sent or took back work: {r.sweeps_active} (of {r.sweeps_logged} logged)")
    print(f"  upload-* spool files left in the media root: {r.spool_left}")
    print(f"  Django temporary upload files left (TMPDIR): {r.django_tmp_left}")
    for note in r.notes:
        print(f"  note: {note}")
    for failure in r.failures:
        print(f"  FAIL: {failure}")
    if r.var_dir:
        print(f"  var dir kept: {r.var_dir}")


def print_table(results: list[DrillResult]) -> None:
    header = (
        "drill",
        "backend",
        "upload",
        "runs",
        "graded",
        "failed",
        "!=1 current",
        "s to graded",
        "active sweeps",
        "spool left",
        "result",
    )
    rows = []
    for r in results:
        if r.skipped:
            rows.append((r.drill, r.backend, *(["-"] * 8), "skipped"))
            continue
        rows.append(
            (
                r.drill,
                r.backend,
                ",".join(status for _pk, status in r.uploads) or "-",
                str(sum(r.runs.values())),
                str(r.runs.get("graded", 0)),
                str(r.runs.get("failed", 0)),
                str(len(r.bad_reports)),
                "-" if r.seconds_to_graded is None else f"{r.seconds_to_graded:.1f}",
                str(r.sweeps_active),
                "-" if r.spool_left is None else str(r.spool_left),
                "FAIL" if r.failures else "ok",
            )
        )
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))
    for r in results:
        if r.skipped:
            print(f"{r.drill}: skipped, {r.skipped}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("pg-redis", "embedded"), default="pg-redis")
    parser.add_argument(
        "--drill", action="append", choices=DRILLS, help="run only these (repeatable)"
    )
    parser.add_argument("--seeds", type=int, default=3, help="run groups (x 4 competitions)")
    parser.add_argument("--stale-after", type=int, default=20, help="MLEBOARD_STALE_AFTER_S")
    parser.add_argument("--reaper-interval", type=int, default=5, help="MLEBOARD_REAPER_INTERVAL_S")
    parser.add_argument("--fault-delay", type=float, default=2.0, help="seconds per grading")
    parser.add_argument("--broker-down", type=float, default=15.0, help="seconds redis is down")
    parser.add_argument(
        "--database-down", type=float, default=20.0, help="seconds PostgreSQL is stopped"
    )
    parser.add_argument("--pad-mb", type=float, default=50.0, help="random log in drill web")
    parser.add_argument(
        "--disk-mib", type=int, default=24, help="size of the media folder's tmpfs (drill disk)"
    )
    parser.add_argument(
        "--disk-min-free",
        type=int,
        default=1024**2,
        help="MLEBOARD_MEDIA_MIN_FREE_BYTES in drill disk (bytes)",
    )
    parser.add_argument("--big-mb", type=float, default=40.0, help="the upload drill disk refuses")
    parser.add_argument(
        "--fill-uploads", type=int, default=0, help="uploads at once that fill it (drill disk)"
    )
    parser.add_argument(
        "--after-uploads", type=int, default=2, help="ordinary uploads after it (drill disk)"
    )
    parser.add_argument("--deadline", type=float, default=240.0, help="s after the last restart")
    parser.add_argument(
        "--spool-wait-max",
        type=float,
        default=330.0,
        help="most seconds to wait for the sweeper's spool clean-up (0: do not wait)",
    )
    parser.add_argument(
        "--database-url", default="postgresql://postgres@127.0.0.1:5432/mleboard_drill"
    )
    parser.add_argument("--redis-port", type=int, default=REDIS_PORT)
    parser.add_argument("--redis-server", default="redis-server")
    parser.add_argument("--bin", default=str(REPO / ".venv" / "bin"), help="the venv's bin")
    parser.add_argument("--keep", action="store_true", help="keep every drill's var dir")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    if args.big_mb * 1e6 <= args.disk_mib * 1024**2:
        parser.error("--big-mb must be more than the filesystem of --disk-mib can hold")

    signal.signal(signal.SIGTERM, _exit_on_signal)
    signal.signal(signal.SIGHUP, _exit_on_signal)
    started = time.monotonic()
    print(
        f"mleboard drill: backend {args.backend}, STALE_AFTER_S={args.stale_after}, "
        f"REAPER_INTERVAL_S={args.reaper_interval}, fault delay {args.fault_delay} s, "
        f"{args.seeds} seeds x 4 competitions",
        flush=True,
    )
    results = []
    try:
        for drill in args.drill or DRILLS:
            results.append(run_drill(args, drill))
    finally:
        stop_all()
    print_table(results)
    failed = [r for r in results if r.failures]
    print(f"\ntotal time: {time.monotonic() - started:.0f} s")
    print("ALL INVARIANTS HOLD" if not failed else f"FAILED: {', '.join(r.drill for r in failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
