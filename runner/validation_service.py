"""The validation service: "is my submission well formed?", answered outside the container.

It runs in the harness's process, on the host, next to the private answers it needs; the
agent reaches it only through a unix socket in a folder mounted into its container. It
implements MLE-bench's ``/validate`` contract (``POST /validate`` with multipart field
``file``; answer ``{"result": message}``, plus ``"valid"``) and ``GET /health``. It says
valid or the reason - never a score - and limits request size and rate, and validates one
submission at a time so that an agent cannot load the host.
"""

from __future__ import annotations

import email.parser
import email.policy
import http.server
import json
import logging
import os
import shutil
import socketserver
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.spec import VALIDATION_SOCKET_NAME

log = logging.getLogger(__name__)

# validator(submission_path, competition_id, data_dir) -> object with .valid and .message
Validator = Callable[[Path, str, Path], Any]


def graders_validator(submission: Path, competition_id: str, data_dir: Path) -> Any:
    """The default validator: the competition's grader's schema check."""
    import graders

    return graders.validate_submission(submission, competition_id, data_dir)


@dataclass
class RateLimit:
    """A token bucket: ``burst`` requests at once, refilled at ``per_minute`` a minute."""

    burst: int = 5
    per_minute: float = 10.0

    def __post_init__(self) -> None:
        self._tokens = float(self.burst)
        self._stamp = time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> float:
        """Take a token; return 0 if granted, else the seconds until one is available."""
        with self._lock:
            now = time.monotonic()
            rate = self.per_minute / 60.0
            self._tokens = min(self.burst, self._tokens + (now - self._stamp) * rate)
            self._stamp = now
            if self._tokens >= 1:
                self._tokens -= 1
                return 0.0
            return (1 - self._tokens) / rate if rate > 0 else float("inf")


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    service: ValidationService


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    server_version = "mleboard-validation/1"
    timeout = 60  # a client that stalls mid-request is dropped

    def address_string(self) -> str:  # unix sockets have no peer address
        return "agent"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("validation: " + format, *args)

    def _reply(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.split("?")[0] == "/health":
            self._reply(200, {"status": "running"})
        else:
            self._reply(404, {"error": "Not found."})

    def do_POST(self) -> None:
        service = self.server.service
        if self.path.split("?")[0] != "/validate":
            self._reply(404, {"error": "Not found."})
            return
        wait = service.rate_limit.take()
        if wait:
            service.count("rate_limited")
            self._reply(
                429,
                {"error": "Too many validation requests.", "details": f"Retry in {wait:.0f}s."},
            )
            return
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._reply(411, {"error": "A Content-Length header is required."})
            return
        if int(length) > service.max_bytes:
            service.count("too_large")
            self._reply(
                413, {"error": f"Submission larger than the limit of {service.max_bytes} bytes."}
            )
            return
        body = self.rfile.read(int(length))
        data = _submission_bytes(self.headers.get("Content-Type", ""), body)
        if data is None:
            self._reply(400, {"error": "Send the submission as multipart form field `file`."})
            return
        self._reply(*service.answer(data))


def _submission_bytes(content_type: str, body: bytes) -> bytes | None:
    """The submitted file: the ``file`` part of a multipart form, or a raw CSV body."""
    if not content_type.lower().startswith("multipart/form-data"):
        return body if body else None
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    if not message.is_multipart():
        return None
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            return part.get_payload(decode=True) or b""
    return None


class ValidationService:
    """Serves ``/validate`` for one competition on a unix socket in ``socket_dir``.

    Use as a context manager (or ``start()``/``stop()``). ``socket_dir`` is created if
    needed and is what gets mounted into the container; the socket is world-connectable
    because the agent runs as another user. ``counts`` tells how many requests were
    answered, rate-limited or too large.
    """

    def __init__(
        self,
        competition_id: str,
        data_dir: Path,
        socket_dir: Path,
        *,
        validator: Validator | None = None,
        max_bytes: int = 100 * 1024**2,
        rate_limit: RateLimit | None = None,
    ) -> None:
        self.competition_id = competition_id
        self.data_dir = Path(data_dir)
        self.socket_dir = Path(socket_dir)
        self.validator = validator or graders_validator
        self.max_bytes = max_bytes
        self.rate_limit = rate_limit or RateLimit()
        self.counts = {"answered": 0, "rate_limited": 0, "too_large": 0, "errors": 0}
        self._validate_lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._scratch: Path | None = None

    @property
    def socket_path(self) -> Path:
        return self.socket_dir / VALIDATION_SOCKET_NAME

    def count(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def answer(self, data: bytes) -> tuple[int, dict]:
        """Validate one submission's bytes; return (HTTP status, JSON answer without a score)."""
        assert self._scratch is not None
        with self._validate_lock:
            path = self._scratch / "submission.csv"
            path.write_bytes(data)
            try:
                result = self.validator(path, self.competition_id, self.data_dir)
            except Exception:
                # Infrastructure (e.g. answers missing): say so without details that could
                # leak anything about the private data.
                log.exception("validation of a %s submission failed", self.competition_id)
                self.count("errors")
                return 500, {
                    "error": "An unexpected error occurred.",
                    "details": "The validation service failed; this says nothing about your submission.",
                }
            finally:
                path.unlink(missing_ok=True)
        self.count("answered")
        return 200, {"result": str(result.message), "valid": bool(result.valid)}

    def start(self) -> ValidationService:
        """Bind the socket and serve in a background thread."""
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.socket_dir, 0o755)
        self.socket_path.unlink(missing_ok=True)
        self._scratch = Path(tempfile.mkdtemp(prefix="mleboard-validate-"))
        self._server = _Server(str(self.socket_path), _Handler)
        self._server.service = self
        os.chmod(self.socket_path, 0o666)  # the agent's user must be able to connect
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and remove the socket and scratch files."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.socket_path.unlink(missing_ok=True)
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self) -> ValidationService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
