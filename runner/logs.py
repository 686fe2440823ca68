"""Capture of an agent's output: capped in size, with secret values masked.

Backends feed raw bytes as they stream; the sink masks every declared secret (even
when a secret is split across two chunks), keeps the first ``cap_bytes`` and, past the
cap, the last part of the output (where the error usually is), with a marker between.
"""

from __future__ import annotations

import threading
from collections import deque
from pathlib import Path

MASK = b"********"
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
        self._written = 0
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
        """Add output; masked bytes are written once no secret can still straddle them."""
        with self._lock:
            self._pending = self._mask(self._pending + data)
            cut = len(self._pending) - self._hold
            if cut > 0:
                self._emit(self._pending[:cut])
                self._pending = self._pending[cut:]

    def write_line(self, text: str) -> None:
        """Add a harness message (e.g. why the agent was stopped) as its own line."""
        self.write(b"\n[mleboard] " + text.encode() + b"\n")

    def _emit(self, data: bytes) -> None:
        self._recent = (self._recent + data)[-_RECENT_BYTES:]
        room = self.cap_bytes - self._written
        if room > 0:
            head = data[:room]
            self._file.write(head)
            self._file.flush()
            self._written += len(head)
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
            self._emit(self._mask(self._pending))
            self._pending = b""
            if self._dropped:
                tail = b"".join(self._tail)[-self._tail_cap :]
                skipped = self._dropped - len(tail)
                self._file.write(
                    f"\n[mleboard] output capped at {self.cap_bytes} bytes: "
                    f"{skipped} bytes skipped; the last {len(tail)} bytes follow\n".encode()
                )
                self._file.write(tail)
            self._file.close()

    def recent_text(self) -> str:
        """The last 64 KiB of (masked) output, including what is still held back."""
        with self._lock:
            return (self._recent + self._pending)[-_RECENT_BYTES:].decode(errors="replace")

    def read_text(self) -> str:
        """The captured output so far (for tests and error messages)."""
        return self.path.read_text(errors="replace")
