"""Bringing an agent's outputs to the host, bounded in bytes and never following a link.

Sizes are apparent sizes (``st_size``): a sparse 10 GiB file counts as 10 GiB, and a file
over its limit is never read. In a container the harness runs ``COLLECTOR`` (as the agent's
user, with the image's ``python3``) and reads its records with ``receive``, which trusts
nothing the collector says: every name, type, size and total is checked again. Record
stream: a 4-byte big-endian length and a JSON header ``{"k", "n", "s", "r"}``; kind ``d`` a
folder, ``f`` a file followed by exactly ``s`` bytes, ``x`` an entry left out (``r``: why).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from runner.backend import Fetched

# The in-container side (Python 3 stdlib only). argv[1]: {"roots": [[name, path], ...],
# "budget": bytes, "caps": {name: bytes}, "max_entries": n}.
COLLECTOR = r"""
import json, os, stat, struct, sys
cfg = json.loads(sys.argv[1])
out = sys.stdout.buffer
budget = cfg["budget"]
caps = cfg["caps"]
entries = cfg["max_entries"]

def record(**fields):
    data = json.dumps(fields).encode()
    out.write(struct.pack(">I", len(data)) + data)

def send_file(name, path):
    global budget
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        record(k="x", n=name, r="unreadable: %s" % exc.strerror)
        return
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            record(k="x", n=name, r="not a regular file")
            return
        size = info.st_size
        if size > min(budget, caps.get(name, budget)):
            record(k="x", n=name, s=size, r="too large")
            return
        record(k="f", n=name, s=size)
        budget -= size
        left = size
        while left:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:  # the file shrank meanwhile: keep the record's length
                chunk = bytes(min(left, 1 << 20))
            out.write(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)

stack = [tuple(pair) for pair in reversed(cfg["roots"])]
while stack:
    name, path = stack.pop()
    if entries <= 0:
        record(k="x", n=name, r="too many files")
        continue
    entries -= 1
    try:
        info = os.lstat(path)
    except OSError:
        continue
    if stat.S_ISDIR(info.st_mode):
        record(k="d", n=name)
        try:
            children = sorted(os.listdir(path))
        except OSError as exc:
            record(k="x", n=name, r="unreadable: %s" % exc.strerror)
            continue
        for child in reversed(children):
            stack.append((name + "/" + child, os.path.join(path, child)))
    elif stat.S_ISREG(info.st_mode):
        send_file(name, path)
    elif stat.S_ISLNK(info.st_mode):
        record(k="x", n=name, r="a symbolic link")
    else:
        record(k="x", n=name, r="not a regular file")
out.flush()
"""

_MAX_HEADER = 64 * 1024
_MAX_HEADER_TOTAL = 64 * 1024**2
_MAX_NAME = 4096
_CHUNK = 1024**2


class CollectError(RuntimeError):
    """The record stream broke a rule (the collector misbehaved or was cut off)."""


@dataclass
class Received:
    """What ``receive`` kept: files and bytes written, and what was left out (name, apparent
    size if known, why). ``error`` is set when the stream was cut short or broke a rule."""

    files: int = 0
    bytes: int = 0
    skipped: list[tuple[str, int | None, str]] = field(default_factory=list)
    error: str = ""

    def too_large(self) -> list[tuple[str, int | None, str]]:
        return [s for s in self.skipped if s[2] in ("too large", "too many files")]


class _Reader:
    """Exact reads over an iterator of byte chunks."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._buffer = b""

    def read(self, size: int) -> bytes:
        """Up to ``size`` bytes; fewer only at the end of the stream."""
        while len(self._buffer) < size:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._buffer += chunk
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def read_some(self, most: int) -> bytes:
        """Between 1 and ``most`` bytes, b"" at the end of the stream."""
        if not self._buffer:
            self._buffer = next(self._chunks, b"")
        data, self._buffer = self._buffer[:most], self._buffer[most:]
        return data


def _parts(name: object, roots: Mapping[str, Path]) -> list[str]:
    if (
        not isinstance(name, str)
        or not name
        or len(name.encode(errors="surrogateescape")) > _MAX_NAME
    ):
        raise CollectError(f"bad entry name {name!r:.200}")
    parts = name.split("/")
    if parts[0] not in roots or any(
        p in ("", ".", "..") or "\0" in p or len(p) > 255 for p in parts
    ):
        raise CollectError(f"bad entry name {name!r:.200}")
    return parts


def receive(
    chunks: Iterable[bytes],
    roots: Mapping[str, Path],
    *,
    budget: int,
    caps: Mapping[str, int],
    max_entries: int,
) -> Received:
    """Write the records in ``chunks`` under ``roots`` (root name -> host path); keep at most
    ``budget`` bytes in all and ``caps[name]`` for the named files; never more than
    ``max_entries`` entries. Files are created new (``O_EXCL``, ``O_NOFOLLOW``) under
    folders this function made itself. Stops at the first broken rule (``error``)."""
    got = Received()
    reader = _Reader(chunks)
    header_bytes = entries = 0
    left = budget
    try:
        while True:
            head = reader.read(4)
            if not head:
                return got
            if len(head) < 4:
                raise CollectError("the stream ended inside a record")
            (length,) = struct.unpack(">I", head)
            header_bytes += length
            if length > _MAX_HEADER or header_bytes > _MAX_HEADER_TOTAL:
                raise CollectError("a record header is too long")
            raw = reader.read(length)
            if len(raw) < length:
                raise CollectError("the stream ended inside a record")
            try:
                meta = json.loads(raw)
                kind, name = meta["k"], meta["n"]
            except (ValueError, KeyError, TypeError) as exc:
                raise CollectError(f"an unreadable record header ({exc})") from exc
            parts = _parts(name, roots)
            entries += 1
            if entries > max_entries:
                raise CollectError(f"more than {max_entries} entries")
            target = roots[parts[0]].joinpath(*parts[1:])
            if kind == "d":
                _make_dirs(roots[parts[0]], parts[1:])
            elif kind == "x":
                size = meta.get("s")
                got.skipped.append(
                    (name, size if isinstance(size, int) else None, str(meta.get("r", ""))[:200])
                )
            elif kind == "f":
                size = meta.get("s")
                if not isinstance(size, int) or size < 0:
                    raise CollectError(f"a file record without a size: {name!r:.200}")
                if size > min(left, caps.get(name, left)):
                    raise CollectError(f"{name!r:.200} is sent with {size} bytes, over its limit")
                left -= size
                _make_dirs(roots[parts[0]], parts[1:-1])
                _write_file(reader, target, size)
                got.files += 1
                got.bytes += size
            else:
                raise CollectError(f"an unknown record kind {kind!r:.20}")
    except CollectError as exc:
        got.error = str(exc)
        return got


def _make_dirs(root: Path, parts: list[str]) -> None:
    path = root
    for part in parts:
        path = path / part
        try:
            path.mkdir(mode=0o755)
        except FileExistsError:
            if not stat.S_ISDIR(path.lstat().st_mode):
                raise CollectError(f"{path.name!r:.200} is both a file and a folder") from None


def _write_file(reader: _Reader, target: Path, size: int) -> None:
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise CollectError(f"cannot create {target.name!r:.200}: {exc.strerror}") from exc
    with open(fd, "wb", closefd=True) as handle:
        left = size
        while left:
            data = reader.read_some(min(left, _CHUNK))
            if not data:
                raise CollectError("the stream ended inside a file")
            handle.write(data)
            left -= len(data)


# ---------------------------------------------------------------- on the host (local backend)


def copy_capped(source: Path, target: Path, max_bytes: int) -> Fetched:
    """Copy the regular file ``source`` to ``target`` (new) without following a link at
    ``source``; a file over ``max_bytes`` (apparent size) is not read at all."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return Fetched(copied=False, reason="no file")
    except OSError as exc:
        return Fetched(copied=False, reason=f"unreadable: {exc.strerror}")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Fetched(copied=False, reason="not a regular file")
        if info.st_size > max_bytes:
            return Fetched(copied=False, size=info.st_size, too_large=True, reason="too large")
        left = info.st_size
        with target.open("xb") as out:
            while left:
                chunk = os.read(fd, min(left, _CHUNK))
                if not chunk:
                    break
                out.write(chunk)
                left -= len(chunk)
        return Fetched(copied=True, size=info.st_size)
    finally:
        os.close(fd)


def apparent_size(folder: Path, max_entries: int) -> tuple[int, int]:
    """(bytes, entries) under ``folder``: apparent sizes of its regular files, links not
    followed; stops counting past ``max_entries`` entries."""
    total = entries = 0
    stack = [folder]
    while stack and entries <= max_entries:
        path = stack.pop()
        with contextlib.suppress(OSError), os.scandir(path) as listing:
            for entry in listing:
                entries += 1
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(info.st_mode):
                        stack.append(Path(entry.path))
                    elif stat.S_ISREG(info.st_mode):
                        total += info.st_size
    return total, entries


def describe_exceeded(skipped: list[tuple[str, int | None, str]], limit: int) -> str:
    """A short account of what was left out for being over a limit."""
    shown = [f"{name} ({size} bytes)" if size is not None else name for name, size, _ in skipped]
    more = f" and {len(shown) - 5} more" if len(shown) > 5 else ""
    return f"outputs exceeded {limit} bytes: not kept: {', '.join(shown[:5])}{more}"
