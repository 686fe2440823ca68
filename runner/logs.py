"""Capture of an agent's output: capped in size, with secret values masked, every line marked.

The sink masks every declared secret (even one split across two chunks), keeps the first
``cap_bytes`` and, past the cap, the last part (where the error usually is). In ``run.log``
each line of the agent's output starts with ``AGENT_PREFIX`` (``agent| ``; a carriage return
ends a line too) and each line the harness writes with ``HARNESS_PREFIX`` (``[mleboard] ``),
so the agent cannot pass one for the other.
"""

from __future__ import annotations

import threading
from collections import deque
from pathlib import Path

MASK = b"********"
AGENT_PREFIX = b"agent| "
HARNESS_PREFIX = b"[mleboard] "
_RECENT_BYTES = 65536


class LogSink:
    """A file-backed writer for one run's output. Thread-safe; ``close()`` once at the end."""

    def __init__(self, path: Path, cap_bytes: int, secrets: list[str] | None = None) -> None:
        self.path = path
        self.cap_bytes = cap_bytes
        self._secrets = sorted({s.encode() for s in (secrets or []) if s}, key=len, reverse=True)
        # Bytes held back so that a secret split across chunks is still seen whole.
        self._hold = max((len(s) for s in self._secrets), default=1) - 1
        self._pending = b""
        # Where the agent's output stands: at the start of a line, after a carriage return.
        self._line_start = True
        self._after_cr = False
        self._written = 0
        self._last_written = b"\n"
        self._dropped = 0
        self._tail: deque[bytes] = deque()
        self._tail_bytes = 0
        self._tail_cap = max(min(1024**2, cap_bytes // 4), 1)
        self._recent = b""
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("wb")

    def _mask(self, data: bytes) -> bytes:
        for secret in self._secrets:
            data = data.replace(secret, MASK)
        return data

    def write(self, data: bytes) -> None:
        """Add the agent's output; masked bytes are written once no secret can still
        straddle them, each line marked as the agent's."""
        with self._lock:
            self._pending = self._mask(self._pending + data)
            cut = len(self._pending) - self._hold
            if cut > 0:
                self._emit(self._frame(self._pending[:cut]))
                self._pending = self._pending[cut:]

    def _frame(self, data: bytes) -> bytes:
        """``data`` (the agent's) with line ends made ``\\n`` and each line prefixed."""
        if self._after_cr and data.startswith(b"\n"):
            data = data[1:]  # the second half of a "\r\n" split across two writes
        if not data:
            return b""
        self._after_cr = data.endswith(b"\r")
        lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        out = bytearray()
        for index, line in enumerate(lines):
            last = index == len(lines) - 1
            if line or not last:
                if self._line_start:
                    out += AGENT_PREFIX
                out += line
            if not last:
                out += b"\n"
                self._line_start = True
            elif line:
                self._line_start = False
        return bytes(out)

    def write_line(self, text: str) -> None:
        """Add a harness message (e.g. why the agent was stopped) as its own line.

        Line breaks in ``text`` are escaped: a message quoting the agent cannot start a
        line of its own.
        """
        safe = text.replace("\r", "\\r").replace("\n", "\\n")
        with self._lock:
            if self._file.closed:
                return  # a thread that ended late (a snapshot): the log is complete
            line = b"" if self._line_start else b"\n"
            self._emit(line + HARNESS_PREFIX + self._mask(safe.encode()) + b"\n")
            self._line_start = True
            self._after_cr = False

    def _emit(self, data: bytes) -> None:
        self._recent = (self._recent + data)[-_RECENT_BYTES:]
        room = self.cap_bytes - self._written
        if room > 0:
            head = data[:room]
            self._file.write(head)
            self._file.flush()
            self._written += len(head)
            self._last_written = head[-1:] or self._last_written
            data = data[room:]
        if data:
            self._dropped += len(data)
            self._tail.append(data)
            self._tail_bytes += len(data)
            while self._tail_bytes - len(self._tail[0]) >= self._tail_cap:
                self._tail_bytes -= len(self._tail.popleft())

    @property
    def truncated(self) -> bool:
        return self._dropped > 0

    def close(self) -> None:
        """Flush what was held back and, if the cap was hit, the tail after a marker."""
        with self._lock:
            if self._file.closed:
                return
            self._emit(self._frame(self._mask(self._pending)))
            self._pending = b""
            if self._dropped:
                tail = self._kept_tail()
                skipped = self._dropped - len(tail)
                self._file.write(
                    f"\n[mleboard] output capped at {self.cap_bytes} bytes: "
                    f"{skipped} bytes skipped; the last {len(tail)} bytes follow\n".encode()
                )
                self._file.write(tail)
            self._file.close()

    def _kept_tail(self) -> bytes:
        """The last part of what went past the cap, from the start of a line so that its
        first line keeps its prefix: cut after its first line break unless it starts a
        line, or (one long line of the agent's) mark it as the agent's."""
        joined = b"".join(self._tail)
        start = max(0, len(joined) - self._tail_cap)
        tail = joined[start:]
        if start:
            before = joined[start - 1 : start]
        elif len(joined) == self._dropped:
            before = self._last_written
        else:
            before = b""
        if before == b"\n":
            return tail
        newline = tail.find(b"\n")
        return AGENT_PREFIX + tail if newline < 0 else tail[newline + 1 :]

    def recent_text(self) -> str:
        """The last 64 KiB of (masked) output, including what is still held back."""
        with self._lock:
            return (self._recent + self._pending)[-_RECENT_BYTES:].decode(errors="replace")

    def read_text(self) -> str:
        """The captured output so far (for tests and error messages)."""
        return self.path.read_text(errors="replace")
