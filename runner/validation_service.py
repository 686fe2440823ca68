"""The validation service: "is my submission well formed?", answered outside the container.

It runs in the harness's process, on the host, next to the private answers it needs; the
agent reaches it only through a unix socket in a folder mounted into its container. It
implements MLE-bench's ``/validate`` contract and ``GET /health``, and says valid or the
reason - never a score. The agent is untrusted, so everything it can make the host spend
(threads, time, memory, work, rate) is bounded by ``ValidationLimits``, each settable by an
environment variable; every refusal is a JSON ``{"error", "details"}``. With a
``calls_path``, every answered call is recorded as one JSON line. The bounds and records
in full: docs/agents.md.
"""

from __future__ import annotations

import email.message
import email.parser
import email.policy
import http.client
import io
import json
import logging
import os
import queue
import selectors
import shutil
import socket
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from config import env, is_set
from runner.spec import VALIDATION_SOCKET_NAME

log = logging.getLogger(__name__)

# validator(submission_path, competition_id, data_dir) -> object with .valid and .message
Validator = Callable[[Path, str, Path], Any]

MiB = 1024**2
_CHUNK = MiB  # bytes read from the socket and written to disk at a time
_MAX_REQUEST_LINE = 8 * 1024
_MAX_PART_HEAD = 16 * 1024  # a multipart part's headers
_MAX_PREAMBLE = 64 * 1024  # bytes before the first multipart boundary
_MULTIPART_SLACK = 64 * 1024  # form overhead allowed on top of the submission's size
_MIN_BODY_RATE = MiB  # bytes a second a body must average (after the idle allowance)
MAX_RECORDED_CALLS = 10_000  # lines of the calls file (then one line saying so)
MAX_RECORDED_MESSAGE = 2_000  # characters of an answer kept per line


# What the agent learns of any failure of ours: nothing that could come from private data.
_FAILED = {
    "error": "An unexpected error occurred.",
    "details": "The validation service failed; this says nothing about your submission.",
}


def graders_validator(submission: Path, competition_id: str, data_dir: Path) -> Any:
    """The default validator: the competition's grader's schema check."""
    import graders

    return graders.validate_submission(submission, competition_id, data_dir)


@dataclass(frozen=True)
class ValidationLimits:
    """What one run's validation service may make the host spend.

    ``max_request_bytes`` defaults to 512 MiB, the size of the largest single file an upload
    may hold (``MLEBOARD_UPLOAD_MAX_FILE_BYTES``): MLE-bench's largest submissions (whole-
    slide RLE masks, H&M's recommendation lists) are a few hundred MB, so any submission
    mleboard can grade can be validated too, while a body is never held in memory anyway.
    """

    max_connections: int = 16
    max_request_bytes: int = 512 * MiB
    rate_per_minute: int = 30
    threads: int = 4
    idle_timeout_s: float = 10.0
    concurrent_validations: int = 2
    queue_wait_s: float = 30.0

    ENV = {
        "max_connections": "MLEBOARD_VALIDATION_MAX_CONNECTIONS",
        "max_request_bytes": "MLEBOARD_VALIDATION_MAX_REQUEST_BYTES",
        "rate_per_minute": "MLEBOARD_VALIDATION_RATE_PER_MINUTE",
        "threads": "MLEBOARD_VALIDATION_THREADS",
        "idle_timeout_s": "MLEBOARD_VALIDATION_IDLE_TIMEOUT_S",
        "concurrent_validations": "MLEBOARD_VALIDATION_CONCURRENCY",
        "queue_wait_s": "MLEBOARD_VALIDATION_QUEUE_WAIT_S",
    }

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if not value > 0:
                raise ValueError(f"validation limit {spec.name} must be positive; got {value!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ValidationLimits:
        """The defaults, overridden by the ``MLEBOARD_VALIDATION_*`` variables that are set.

        Raises ``ValueError`` naming the variable when one is not a positive number.
        """
        values: dict[str, Any] = {
            spec.name: env(cls.ENV[spec.name], environ)
            for spec in fields(cls)
            if is_set(cls.ENV[spec.name], environ)
        }
        return cls(**values)


@dataclass
class RateLimit:
    """At most ``burst`` requests in any window of ``60 * burst / per_minute`` seconds.

    A sliding window: with ``burst == per_minute`` (the service's default) it is exactly
    "at most N a minute"; a smaller ``burst`` spreads the same rate out.
    """

    burst: int = 5
    per_minute: float = 10.0

    def __post_init__(self) -> None:
        if self.burst < 1 or self.per_minute <= 0:
            raise ValueError("a rate limit needs burst >= 1 and per_minute > 0")
        self.window_s = 60.0 * self.burst / self.per_minute
        self._granted: deque[float] = deque()
        self._lock = threading.Lock()

    def take(self) -> float:
        """Take a slot; return 0 if granted, else the seconds until one is free."""
        with self._lock:
            now = time.monotonic()
            while self._granted and self._granted[0] <= now - self.window_s:
                self._granted.popleft()
            if len(self._granted) < self.burst:
                self._granted.append(now)
                return 0.0
            return max(self._granted[0] + self.window_s - now, 0.001)

    def describe(self) -> str:
        """``at most 30 validations per minute`` (or per the window, when it is not one)."""
        if abs(self.window_s - 60.0) < 1e-9:
            per = "minute"
        else:
            per = f"{self.window_s:g} seconds"
        return f"at most {self.burst} validation{'s' if self.burst != 1 else ''} per {per}"


class _Refusal(Exception):
    """A request answered with an error status (and nothing validated)."""

    def __init__(self, status: int, error: str, details: str = "", count: str = "") -> None:
        super().__init__(error)
        self.status = status
        self.payload = {"error": error, **({"details": details} if details else {})}
        self.count = count


class _DeadlineSocket(io.RawIOBase):
    """A socket's reading side that fails with ``TimeoutError`` past a deadline or after
    ``idle_s`` without data (whichever comes first). Past the deadline, data already
    waiting in the socket is still read (a request that queued for a worker is served)."""

    def __init__(self, sock: socket.socket, deadline: float, idle_s: float) -> None:
        self.sock = sock
        self.deadline = deadline
        self.idle_s = idle_s

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        remaining = self.deadline - time.monotonic()
        self.sock.settimeout(max(min(remaining, self.idle_s), 0.0))
        try:
            return self.sock.recv_into(buffer)
        except BlockingIOError:  # timeout 0: nothing waiting
            raise TimeoutError("no data before the deadline") from None


class _BodyReader:
    """At most ``length`` bytes of the request body (never reads past it)."""

    def __init__(self, reader: io.BufferedReader, length: int) -> None:
        self.reader = reader
        self.left = length

    def read(self, size: int = _CHUNK) -> bytes:
        if self.left <= 0:
            return b""
        data = self.reader.read1(min(size, self.left))
        self.left -= len(data)
        return data


class _Sink:
    """Where a part's bytes go: a file (counted against the limit) or nowhere."""

    def __init__(self, out: BinaryIO | None, limit: int) -> None:
        self.out = out
        self.limit = limit
        self.written = 0

    def write(self, data: bytes | bytearray) -> None:
        if self.out is None or not data:
            return
        self.written += len(data)
        if self.written > self.limit:
            raise _too_large(self.limit)
        self.out.write(data)


def _too_large(limit: int) -> _Refusal:
    return _Refusal(
        413,
        f"Submission larger than the limit of {_size(limit)}.",
        f"At most {limit} bytes are accepted.",
        count="too_large",
    )


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", MiB), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} bytes"


def _bad_form() -> _Refusal:
    return _Refusal(
        400,
        "Send the submission as multipart form field `file`.",
        "For example: curl -F file=@submission.csv (or use validate_submission.sh).",
        count="bad_request",
    )


def _boundary(content_type: str) -> str | None:
    message = email.message.Message()
    message["Content-Type"] = content_type
    boundary = message.get_param("boundary")
    return boundary if isinstance(boundary, str) and 0 < len(boundary) <= 200 else None


class _MultipartStream:
    """Streams the ``file`` part of a ``multipart/form-data`` body into a sink.

    Memory stays within a chunk plus the boundary whatever the body's size; only the first
    ``file`` part is kept, and reading stops once it has been written.
    """

    def __init__(self, body: _BodyReader, boundary: str) -> None:
        self.body = body
        self.delimiter = b"--" + boundary.encode("latin-1")
        self.buffer = bytearray()

    def _fill(self) -> bool:
        data = self.body.read()
        self.buffer += data
        return bool(data)

    def _read_until(self, marker: bytes, limit: int) -> bytes:
        """Bytes up to ``marker`` (consumed and dropped); 400 past ``limit`` or at the end."""
        start = 0
        while True:
            index = self.buffer.find(marker, start)
            if index >= 0:
                found = bytes(self.buffer[:index])
                del self.buffer[: index + len(marker)]
                return found
            if len(self.buffer) > limit:
                raise _bad_form()
            start = max(len(self.buffer) - len(marker) + 1, 0)
            if not self._fill():
                raise _bad_form()

    def _copy_until(self, marker: bytes, sink: _Sink) -> None:
        """Write everything before ``marker`` to ``sink``; ``marker`` is consumed."""
        keep = len(marker) - 1
        while True:
            index = self.buffer.find(marker)
            if index >= 0:
                sink.write(self.buffer[:index])
                del self.buffer[: index + len(marker)]
                return
            if len(self.buffer) > keep:
                cut = len(self.buffer) - keep
                sink.write(self.buffer[:cut])
                del self.buffer[:cut]
            if not self._fill():
                raise _bad_form()  # the form ends inside a part

    def _need(self, n: int) -> None:
        while len(self.buffer) < n and self._fill():
            pass

    def extract_file(self, out: BinaryIO, limit: int) -> None:
        """Write the ``file`` part's content to ``out``; refuse a form without one."""
        self._read_until(self.delimiter, _MAX_PREAMBLE)
        while True:
            self._need(2)
            if self.buffer[:2] == b"--":  # the closing delimiter: no file part
                raise _bad_form()
            self._read_until(b"\r\n", _MAX_PART_HEAD)  # transport padding, then CRLF
            self._need(2)
            if self.buffer[:2] == b"\r\n":  # a part without headers
                del self.buffer[:2]
                head = b""
            else:
                head = self._read_until(b"\r\n\r\n", _MAX_PART_HEAD)
            part = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + b"\r\n\r\n")
            is_file = part.get_param("name", header="content-disposition") == "file"
            sink = _Sink(out if is_file else None, limit)
            self._copy_until(b"\r\n" + self.delimiter, sink)
            if is_file:
                return


def _http_response(status: int, payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    reason = http.client.responses.get(status, "")
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Server: mleboard-validation/2\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body


class ValidationService:
    """Serves ``/validate`` for one competition on a unix socket in ``socket_dir``.

    Use as a context manager (or ``start()``/``stop()``). ``socket_dir`` is created if
    needed and is what gets mounted into the container; the socket is world-connectable
    because the agent runs as another user. ``limits`` default to
    ``ValidationLimits.from_env()``; ``max_bytes`` and ``rate_limit`` override its size and
    rate bounds. ``counts`` tells how many requests were answered, rate-limited, too large
    or failed, and (once they happen) refused as busy, timed out or malformed.
    ``calls_path`` (default ``None``: not recorded) is where each validation call is
    appended as a JSON line (see the module's docstring).
    """

    def __init__(
        self,
        competition_id: str,
        data_dir: Path,
        socket_dir: Path,
        *,
        validator: Validator | None = None,
        limits: ValidationLimits | None = None,
        max_bytes: int | None = None,
        rate_limit: RateLimit | None = None,
        calls_path: Path | None = None,
        max_recorded_calls: int = MAX_RECORDED_CALLS,
    ) -> None:
        self.competition_id = competition_id
        self.data_dir = Path(data_dir)
        self.socket_dir = Path(socket_dir)
        self.validator = validator or graders_validator
        self.limits = limits or ValidationLimits.from_env()
        self.max_bytes = max_bytes if max_bytes is not None else self.limits.max_request_bytes
        self.rate_limit = rate_limit or RateLimit(
            burst=self.limits.rate_per_minute, per_minute=self.limits.rate_per_minute
        )
        self.counts = {"answered": 0, "rate_limited": 0, "too_large": 0, "errors": 0}
        self._counts_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(self.limits.concurrent_validations)
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        self._queue: queue.Queue[tuple[socket.socket, float] | None] = queue.Queue()
        self._listener: socket.socket | None = None
        self._wakeup: tuple[socket.socket, socket.socket] | None = None
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._scratch: Path | None = None
        self.calls_path = Path(calls_path) if calls_path is not None else None
        self.max_recorded_calls = max_recorded_calls
        self._calls_lock = threading.Lock()
        self._calls_recorded = 0
        self._calls_capped = False
        self._started_at = time.monotonic()

    @property
    def socket_path(self) -> Path:
        return self.socket_dir / VALIDATION_SOCKET_NAME

    @property
    def open_connections(self) -> int:
        with self._open_lock:
            return len(self._open)

    def count(self, key: str) -> None:
        with self._counts_lock:
            self.counts[key] = self.counts.get(key, 0) + 1

    def record_call(self, status: int, payload: dict, size: int | None) -> None:
        """Append one call to ``calls_path`` (if any): bounded, thread-safe, never raising."""
        if self.calls_path is None:
            return
        valid = payload.get("valid")
        message = payload.get("result")
        if message is None:
            message = " ".join(str(payload[k]) for k in ("error", "details") if k in payload)
        entry = {
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "elapsed_s": round(time.monotonic() - self._started_at, 3),
            "status": status,
            "valid": valid if isinstance(valid, bool) else None,
            "message": str(message)[:MAX_RECORDED_MESSAGE],
            "bytes": size,
        }
        with self._calls_lock:
            if self._calls_capped:
                return
            if self._calls_recorded >= self.max_recorded_calls:
                self._calls_capped = True
                entry.update(
                    status=None,
                    valid=None,
                    bytes=None,
                    message=f"Only the first {self.max_recorded_calls} validation calls are "
                    "recorded; later calls are not.",
                )
            try:
                with self.calls_path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(entry) + "\n")
            except OSError:
                log.warning("validation service: cannot record a call", exc_info=True)
                return
            self._calls_recorded += 1

    # --- validation ---------------------------------------------------------------------

    def answer_file(self, path: Path) -> tuple[int, dict]:
        """Validate the submission at ``path``; return (HTTP status, JSON answer, no score)."""
        try:
            result = self.validator(path, self.competition_id, self.data_dir)
        except Exception:
            # Infrastructure (e.g. answers missing): say so without details that could
            # leak anything about the private data.
            log.exception("validation of a %s submission failed", self.competition_id)
            self.count("errors")
            return 500, dict(_FAILED)
        self.count("answered")
        return 200, {"result": str(result.message), "valid": bool(result.valid)}

    # --- serving --------------------------------------------------------------------------

    def start(self) -> ValidationService:
        """Bind the socket and serve: one accepting thread and ``limits.threads`` workers."""
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.socket_dir, 0o755)
        self.socket_path.unlink(missing_ok=True)
        self._scratch = Path(tempfile.mkdtemp(prefix="mleboard-validate-"))
        self._started_at = time.monotonic()
        self._stopping.clear()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.socket_path))
        os.chmod(self.socket_path, 0o666)  # the agent's user must be able to connect
        listener.listen(128)
        listener.setblocking(False)
        self._listener = listener
        self._wakeup = socket.socketpair()
        self._threads = [
            threading.Thread(target=self._accept_loop, name="validation-accept", daemon=True)
        ]
        self._threads += [
            threading.Thread(target=self._worker, name=f"validation-{i}", daemon=True)
            for i in range(self.limits.threads)
        ]
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections, remove the socket and scratch files."""
        self._stopping.set()
        if self._wakeup is not None:
            self._wakeup[1].send(b"x")
        for _ in range(self.limits.threads):
            self._queue.put(None)
        with self._open_lock:
            for conn in self._open:
                try:
                    conn.shutdown(socket.SHUT_RDWR)  # wakes a worker blocked on it
                except OSError:
                    pass
        give_up = time.monotonic() + 5
        for thread in self._threads:
            thread.join(timeout=max(give_up - time.monotonic(), 0.01))
        self._threads = []
        while True:  # connections still queued (workers gone)
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self._close(item[0])
        for sock in (self._listener, *(self._wakeup or ())):
            if sock is not None:
                sock.close()
        self._listener = self._wakeup = None
        self.socket_path.unlink(missing_ok=True)
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self) -> ValidationService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept_loop(self) -> None:
        assert self._listener is not None and self._wakeup is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            selector.register(self._wakeup[0], selectors.EVENT_READ)
            while True:
                ready = [key.fileobj for key, _ in selector.select()]
                if self._wakeup[0] in ready:
                    return
                while True:  # everything waiting in the backlog
                    try:
                        conn, _ = self._listener.accept()
                    except (BlockingIOError, InterruptedError):
                        break
                    except OSError:
                        log.warning("validation service: accept failed", exc_info=True)
                        break
                    self._admit(conn)

    def _admit(self, conn: socket.socket) -> None:
        with self._open_lock:
            full = len(self._open) >= self.limits.max_connections
            if not full:
                self._open.add(conn)
        if not full:
            self._queue.put((conn, time.monotonic()))
            return
        # Answered and closed right here, without reading: never blocks, never a thread.
        self.count("busy")
        payload = {
            "error": "Validation service busy.",
            "details": f"At most {self.limits.max_connections} connections at once; "
            "retry in a few seconds.",
        }
        self.record_call(503, payload, None)
        response = _http_response(503, payload)
        try:
            conn.setblocking(False)
            conn.send(response)
        except OSError:
            pass
        conn.close()

    def _close(self, conn: socket.socket) -> None:
        with self._open_lock:
            self._open.discard(conn)
        try:
            conn.close()
        except OSError:
            pass

    def _worker(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            conn, accepted_at = item
            try:
                self._serve(conn, accepted_at)
            except Exception:
                log.exception("validation service: a request failed")
            finally:
                self._close(conn)

    def _send(self, conn: socket.socket, status: int, payload: dict) -> None:
        try:
            conn.settimeout(self.limits.idle_timeout_s)
            conn.sendall(_http_response(status, payload))
        except OSError:
            pass  # the agent went away

    def _serve(self, conn: socket.socket, accepted_at: float) -> None:
        idle = self.limits.idle_timeout_s
        raw = _DeadlineSocket(conn, accepted_at + idle, idle)
        reader = io.BufferedReader(raw, buffer_size=_CHUNK)
        # What is known of the request: a /validate call (None: unknown yet) and its size.
        call: dict[str, Any] = {"validate": None, "bytes": None}
        try:
            status, payload = self._respond(raw, reader, call)
        except _Refusal as refusal:
            if refusal.count:
                self.count(refusal.count)
            status, payload = refusal.status, refusal.payload
        except TimeoutError:
            self.count("timed_out")
            status, payload = (
                408,
                {
                    "error": "Request timed out.",
                    "details": f"The request must arrive within {idle:g} s and its body without "
                    f"pauses longer than that.",
                },
            )
        except (ConnectionError, _Closed):
            return
        except Exception:
            log.exception("validation service: a request failed")
            self.count("errors")
            status, payload = 500, dict(_FAILED)
        if call["validate"] is not False:  # a validation call, or one cut short
            self.record_call(status, payload, call["bytes"])
        self._send(conn, status, payload)

    def _respond(
        self, raw: _DeadlineSocket, reader: io.BufferedReader, call: dict[str, Any]
    ) -> tuple[int, dict]:
        line = reader.readline(_MAX_REQUEST_LINE + 1)
        if not line:
            raise _Closed
        parts = line.decode("latin-1").split()
        if len(line) > _MAX_REQUEST_LINE or len(parts) != 3:
            raise _Refusal(400, "Malformed request.", count="bad_request")
        method, target, _ = parts
        try:
            headers = http.client.parse_headers(reader)
        except http.client.HTTPException:
            raise _Refusal(400, "Malformed request headers.", count="bad_request") from None
        path = target.split("?")[0]
        call["validate"] = method == "POST" and path == "/validate"
        if method == "GET" and path == "/health":
            return 200, {"status": "running"}
        if method != "POST" or path != "/validate":
            raise _Refusal(404, "Not found.", "Use POST /validate (or GET /health).")
        length_text = headers.get("Content-Length", "").strip()
        if length_text.isascii() and length_text.isdigit():
            call["bytes"] = int(length_text)
        return self._validate_request(raw, reader, headers)

    def _validate_request(self, raw, reader, headers) -> tuple[int, dict]:
        wait = self.rate_limit.take()
        if wait:
            raise _Refusal(
                429,
                "Too many validation requests.",
                f"This run may ask {self.rate_limit.describe()}; retry in {wait:.0f}s.",
                count="rate_limited",
            )
        length_text = headers.get("Content-Length", "").strip()
        if not (length_text.isascii() and length_text.isdigit()):
            raise _Refusal(411, "A Content-Length header is required.", count="bad_request")
        length = int(length_text)
        content_type = headers.get("Content-Type", "")
        multipart = content_type.lower().startswith("multipart/form-data")
        if length > self.max_bytes + (_MULTIPART_SLACK if multipart else 0):
            raise _too_large(self.max_bytes)
        if not self._take_slot():
            raise _Refusal(
                503,
                "Validation service busy.",
                f"At most {self.limits.concurrent_validations} submissions are checked at once "
                f"and none finished within {self.limits.queue_wait_s:g} s; retry shortly.",
                count="busy",
            )
        try:
            # The body may take its time, but not forever: no pause longer than the idle
            # timeout (per read) and at least _MIN_BODY_RATE on average after that.
            raw.deadline = time.monotonic() + self.limits.idle_timeout_s + length / _MIN_BODY_RATE
            return self._receive_and_validate(reader, length, content_type, multipart)
        finally:
            self._slots.release()

    def _take_slot(self) -> bool:
        """Wait up to ``queue_wait_s`` for a validation slot (less when the service stops)."""
        deadline = time.monotonic() + self.limits.queue_wait_s
        while not self._stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self._slots.acquire(timeout=min(left, 0.1)):
                return True
        return False

    def _receive_and_validate(self, reader, length, content_type, multipart) -> tuple[int, dict]:
        assert self._scratch is not None
        fd, name = tempfile.mkstemp(suffix=".csv", prefix="submission-", dir=self._scratch)
        path = Path(name)
        try:
            with os.fdopen(fd, "wb") as out:
                body = _BodyReader(reader, length)
                if multipart:
                    boundary = _boundary(content_type)
                    if boundary is None:
                        raise _bad_form()
                    _MultipartStream(body, boundary).extract_file(out, self.max_bytes)
                else:
                    sink = _Sink(out, self.max_bytes)
                    while chunk := body.read():
                        sink.write(chunk)
                    if body.left:
                        raise _Closed  # the agent hung up mid-body
                    if not sink.written:
                        raise _bad_form()
            return self.answer_file(path)
        finally:
            path.unlink(missing_ok=True)


class _Closed(Exception):
    """The agent closed the connection: nothing to answer."""
