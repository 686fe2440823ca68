"""The bridge's HTTP/1.1 relay: one agent connection, request after request, to the endpoint.

Each request is read whole (bounded), amended where the meter needs it (see
``runner.llm_meter``: usage asked for in streams; ``Host`` set to the endpoint's, so a
hosted API answers; answers asked for uncompressed so that their usage can be read) and
sent on; the answer is passed back as it arrives - a stream stays a stream - while the
meter reads it. Anything that is not HTTP/1.1 the relay can read gets a 400 and the
connection is closed.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Callable
from typing import BinaryIO

from runner.llm_meter import (
    Exchange,
    Meter,
    StreamReader,
    is_completion_path,
    prompt_chars,
    read_json_answer,
)

MAX_HEAD_BYTES = 64 * 1024
MAX_REQUEST_BYTES = 64 * 1024**2  # a prompt of 16M tokens; larger ones are refused
MAX_JSON_ANSWER_BYTES = 32 * 1024**2  # read for its usage; a larger answer passes unread
CHUNK = 65536
# Request headers the relay sets itself.
_REPLACED = {"host", "content-length", "transfer-encoding", "accept-encoding", "expect"}
_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"}


class BadMessage(Exception):
    """The peer did not speak HTTP/1.1 as the relay reads it."""


class Closed(Exception):
    """The peer closed the connection between messages."""


def _read_head(reader: BinaryIO) -> tuple[str, list[tuple[str, str]]]:
    """The start line and the headers of a message."""
    line = reader.readline(MAX_HEAD_BYTES)
    while line in (b"\r\n", b"\n"):  # stray blank lines between messages are allowed
        line = reader.readline(MAX_HEAD_BYTES)
    if not line:
        raise Closed
    if not line.endswith(b"\n"):
        raise BadMessage("start line too long")
    headers: list[tuple[str, str]] = []
    size = len(line)
    while True:
        raw = reader.readline(MAX_HEAD_BYTES)
        size += len(raw)
        if size > MAX_HEAD_BYTES or not raw.endswith(b"\n"):
            raise BadMessage("headers too long or cut off")
        if raw in (b"\r\n", b"\n"):
            break
        name, sep, value = raw.decode("latin-1").partition(":")
        if not sep or not name.strip() or name != name.strip():
            raise BadMessage("malformed header")
        headers.append((name, value.strip()))
    return line.decode("latin-1").rstrip("\r\n"), headers


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def _tokens(headers: list[tuple[str, str]], name: str) -> set[str]:
    return {
        token.strip().lower()
        for k, v in headers
        if k.lower() == name
        for token in v.split(",")
        if token.strip()
    }


def _chunks(reader: BinaryIO):
    """The data of a chunked body, chunk by chunk (trailers read and dropped)."""
    while True:
        line = reader.readline(1024)
        if not line.endswith(b"\n"):
            raise BadMessage("chunk size line cut off")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise BadMessage("bad chunk size") from None
        if size < 0:
            raise BadMessage("bad chunk size")
        if size == 0:
            while reader.readline(MAX_HEAD_BYTES) not in (b"\r\n", b"\n", b""):
                pass
            return
        left = size
        while left:
            data = reader.read(min(left, CHUNK))
            if not data:
                raise BadMessage("chunk cut off")
            left -= len(data)
            yield data
        if reader.readline(8) not in (b"\r\n", b"\n"):
            raise BadMessage("chunk not followed by its line end")


def _body(reader: BinaryIO, headers: list[tuple[str, str]], until_close: bool):
    """A message's body, piece by piece, as its headers frame it."""
    if "chunked" in _tokens(headers, "transfer-encoding"):
        yield from _chunks(reader)
        return
    length = _header(headers, "content-length")
    if length is not None:
        try:
            left = int(length)
        except ValueError:
            raise BadMessage("bad Content-Length") from None
        if left < 0:
            raise BadMessage("bad Content-Length")
        while left:
            data = reader.read(min(left, CHUNK))
            if not data:
                raise BadMessage("body cut off")
            left -= len(data)
            yield data
        return
    if until_close:
        while data := reader.read1(CHUNK):
            yield data


def _read_request_body(reader: BinaryIO, headers) -> bytes:
    parts, size = [], 0
    for data in _body(reader, headers, until_close=False):
        size += len(data)
        if size > MAX_REQUEST_BYTES:
            raise BadMessage(f"request body over {MAX_REQUEST_BYTES} bytes")
        parts.append(data)
    return b"".join(parts)


def _simple_answer(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"error": {"message": message, "type": "mleboard_bridge"}}).encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


class Relay:
    """Serves one agent connection until either side closes it.

    ``connect()`` opens a connection to the endpoint (TLS when it is ``https``);
    ``host_header`` is the endpoint's ``host[:port]``.
    """

    def __init__(
        self,
        client: socket.socket,
        connect: Callable[[], socket.socket],
        host_header: str,
        meter: Meter,
        track: Callable[[socket.socket, bool], None] = lambda s, opened: None,
    ) -> None:
        self.client = client
        self.connect = connect
        self.host_header = host_header
        self.meter = meter
        self.track = track
        self.upstream: socket.socket | None = None
        self.upstream_reader: BinaryIO | None = None

    def serve(self) -> None:
        reader = self.client.makefile("rb")
        try:
            while self._one(reader):
                pass
        except (BadMessage, OSError):
            pass
        finally:
            self._drop_upstream()
            reader.close()

    def _drop_upstream(self) -> None:
        if self.upstream is not None:
            self.track(self.upstream, False)
            with contextlib.suppress(OSError):
                self.upstream.close()
            if self.upstream_reader is not None:
                with contextlib.suppress(OSError):
                    self.upstream_reader.close()
        self.upstream = self.upstream_reader = None

    def _one(self, reader: BinaryIO) -> bool:
        """Relay one request and its answer; False when the connection is to close."""
        try:
            start, headers = _read_head(reader)
        except Closed:
            return False
        except BadMessage as exc:
            self.client.sendall(_simple_answer(400, "Bad Request", f"mleboard's bridge: {exc}"))
            return False
        parts = start.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            self.client.sendall(
                _simple_answer(400, "Bad Request", "mleboard's bridge: not an HTTP/1.x request")
            )
            return False
        method, target, version = parts
        if "100-continue" in _tokens(headers, "expect"):
            self.client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        try:
            body = _read_request_body(reader, headers)
        except BadMessage as exc:
            self.client.sendall(_simple_answer(400, "Bad Request", f"mleboard's bridge: {exc}"))
            return False
        keep_alive = version == "HTTP/1.1" and "close" not in _tokens(headers, "connection")
        exchange = Exchange(completion=method == "POST" and is_completion_path(target))
        request = None
        if exchange.completion:
            try:
                request = json.loads(body)
            except (ValueError, RecursionError, UnicodeDecodeError):
                request = None
            if not isinstance(request, dict):
                request = None
        amended, asked_usage = body, False
        if request is not None:
            exchange.prompt_chars = prompt_chars(request)
            exchange.streamed = request.get("stream") is True
            options = request.get("stream_options")
            wants = isinstance(options, dict) and options.get("include_usage") is True
            if exchange.streamed and not wants and not self.meter.stream_usage_refused:
                extra = dict(options) if isinstance(options, dict) else {}
                extra["include_usage"] = True
                amended = json.dumps({**request, "stream_options": extra}).encode()
                asked_usage = True
        kept = [
            (k, v)
            for k, v in headers
            if k.lower() not in _REPLACED
            and k.lower() not in _HOP
            and k.lower() not in _tokens(headers, "connection")
        ]

        def message(data: bytes) -> bytes:
            lines = [start, f"Host: {self.host_header}", "Accept-Encoding: identity"]
            lines += [f"{k}: {v}" for k, v in kept]
            if data or method in ("POST", "PUT", "PATCH"):
                lines.append(f"Content-Length: {len(data)}")
            return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data

        started = time.monotonic()
        try:
            status, answer_headers, answer_reader = self._send(message(amended))
            if asked_usage and 400 <= status < 500:
                # The endpoint refuses stream_options: the agent's own request, and no
                # more asking during this run (these streams are estimated).
                for _ in _body(answer_reader, answer_headers, until_close=True):
                    pass
                self.meter.stream_usage_refused = True
                asked_usage = False
                if "close" in _tokens(answer_headers, "connection"):
                    self._drop_upstream()
                status, answer_headers, answer_reader = self._send(message(body))
        except (OSError, BadMessage, Closed) as exc:
            exchange.error = "unreachable"
            exchange.wait_s = time.monotonic() - started
            self.meter.add(exchange)
            self._drop_upstream()
            self.client.sendall(
                _simple_answer(
                    502, "Bad Gateway", f"mleboard's bridge: the model endpoint failed ({exc})"
                )
            )
            return False
        exchange.status = status
        if status >= 400:
            exchange.error = f"http_{status}"
        recorded = False

        def record() -> None:
            # Counted before the answer's last bytes reach the agent: whoever reads the
            # meter once the agent has its answer (the harness, at the run's end) sees it.
            nonlocal recorded
            if not recorded:
                recorded = True
                exchange.wait_s = time.monotonic() - started
                self.meter.add(exchange)

        try:
            keep_alive = (
                self._pass_answer(
                    method, status, answer_headers, answer_reader, exchange, asked_usage, record
                )
                and keep_alive
            )
        except (BadMessage, OSError):
            exchange.error = exchange.error or "cut_off"
            keep_alive = False
            self._drop_upstream()
        record()
        return keep_alive

    def _send(self, data: bytes) -> tuple[int, list[tuple[str, str]], BinaryIO]:
        """Send a request (on the open connection, else a new one; once more on a new one
        when a kept connection turns out closed) and read the answer's head."""
        for attempt in range(2):
            fresh = self.upstream is None
            if fresh:
                self.upstream = self.connect()
                self.track(self.upstream, True)
                self.upstream_reader = self.upstream.makefile("rb")
            try:
                assert self.upstream is not None and self.upstream_reader is not None
                self.upstream.sendall(data)
                while True:
                    start, headers = _read_head(self.upstream_reader)
                    parts = start.split(" ", 2)
                    if (
                        len(parts) < 2
                        or not parts[0].startswith("HTTP/1.")
                        or not (parts[1].isascii() and parts[1].isdigit())
                    ):
                        raise BadMessage("the endpoint's answer is not HTTP/1.x")
                    status = int(parts[1])
                    if status >= 200 or status == 101:
                        break  # 1xx interim answers are read and skipped
                self._answer_start = start
                return status, headers, self.upstream_reader
            except (Closed, OSError):
                self._drop_upstream()
                if fresh or attempt:
                    raise
        raise Closed  # not reached

    def _pass_answer(
        self,
        method: str,
        status: int,
        headers: list[tuple[str, str]],
        reader: BinaryIO,
        exchange: Exchange,
        drop_usage_chunk: bool,
        record,
    ) -> bool:
        """Pass the answer back as it comes, calling ``record()`` once the exchange is known
        and before the agent can have the answer's end; True when both connections may be
        kept."""
        no_body = method == "HEAD" or status in (204, 304) or 100 <= status < 200
        framed = "chunked" in _tokens(headers, "transfer-encoding") or (
            _header(headers, "content-length") is not None
        )
        upstream_keeps = framed and "close" not in _tokens(headers, "connection")
        content_type = (_header(headers, "content-type") or "").lower()
        stream = "text/event-stream" in content_type and not no_body
        kept = [
            (k, v)
            for k, v in headers
            if k.lower() not in _HOP and k.lower() not in _tokens(headers, "connection")
        ]
        if stream:
            # Passed on chunked, event by event (one may be taken out).
            kept = [
                (k, v) for k, v in kept if k.lower() not in ("content-length", "transfer-encoding")
            ]
            kept.append(("Transfer-Encoding", "chunked"))
        if not no_body and not framed:
            kept.append(("Connection", "close"))
        head = "\r\n".join([self._answer_start, *(f"{k}: {v}" for k, v in kept)]) + "\r\n\r\n"
        if no_body:
            record()
            self.client.sendall(head.encode("latin-1"))
            return upstream_keeps or framed
        self.client.sendall(head.encode("latin-1"))
        if stream:
            events = StreamReader(exchange, drop_usage_chunk)
            for data in _body(reader, headers, until_close=not framed):
                out = events.feed(data)
                if out:
                    self.client.sendall(b"%x\r\n%s\r\n" % (len(out), out))
            rest = events.flush()
            if rest:
                self.client.sendall(b"%x\r\n%s\r\n" % (len(rest), rest))
            record()
            self.client.sendall(b"0\r\n\r\n")
        else:
            chunked = "chunked" in _tokens(headers, "transfer-encoding")
            copy, size = [], 0
            # One piece is held back, so that the exchange is recorded before the last one
            # (which completes a Content-Length answer) is passed on.
            held = b""
            for data in _body(reader, headers, until_close=not framed):
                if held:
                    self._pass_piece(held, chunked)
                held = data
                size += len(data)
                if exchange.completion and size <= MAX_JSON_ANSWER_BYTES:
                    copy.append(data)
            if exchange.completion and size <= MAX_JSON_ANSWER_BYTES:
                read_json_answer(exchange, b"".join(copy))
            record()
            if held:
                self._pass_piece(held, chunked)
            if chunked:
                self.client.sendall(b"0\r\n\r\n")
        if not upstream_keeps:
            self._drop_upstream()
        return framed

    def _pass_piece(self, data: bytes, chunked: bool) -> None:
        self.client.sendall(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
