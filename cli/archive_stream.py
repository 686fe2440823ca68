"""What ``mleboard submit`` sends: the members of the upload (run-group folders, or a
``submissions.jsonl`` with the files it names), and a tar of them made on the fly.

The tar is never written to disk: ``TarStream`` is a seekable file whose bytes are
computed from the member list (headers in memory, file contents read where they are). It
is deterministic - members in a fixed order, every entry dated 1980-01-01 with mode 0644
(folders 0755), owner 0, PAX headers for long names and large files - so the same folders
give the same bytes on every run: an interrupted upload continues exactly where it
stopped, and the site recognises a resent archive by its checksum. It is not compressed:
a resume seeks straight to its offset (a compressed stream would have to be made again
from its start), and its length is known before the first byte is sent.
"""

from __future__ import annotations

import bisect
import hashlib
import io
import json
import os
import stat
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from benchmark.upload_tree import is_junk

MTIME = 315532800  # 1980-01-01T00:00:00Z, the earliest date a zip can hold too
_BLOCK = tarfile.BLOCKSIZE
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


class LayoutProblem(ValueError):
    """The paths given cannot be sent; the message says what to change."""


@dataclass
class Members:
    """Archive path -> where the file is, for files and folders, plus what was skipped."""

    files: dict[str, Path] = field(default_factory=dict)
    dirs: dict[str, Path] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    mtimes: dict[str, int] = field(default_factory=dict)

    def add_file(self, rel: str, path: Path, st: os.stat_result) -> None:
        self.files[rel] = path
        self.sizes[rel] = st.st_size
        self.mtimes[rel] = st.st_mtime_ns

    def add_tree(self, rel: str, folder: Path) -> None:
        """``folder`` and everything under it as ``rel/...``; links are skipped (the site
        refuses them), and so is macOS' junk."""
        self.dirs[rel] = folder
        for current, subdirs, names in os.walk(folder):
            base = Path(current)
            sub = base.relative_to(folder).as_posix()
            prefix = rel if sub == "." else f"{rel}/{sub}"
            kept = []
            for name in sorted(subdirs):
                if is_junk(name):
                    continue
                if (base / name).is_symlink():
                    self.skipped.append(f"{prefix}/{name} (a link)")
                    continue
                kept.append(name)
                self.dirs[f"{prefix}/{name}"] = base / name
            subdirs[:] = kept
            for name in sorted(names):
                path = base / name
                st = path.lstat()
                if is_junk(name):
                    continue
                if not stat.S_ISREG(st.st_mode):
                    self.skipped.append(f"{prefix}/{name} (a link or special file)")
                    continue
                self.add_file(f"{prefix}/{name}", path, st)

    def fingerprint(self, extra: str = "") -> str:
        """Names, sizes and modification times: changes when what would be sent changes."""
        digest = hashlib.sha256(extra.encode())
        for rel in sorted(self.files):
            digest.update(f"{rel}\0{self.sizes[rel]}\0{self.mtimes[rel]}\n".encode())
        for rel in sorted(self.dirs):
            digest.update(f"{rel}/\n".encode())
        return digest.hexdigest()


def is_ready_archive(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES)


def collect(paths: list[Path]) -> Members:
    """The members for run-group folders (each under its own name) or one
    ``submissions.jsonl`` (with the files its lines name)."""
    members = Members()
    folders = [p for p in paths if p.is_dir()]
    jsonls = [p for p in paths if p.is_file() and p.suffix == ".jsonl"]
    if folders and jsonls or len(jsonls) > 1:
        raise LayoutProblem(
            "give run-group folders, or one submissions.jsonl, not both: one kind per upload"
        )
    if jsonls:
        return _collect_jsonl(jsonls[0].resolve())
    seen: dict[str, Path] = {}
    for folder in folders:
        name = folder.resolve().name
        if name in seen:
            raise LayoutProblem(
                f"{seen[name]} and {folder} have the same name ({name}); in one upload each "
                "run group needs its own name: rename one folder"
            )
        seen[name] = folder
        members.add_tree(name, folder.resolve())
    if not members.files:
        raise LayoutProblem("nothing to send: the folders hold no files")
    return members


def _collect_jsonl(jsonl: Path) -> Members:
    """The JSONL and every file or folder its lines name, under their closest common
    folder, so that its relative paths resolve inside the archive as they do here and its
    absolute ones match by their ending (as the site reads them)."""
    named: list[Path] = []
    for number, line in enumerate(jsonl.read_text(encoding="utf-8-sig").splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "//")):
            continue
        try:
            entry = json.loads(stripped)
        except ValueError as error:
            raise LayoutProblem(f"line {number} of {jsonl} is not valid JSON: {error}") from None
        if not isinstance(entry, dict):
            raise LayoutProblem(f"line {number} of {jsonl} is not a JSON object")
        for key in ("submission_path", "logs_path", "code_path"):
            value = entry.get(key)
            if value:
                target = Path(str(value))
                target = target if target.is_absolute() else jsonl.parent / target
                if target.exists():
                    named.append(target.resolve())
    root = Path(os.path.commonpath([jsonl.parent, *(p.parent for p in named)]))
    members = Members()
    members.add_file(jsonl.relative_to(root).as_posix(), jsonl, jsonl.stat())
    for target in named:
        rel = target.relative_to(root).as_posix()
        if target.is_dir():
            members.add_tree(rel, target)
        else:
            members.add_file(rel, target, target.stat())
    return members


@dataclass
class _Segment:
    start: int
    size: int
    data: bytes | None = None  # a header or padding
    path: Path | None = None  # or a file's contents
    rel: str = ""


def _header(rel: str, size: int, is_dir: bool) -> bytes:
    info = tarfile.TarInfo(rel + ("/" if is_dir else ""))
    info.type = tarfile.DIRTYPE if is_dir else tarfile.REGTYPE
    info.size = 0 if is_dir else size
    info.mode = 0o755 if is_dir else 0o644
    info.mtime = MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")


class TarStream(io.RawIOBase):
    """A seekable, read-only tar of ``members``, computed as it is read."""

    def __init__(self, members: Members):
        self.segments: list[_Segment] = []
        position = 0
        entries = [(rel, True) for rel in members.dirs] + [(rel, False) for rel in members.files]
        for rel, is_dir in sorted(entries):
            size = 0 if is_dir else members.sizes[rel]
            header = _header(rel, size, is_dir)
            self.segments.append(_Segment(position, len(header), data=header))
            position += len(header)
            if not is_dir and size:
                self.segments.append(_Segment(position, size, path=members.files[rel], rel=rel))
                position += size
                padding = -size % _BLOCK
                if padding:
                    self.segments.append(_Segment(position, padding, data=bytes(padding)))
                    position += padding
        self.segments.append(_Segment(position, 2 * _BLOCK, data=bytes(2 * _BLOCK)))
        self.length = position + 2 * _BLOCK
        self._starts = [s.start for s in self.segments]
        self._position = 0
        self._open: tuple[Path, object] | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._position, os.SEEK_END: self.length}[whence]
        self._position = max(0, base + offset)
        return self._position

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self.length - self._position
        out = bytearray()
        while size > 0 and self._position < self.length:
            index = bisect.bisect_right(self._starts, self._position) - 1
            segment = self.segments[index]
            inside = self._position - segment.start
            take = min(size, segment.size - inside)
            if segment.data is not None:
                piece = segment.data[inside : inside + take]
            else:
                piece = self._file_bytes(segment, inside, take)
            out += piece
            self._position += take
            size -= take
        return bytes(out)

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def _file_bytes(self, segment: _Segment, inside: int, take: int) -> bytes:
        if self._open is None or self._open[0] != segment.path:
            self._close_file()
            self._open = (segment.path, open(segment.path, "rb"))  # noqa: SIM115
        handle = self._open[1]
        handle.seek(inside)
        data = handle.read(take)
        if len(data) != take or os.fstat(handle.fileno()).st_size != segment.size:
            raise LayoutProblem(
                f"{segment.path} changed while it was being sent (it was {segment.size:,} "
                "bytes): wait until the run has finished writing, then run the command again"
            )
        return data

    def _close_file(self) -> None:
        if self._open is not None:
            self._open[1].close()
            self._open = None

    def close(self) -> None:
        self._close_file()
        super().close()
