"""SHA-256 whose state can be saved between requests, so the checksum of an archive that
arrives in pieces (over many requests, web processes and hours) is computed as the bytes
arrive, never by reading the whole archive again.

``hashlib`` cannot export its state, so this uses OpenSSL's SHA-256 through ``ctypes``
(the same libcrypto ``hashlib`` is built on): ``SHA256_CTX`` is a public, fixed struct of
112 bytes (``openssl/sha.h``: eight state words, the bit count, the pending block, two
counters), saved as it is. Where that library cannot be loaded, the state is the number
of bytes hashed and resuming re-reads them from the part file: slower, same result.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
from pathlib import Path

_CTX_BYTES = 112
_READ = 8 * 1024 * 1024


def _load():
    name = ctypes.util.find_library("crypto")
    if not name:
        return None
    try:
        lib = ctypes.CDLL(name)
        for fn in ("SHA256_Init", "SHA256_Update", "SHA256_Final"):
            getattr(lib, fn)
    except (OSError, AttributeError):
        return None
    lib.SHA256_Init.argtypes = [ctypes.c_char_p]
    lib.SHA256_Update.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.SHA256_Final.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    return lib


_LIB = _load()
# The state's first byte says its kind: b"C" a saved SHA256_CTX, b"N" a byte count.
_CTX, _COUNT = b"C", b"N"


class ResumableSha256:
    """``update`` like hashlib; ``state()`` is bytes to store; ``resume(state, part)``
    continues from them (``part``: the file holding the bytes hashed so far, read only by
    the fallback)."""

    def __init__(self) -> None:
        self.count = 0
        if _LIB is not None:
            self._ctx = ctypes.create_string_buffer(_CTX_BYTES)
            _LIB.SHA256_Init(self._ctx)
            self._fallback = None
        else:
            self._ctx = None
            self._fallback = hashlib.sha256()

    @classmethod
    def resume(cls, state: bytes | None, part: Path) -> ResumableSha256:
        hasher = cls()
        if not state:
            return hasher
        state = bytes(state)
        kind, count, body = state[:1], int.from_bytes(state[1:9], "big"), state[9:]
        if kind == _CTX and _LIB is not None and len(body) == _CTX_BYTES:
            hasher._ctx = ctypes.create_string_buffer(body, _CTX_BYTES)
            hasher.count = count
            return hasher
        # A count (or a context this process cannot use): hash the part's first bytes again.
        with open(part, "rb") as handle:
            left = count
            while left:
                data = handle.read(min(_READ, left))
                if not data:
                    raise ValueError(f"the part file holds fewer than the {count} bytes hashed")
                hasher.update(data)
                left -= len(data)
        return hasher

    def update(self, data: bytes) -> None:
        if not data:
            return
        if self._ctx is not None:
            _LIB.SHA256_Update(self._ctx, data, len(data))
        else:
            self._fallback.update(data)
        self.count += len(data)

    def state(self) -> bytes:
        head = self.count.to_bytes(8, "big")
        if self._ctx is not None:
            return _CTX + head + self._ctx.raw
        return _COUNT + head

    def hexdigest(self) -> str:
        if self._ctx is None:
            return self._fallback.hexdigest()
        ctx = ctypes.create_string_buffer(self._ctx.raw, _CTX_BYTES)  # Final spoils its ctx
        out = ctypes.create_string_buffer(32)
        _LIB.SHA256_Final(out, ctx)
        return out.raw.hex()
