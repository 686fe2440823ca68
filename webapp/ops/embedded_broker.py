"""The embedded broker of ``make run`` and the tests: kombu's filesystem transport, made safe
for several worker processes, beat and remote control at once.

Upstream (kombu 5.7) races in three places (celery/kombu#1551: a worker read an empty
message file, ``JSONDecodeError``, "Unrecoverable error"). Here a message is written under
a temporary name and renamed into the queue (never read half-written); a reader takes one
by renaming it within the broker's folder, which exactly one reader can do (no duplicate);
a fanout table is rewritten whole under a lock file and renamed into place (readers need
no lock). ``perf/broker_soak.py`` measures it (docs/benchmarks.md). Selected in the
settings for ``filesystem://`` (``CELERY_BROKER_TRANSPORT``).
"""

from __future__ import annotations

import fcntl
import os
import uuid
from contextlib import contextmanager
from pathlib import Path
from queue import Empty
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

# Files being written, and files taken by a reader: never matched as messages (``.msg``).
_TMP_SUFFIX = ".tmp"
_TAKEN_SUFFIX = ".taken"


def _write_atomically(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` whole, or is as it was: written beside it, then renamed."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}{_TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.rename(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# How long a worker told to stop may go on waiting for a message before it looks again.
_STOP_CHECK_S = 0.2


def _worker_stopping() -> bool:
    """This process is a Celery worker asked to stop (SIGTERM, Ctrl-C)."""
    from celery.worker import state

    return state.should_stop is not None or state.should_terminate is not None


class Channel(filesystem.Channel):
    @contextmanager
    def _exchange_lock(self, file: Path):
        lock = file.with_name(file.name + ".lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _read_table(self, file: Path) -> list:
        try:
            return [filesystem.exchange_queue_t(*q) for q in loads(file.read_text())]
        except FileNotFoundError:
            return []

    def get_table(self, exchange):
        file = self._exchange_file(exchange)
        try:
            return self._read_table(file)
        except OSError as exc:
            raise ChannelError(f"Cannot open {file}") from exc

    def _update_table(self, exchange, change) -> None:
        file = self._exchange_file(exchange)
        self.control_folder.mkdir(parents=True, exist_ok=True)
        try:
            with self._exchange_lock(file):
                queues = self._read_table(file)
                changed = change(queues)
                if changed is not None:
                    _write_atomically(file, str_to_bytes(dumps(changed)))
        except OSError as exc:
            raise ChannelError(f"Cannot open {file}") from exc

    def _queue_bind(self, exchange, routing_key, pattern, queue):
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")

        def add(queues):
            return None if entry in queues else [entry, *queues]

        self._update_table(exchange, add)

    def _delete(self, queue, exchange, routing_key, pattern, *args, **kwargs):
        # The virtual channel's own bookkeeping (the grandparent's), not the file's: the
        # table is rewritten below.
        super(filesystem.Channel, self)._delete(queue, exchange, routing_key, pattern)
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")

        def remove(queues):
            return [q for q in queues if q != entry] if entry in queues else None

        self._update_table(exchange, remove)

    def _put(self, queue, payload, **kwargs):
        """Put ``payload`` onto ``queue``: written whole before it is visible."""
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        try:
            _write_atomically(Path(self.data_folder_out) / name, str_to_bytes(dumps(payload)))
        except OSError as exc:
            raise ChannelError(f"Cannot add file {name!r} to directory") from exc

    def _get(self, queue):
        """Take the oldest message of ``queue``: the reader that renames it has it. A worker
        asked to stop takes none: what it would start, the next start does."""
        if _worker_stopping():
            raise Empty()
        wanted = f"{queue}.msg"
        folder = Path(self.data_folder_in)
        taken_dir = Path(self._taken_folder)
        for name in sorted(os.listdir(folder)):
            if name.partition(".")[2] != wanted:
                continue
            taken = taken_dir / f"{name}.{uuid.uuid4().hex}{_TAKEN_SUFFIX}"
            try:
                os.rename(folder / name, taken)
            except FileNotFoundError:  # another reader took it
                continue
            except OSError as exc:
                raise ChannelError(f"Cannot take {name!r} from the queue") from exc
            try:
                payload = taken.read_bytes()
            finally:
                taken.unlink(missing_ok=True)
            return loads(bytes_to_str(payload))
        raise Empty()

    @property
    def _taken_folder(self) -> str:
        """Where a reader moves a message it takes: the broker's own folder (the same file
        system as the queue, so the move is a rename)."""
        folder = self.transport_options.get("data_folder_processed") or os.path.join(
            self.data_folder_in, ".taken"
        )
        os.makedirs(folder, exist_ok=True)
        return folder


class Transport(filesystem.Transport):
    Channel = Channel
    global_state = filesystem.virtual.BrokerState()

    def drain_events(self, connection, timeout=None):
        """Wait up to ``timeout`` s for a message, as kombu does, but end the wait early,
        taking no message, once the worker is asked to stop. For a broker without a socket
        Celery waits 2 s at a time and looks for a stop request only between two waits:
        every stop of a worker would otherwise begin with up to 2 s of nothing, and could
        take a task to start after the stop was asked for."""
        if timeout is None:
            return super().drain_events(connection, timeout)
        deadline = monotonic() + timeout
        while True:
            left = deadline - monotonic()
            if _worker_stopping():
                raise TimeoutError()
            try:
                return super().drain_events(
                    connection, timeout=max(min(left, _STOP_CHECK_S), 0.001)
                )
            except TimeoutError:
                if left <= _STOP_CHECK_S or _worker_stopping():
                    raise
