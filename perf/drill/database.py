"""The drill's database: read-only queries on it (PostgreSQL or the SQLite file), a
PostgreSQL database dropped and created again, and a private cluster to stop and start."""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from .processes import free_port


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
