"""The site's long-running processes, declared once: the web server, the grading worker,
the agent-runs worker and beat. ``make run``, compose.yaml and the Dockerfile all start
them from here, so a queue, a concurrency or a gunicorn option is written in one place.

    python -m webapp.ops.processes run NAME   # exec one process (compose, the Dockerfile)
    python -m webapp.ops.processes serve      # all of them under supervisord (make run)
    python -m webapp.ops.processes argv NAME  # print its command line
    python -m webapp.ops.processes announce PID  # "mleboard is up" once it answers (make run)

Under ``serve`` supervisord restarts any that dies; Ctrl-C or SIGTERM stops them all
(SIGKILL ``MLEBOARD_SHUTDOWN_GRACE_S`` + 3 s later), workers handing their work back.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from config import env

NAMES = ("web", "grading-worker", "runs-worker", "beat")
WORKERS = ("grading-worker", "runs-worker")
# Queues of the grading worker: grading and integrity checks, and the default queue.
GRADING_QUEUES = ("grading", "default")
# Seconds supervisord gives a process past the shutdown grace before it kills its group.
KILL_MARGIN_S = 3


def _program(name: str) -> str:
    """A program of this Python's environment (the venv's, the image's)."""
    found = Path(sys.executable).parent / name
    return str(found) if found.exists() else name


def log_dir() -> Path:
    return env("MLEBOARD_VAR_DIR") / "log"


def run_queues() -> list[str]:
    """The run queues this host's runs worker takes (needs the settings: GPUs)."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.project.settings")
    django.setup()
    from webapp.runs.hosts import run_queues as host_run_queues

    return host_run_queues()


def argv(name: str, *, logfile: bool = False) -> list[str]:
    """The command line of process ``name``. ``logfile``: the workers and beat write their
    log under ``var/log/`` (``make run``) instead of to stderr (compose)."""
    grace = env("MLEBOARD_SHUTDOWN_GRACE_S")
    celery = [_program("celery"), "-A", "webapp"]
    logs = log_dir()
    if name == "web":
        return [
            _program("gunicorn"),
            "webapp.project.wsgi:application",
            "--bind",
            f"{env('HOST')}:{env('PORT')}",
            "--workers",
            str(env("WEB_CONCURRENCY")),
            # Under make run its output is the terminal's (the mail it prints): the access
            # log goes to a file.
            "--access-logfile",
            str(logs / "web-access.log") if logfile else "-",
            "--timeout",
            "120",
            "--graceful-timeout",
            str(grace),
            # gunicorn 27 opens a control socket at ~/.gunicorn/gunicorn.ctl by default, one
            # path for every gunicorn of the user: a second one took it over, and stopping
            # either removed it. mleboard does not use it.
            "--no-control-socket",
            # Its start-up lines (worker class, one per worker booted) say nothing a person
            # acts on; ``make run`` prints the address. Warnings and errors still show.
            "--log-level",
            "warning",
        ]
    if name == "grading-worker":
        command = celery + [
            "worker",
            "-n",
            "grading@%h",
            "-Q",
            ",".join(GRADING_QUEUES),
            "--concurrency",
            str(env("WORKER_CONCURRENCY")),
            "--loglevel",
            "INFO",
        ]
        return command + (["--logfile", str(logs / "worker-grading.log")] if logfile else [])
    if name == "runs-worker":
        command = celery + [
            "worker",
            "-n",
            "runs@%h",
            "-Q",
            ",".join(run_queues()),
            "--concurrency",
            str(env("MLEBOARD_RUN_SLOTS")),
            "--loglevel",
            "INFO",
        ]
        return command + (["--logfile", str(logs / "worker-runs.log")] if logfile else [])
    if name == "beat":
        schedule = env("MLEBOARD_VAR_DIR") / "celerybeat-schedule"
        command = celery + ["beat", "--loglevel", "INFO", "--schedule", str(schedule)]
        return command + (["--logfile", str(logs / "beat.log")] if logfile else [])
    raise ValueError(f"no process {name!r}: one of {', '.join(NAMES)}")


def end_leftovers(name: str) -> None:
    """Kill what the last run of ``name`` left behind, then note this run's process group.

    supervisord starts each program in a process group of its own and, when the program
    dies, starts it again; but a gunicorn master killed with SIGKILL leaves its workers
    alive, still holding the port (a worker's pool and its local agents likewise). They are
    in the dead program's group: end that group before the new program starts."""
    import signal

    note = log_dir().parent / "run" / f"{name}.pgid"
    note.parent.mkdir(parents=True, exist_ok=True)
    try:
        old = int(note.read_text())
    except (OSError, ValueError):
        old = 0
    # Only a group that is still ours (its id may have been reused since).
    if old > 1 and old != os.getpgrp() and any("webapp" in c for c in _group_commands(old)):
        try:
            os.killpg(old, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    note.write_text(str(os.getpgrp()))


def _group_commands(pgid: int) -> list[str]:
    """The command lines of the processes in group ``pgid``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not (proc.name.isascii() and proc.name.isdigit()):
            continue
        try:
            if os.getpgid(int(proc.name)) == pgid:
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError):
            continue
    return found


def supervisord_conf() -> str:
    """supervisord's configuration for ``make run``: every process, restarted whenever it
    exits, its output in ``var/log/NAME.out``."""
    logs = log_dir()
    var = env("MLEBOARD_VAR_DIR")
    stop_wait = env("MLEBOARD_SHUTDOWN_GRACE_S") + KILL_MARGIN_S
    sections = [
        "[supervisord]",
        "nodaemon=true",
        f"logfile={logs / 'supervisord.log'}",
        "logfile_maxbytes=10MB",
        "logfile_backups=2",
        f"pidfile={var / 'supervisord.pid'}",
        # Its control socket is a file of this var dir, so several sites on one host (each
        # with its own var dir) never share one.
        "",
        "[unix_http_server]",
        f"file={var / 'supervisor.sock'}",
        "chmod=0700",
        "",
        "[rpcinterface:supervisor]",
        "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface",
        "",
        "[supervisorctl]",
        f"serverurl=unix://{var / 'supervisor.sock'}",
        "",
        # One group: supervisord stops the programs of a group together (groups one after
        # another), so Ctrl-C takes one grace period, not four.
        "[group:mleboard]",
        f"programs={','.join(NAMES)}",
    ]
    for name in NAMES:
        command = " ".join(
            shlex.quote(a) for a in (sys.executable, "-m", "webapp.ops.processes", "run", name)
        )
        sections += [
            "",
            f"[program:{name}]",
            # supervisord expands %(...)s: escape the % of Celery's %h.
            f"command={command.replace('%', '%%')}",
            "autostart=true",
            # Restarted whenever it exits, whatever the exit code; one that dies within 3 s
            # of starting is retried with a growing pause (1 s, 2 s, ...).
            "autorestart=true",
            "startsecs=3",
            "startretries=20",
            "stopsignal=TERM",
            f"stopwaitsecs={stop_wait}",
            # A Celery worker is asked to stop alone: it stops its pool itself. Its pool
            # processes told to stop as well die at once, one of them holding the lock of
            # the pool's task queue, and the worker then waits on that lock until it is
            # killed. gunicorn's workers and beat stop promptly when told with their master.
            f"stopasgroup={'false' if name in WORKERS else 'true'}",
            # Killed as a whole group: a worker's pool processes go with it.
            "killasgroup=true",
        ]
        if name == "web":
            # What the site prints is mail (the console backend): the person running make
            # run reads it on their terminal, supervisord's output. Its warnings and errors
            # (stderr) go to its log.
            sections += [
                "stdout_logfile=/dev/stdout",
                "stdout_logfile_maxbytes=0",
                f"stderr_logfile={logs / (name + '.out')}",
                "stderr_logfile_maxbytes=10MB",
                "stderr_logfile_backups=2",
            ]
        else:
            sections += [
                "redirect_stderr=true",
                f"stdout_logfile={logs / (name + '.out')}",
                "stdout_logfile_maxbytes=10MB",
                "stdout_logfile_backups=2",
            ]
    return "\n".join(sections) + "\n"


def _answer(url: str) -> int | None:
    """The HTTP status the site at ``url`` answers with; None while nothing answers."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def announce(site_pid: int, *, note_after_s: float = 60.0) -> int:
    """Print make run's "mleboard is up" line once the site answers at its address, not
    when its processes have merely been started; say once where to look if it has not
    answered after ``note_after_s``. Gives up when the site's supervisor (``site_pid``)
    is gone. Returns 0 once it printed the line."""
    import signal
    import time

    # Ctrl-C reaches it with the site: it ends quietly.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    host, port = env("HOST"), env("PORT")
    local = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    url = f"http://{f'[{local}]' if ':' in local else local}:{port}/"
    shown = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
    logs = log_dir()
    if logs.is_relative_to(Path.cwd()):
        logs = logs.relative_to(Path.cwd())
    started = time.monotonic()
    noted = False
    while _running(site_pid):
        status = _answer(url)
        if status is not None and status < 500:
            print(
                f"\nmleboard is up: {shown}   (logs: {logs}/; restarts in "
                f"{logs}/supervisord.log; Ctrl-C stops all)\n",
                flush=True,
            )
            return 0
        if not noted and time.monotonic() - started > note_after_s:
            print(
                f"mleboard has not answered at {shown} for {note_after_s:.0f} s yet: see "
                f"{logs}/web.out and {logs}/supervisord.log",
                flush=True,
            )
            noted = True
        # A site failing its pages logs each failure: asked less often then.
        time.sleep(0.5 if status is None else 5)
    return 1


def _append_to_output() -> None:
    """Make run's output written at its end, whoever writes it: supervisord writes its lines
    through this descriptor and the web's through one it opens again (``/dev/stdout``), so
    in a file (``make run > run.log``) each would write over the other's."""
    import fcntl

    try:
        flags = fcntl.fcntl(sys.stdout.fileno(), fcntl.F_GETFL)
        fcntl.fcntl(sys.stdout.fileno(), fcntl.F_SETFL, flags | os.O_APPEND)
    except (OSError, ValueError):
        pass


def main(args: list[str]) -> int:
    if len(args) == 2 and args[0] == "announce" and args[1].isascii() and args[1].isdecimal():
        return announce(int(args[1]))
    if len(args) == 2 and args[0] in ("run", "argv"):
        command = argv(args[1], logfile=env("MLEBOARD_LOG_TO_FILES"))
        if args[0] == "argv":
            print(shlex.join(command))
            return 0
        if env("MLEBOARD_LOG_TO_FILES"):  # under supervisord (make run)
            end_leftovers(args[1])
        os.execvp(command[0], command)
    if args == ["serve"]:
        log_dir().mkdir(parents=True, exist_ok=True)
        conf = env("MLEBOARD_VAR_DIR") / "supervisord.conf"
        conf.write_text(supervisord_conf(), encoding="utf-8")
        # Its children write their logs under var/log/ (they inherit this).
        os.environ["MLEBOARD_LOG_TO_FILES"] = "1"
        _append_to_output()
        supervisord = [_program("supervisord"), "-c", str(conf)]
        os.execvp(supervisord[0], supervisord)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
