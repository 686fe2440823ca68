"""Safe inspection and extraction of an uploaded archive (zip, tar, tar.gz/bz2/xz, or one file).

An upload is untrusted: its names may climb out of the destination, it may hold links or
device files, and its declared sizes may lie. ``archive_kind`` tells the format from the
bytes, never the name; ``inspect_archive`` checks every member without writing anything;
``extract_archive`` inspects, then streams every member into a staging folder while
counting the bytes produced, and renames it into place only when everything passed. A
single JSON, JSONL or CSV file is "extracted" by copying it. macOS junk (``__MACOSX/``,
``.DS_Store``, ``._*``) is skipped, not refused. Pure standard library; no Django.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import json
import lzma
import os
import shutil
import stat
import struct
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from benchmark.archive_rules import (
    DEFAULT_LIMITS,
    RATIO_FLOOR,
    ArchiveLimits,
    ArchiveListing,
    ArchiveMember,
    ArchiveRefused,
    ListingBuilder,
    MiB,
    human_size,
    safe_member_name,
)
from benchmark.file_seek import seek_clamped

__all__ = [
    "DEFAULT_LIMITS",
    "ArchiveLimits",
    "ArchiveListing",
    "ArchiveMember",
    "ArchiveRefused",
    "archive_kind",
    "extract_archive",
    "human_size",
    "inspect_archive",
]

# pax and GNU long-name headers are read into memory whole by tarfile; real ones are a
# few hundred bytes, so anything larger is refused before it is read.
MAX_TAR_METADATA = 64 * 1024
_CHUNK = 1 * MiB
_HEAD = 64 * 1024
_ZIP_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
# Errors a damaged compressed stream or archive raises while it is read.
_READ_ERRORS = (
    OSError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    tarfile.TarError,
    zipfile.BadZipFile,
    struct.error,
)


# --- format detection ------------------------------------------------------------------

_COMPRESSION_MAGIC = (
    (b"\x1f\x8b", "gz"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
)
_OPENERS: dict[str, Callable[[Path], BinaryIO]] = {
    "": lambda p: open(p, "rb"),  # noqa: SIM115 - closed by the caller
    "gz": lambda p: gzip.open(p, "rb"),
    "bz2": lambda p: bz2.open(p, "rb"),
    "xz": lambda p: lzma.open(p, "rb"),
}


def _compression(head: bytes) -> str | None:
    return next((name for magic, name in _COMPRESSION_MAGIC if head.startswith(magic)), None)


def _is_tar_block(block: bytes) -> bool:
    if len(block) < tarfile.BLOCKSIZE:
        return False
    block = block[: tarfile.BLOCKSIZE]
    if block[257:262] == b"ustar" or block.count(0) == tarfile.BLOCKSIZE:
        return True
    try:  # a pre-POSIX (v7) header has no magic, only a valid checksum
        tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return True


def _text_kind(head: bytes) -> str | None:
    if b"\x00" in head:
        return None
    try:  # incremental, so a head cut inside a multi-byte character still decodes
        text = codecs.getincrementaldecoder("utf-8-sig")().decode(head, final=False)
    except UnicodeDecodeError:
        return None
    # MLE-bench's JSONL reader skips blank lines and lines commented out with # or //.
    lines = [s.strip() for s in text.splitlines()]
    lines = [s for s in lines if s and not s.startswith(("#", "//"))]
    if not lines:
        return None
    if lines[0].startswith("["):
        return "json"
    if lines[0].startswith("{"):
        try:
            first = json.loads(lines[0])
        except (ValueError, RecursionError):
            return "json"  # one document over several lines (or broken: reading it says where)
        # One line: a submissions line names a competition; anything else is a document.
        if len(lines) > 1 or (isinstance(first, dict) and "competition_id" in first):
            return "jsonl"
        return "json"
    if "," in lines[0]:
        return "csv"
    return None


def archive_kind(path: Path) -> str:
    """``zip`` | ``tar`` | ``json`` | ``jsonl`` | ``csv``, told by content, not by name.

    A gzip/bzip2/xz file is a ``tar`` when it holds a tar archive. Raises ArchiveRefused
    (``not_archive``, ``empty`` or ``corrupt``) for anything else.
    """
    return _detect(Path(path))[0]


def _detect(path: Path) -> tuple[str, str]:
    with open(path, "rb") as handle:
        head = handle.read(_HEAD)
    if not head:
        raise ArchiveRefused("the upload is empty (0 bytes)", "empty")
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")):
        return "zip", ""
    compression = _compression(head)
    if compression:
        try:
            with _OPENERS[compression](path) as stream:
                block = stream.read(tarfile.BLOCKSIZE)
        except _READ_ERRORS as error:
            raise ArchiveRefused(
                f"the upload is a corrupt or truncated {compression} file: {error}", "corrupt"
            ) from None
        if _is_tar_block(block):
            return "tar", compression
        raise ArchiveRefused(
            f"not an archive: the upload is a {compression}-compressed file that holds no tar "
            "archive; upload a zip, a tar (optionally .gz/.bz2/.xz), or a JSON/JSONL file",
            "not_archive",
        )
    if _is_tar_block(head):
        return "tar", ""
    kind = _text_kind(head)
    if kind is None:
        raise ArchiveRefused(
            "not an archive: the upload is neither a zip or tar archive (optionally "
            ".gz/.bz2/.xz) nor a JSON, JSONL or CSV file",
            "not_archive",
        )
    return kind, ""


# A sink receives each accepted file's name, a readable stream of its data and its
# declared size; extraction writes it, inspection passes None and reads nothing.
Sink = Callable[[str, BinaryIO, int], None]


# --- zip -----------------------------------------------------------------------------------


def _zip_entry_count(path: Path) -> int | None:
    """The member count the zip's end record declares, read before zipfile parses them all.

    zipfile builds an object per central-directory entry up front, so a crafted zip with
    millions of entries would cost memory before any limit could be applied.
    """
    size = path.stat().st_size
    with open(path, "rb") as handle:
        seek_clamped(handle, size - (65535 + 22))
        tail = handle.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) < at + 22:
        return None  # zipfile will say what is wrong
    count = struct.unpack("<H", tail[at + 10 : at + 12])[0]
    locator = tail[at - 20 : at] if at >= 20 else b""
    if count == 0xFFFF and locator.startswith(b"PK\x06\x07"):
        with open(path, "rb") as handle:
            seek_clamped(handle, struct.unpack("<Q", locator[8:16])[0])
            record = handle.read(56)
        if record.startswith(b"PK\x06\x06") and len(record) == 56:
            count = struct.unpack("<Q", record[32:40])[0]
    return count


def _scan_zip(path: Path, limits: ArchiveLimits, sink: Sink | None) -> ArchiveListing:
    archive_bytes = path.stat().st_size
    declared = _zip_entry_count(path)
    if declared is not None and declared > limits.max_members:
        raise ArchiveRefused(
            f"the archive has {declared:,} members; the limit is {limits.max_members:,}",
            "too_many_members",
        )
    builder = ListingBuilder("zip", "", archive_bytes, limits)
    try:
        archive = zipfile.ZipFile(path)
    except _READ_ERRORS as error:
        raise ArchiveRefused(
            f"the zip archive is corrupt or truncated: {error}", "corrupt"
        ) from None
    with archive:
        infos = archive.infolist()
        if sum(info.compress_size for info in infos) > archive_bytes:
            # Members sharing compressed bytes: the "overlapping files" zip bomb.
            raise ArchiveRefused(
                "the zip's members overlap each other (a zip-bomb construction)", "ratio"
            )
        for info in infos:
            # OSError is not caught here: the sink's writes raise it when the disk fails,
            # which is not the uploader's doing (its reads map their own errors).
            try:
                _zip_member(archive, info, builder, sink)
            except (
                zipfile.BadZipFile,
                zlib.error,
                EOFError,
                lzma.LZMAError,
                struct.error,
            ) as error:
                raise ArchiveRefused(
                    f"member {info.filename!r} is corrupt: {error}", "corrupt"
                ) from None
    return builder.finish()


def _zip_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, builder: ListingBuilder, sink: Sink | None
) -> None:
    name = builder.entry(info.filename)
    if name is None:
        return
    mode = info.external_attr >> 16
    file_type = stat.S_IFMT(mode) if info.create_system == 3 else 0  # 3: made on Unix
    if file_type == stat.S_IFLNK:
        raise ArchiveRefused(f"member {name!r} is a symbolic link; links are refused", "link")
    if file_type not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise ArchiveRefused(
            f"member {name!r} is a special file (device, pipe or socket); only regular files "
            "and folders are accepted",
            "special_file",
        )
    if info.is_dir() or (file_type == stat.S_IFDIR and info.file_size == 0):
        builder.add_dir(name)
        return
    if info.flag_bits & 0x1:
        raise ArchiveRefused(
            f"member {name!r} is encrypted; upload the archive without a password", "encrypted"
        )
    if info.compress_type not in _ZIP_METHODS:
        raise ArchiveRefused(
            f"member {name!r} uses zip compression method {info.compress_type}, which mleboard "
            "cannot read; re-create the zip with the usual deflate compression",
            "corrupt",
        )
    builder.add_file(name, info.file_size, info.compress_size)
    if sink is not None:
        with archive.open(info) as stream:
            sink(name, stream, info.file_size)


# --- tar -----------------------------------------------------------------------------------


class _CappedStream:
    """A read-only stream that refuses once it has produced more than ``cap`` bytes.

    The declared member sizes bound the data, but not tar's own metadata blocks; this
    bounds everything decompression can produce.
    """

    def __init__(self, raw: BinaryIO, cap: int, refusal: Callable[[], ArchiveRefused]):
        self._raw = raw
        self._cap = cap
        self._refusal = refusal
        self.produced = 0

    def read(self, size: int = -1) -> bytes:
        try:
            data = self._raw.read(size)
        except _READ_ERRORS as error:
            raise ArchiveRefused(
                f"the tar archive is corrupt or truncated: {error}", "corrupt"
            ) from None
        self.produced += len(data)
        if self.produced > self._cap:
            raise self._refusal()
        return data


class _StrictTarInfo(tarfile.TarInfo):
    """tarfile's TarInfo, stricter where tarfile is lenient with damaged input."""

    @classmethod
    def fromtarfile(cls, archive: tarfile.TarFile) -> tarfile.TarInfo:
        # tarfile takes a damaged header after the first one for the end of the archive
        # and silently drops the rest; that is corruption, not an end.
        start = archive.offset
        try:
            return super().fromtarfile(archive)
        except (tarfile.InvalidHeaderError, tarfile.TruncatedHeaderError) as error:
            if start == 0:
                raise
            raise ArchiveRefused(
                f"the tar archive is corrupt or truncated at byte {start}: {error}", "corrupt"
            ) from None

    def _proc_member(self, archive: tarfile.TarFile) -> tarfile.TarInfo:
        # The documented override point: pax and GNU long-name blocks are read into memory.
        metadata = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
        metadata += (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
        if self.type in metadata and self.size > MAX_TAR_METADATA:
            raise ArchiveRefused(
                f"the tar archive has a {human_size(self.size)} metadata header; headers over "
                f"{human_size(MAX_TAR_METADATA)} are refused",
                "corrupt",
            )
        return super()._proc_member(archive)


def _scan_tar(
    path: Path, compression: str, limits: ArchiveLimits, sink: Sink | None
) -> ArchiveListing:
    archive_bytes = path.stat().st_size
    builder = ListingBuilder("tar", compression, archive_bytes, limits)
    allowed = limits.max_total_bytes
    if compression:
        allowed = min(allowed, max(int(limits.max_ratio * archive_bytes), RATIO_FLOOR))
    # Headers and padding: at most a few blocks per member, plus the end-of-archive record.
    cap = allowed + 4 * tarfile.BLOCKSIZE * (limits.max_members + 1) + tarfile.RECORDSIZE

    def refusal() -> ArchiveRefused:
        if allowed < limits.max_total_bytes:
            return ArchiveRefused(
                f"the archive expands more than {limits.max_ratio:g}x its "
                f"{human_size(archive_bytes)}, which looks like a compression bomb",
                "ratio",
            )
        return ArchiveRefused(
            f"the archive holds more than {human_size(limits.max_total_bytes)} uncompressed; "
            f"the limit is {human_size(limits.max_total_bytes)}",
            "total_size",
        )

    with _OPENERS[compression](path) as raw:
        stream = _CappedStream(raw, cap, refusal)
        try:
            archive = tarfile.open(fileobj=stream, mode="r|", tarinfo=_StrictTarInfo)
        except tarfile.TarError as error:
            raise ArchiveRefused(f"the tar archive is unreadable: {error}", "corrupt") from None
        with archive:
            try:
                for info in archive:
                    _tar_member(archive, info, builder, sink)
            except (tarfile.TarError, UnicodeError) as error:
                raise ArchiveRefused(
                    f"the tar archive is corrupt or truncated: {error}", "corrupt"
                ) from None
    return builder.finish()


def _tar_member(
    archive: tarfile.TarFile, info: tarfile.TarInfo, builder: ListingBuilder, sink: Sink | None
) -> None:
    name = builder.entry(info.name)
    if name is None:
        return
    if info.issym() or info.islnk():
        kind = "symbolic link" if info.issym() else "hard link"
        raise ArchiveRefused(
            f"member {name!r} is a {kind} (to {info.linkname!r}); links are refused", "link"
        )
    if info.isdir():
        builder.add_dir(name)
        return
    if not info.isreg():
        what = {
            tarfile.CHRTYPE: "character device",
            tarfile.BLKTYPE: "block device",
            tarfile.FIFOTYPE: "named pipe (fifo)",
        }.get(info.type, f"special file (tar type {info.type!r})")
        raise ArchiveRefused(
            f"member {name!r} is a {what}; only regular files and folders are accepted",
            "special_file",
        )
    builder.add_file(name, info.size)
    if sink is not None:
        stream = archive.extractfile(info)
        assert stream is not None  # a regular file always has a stream
        with stream:
            sink(name, stream, info.size)


# --- single files ----------------------------------------------------------------------------


def _single_name(path: Path, kind: str, filename: str | None) -> str:
    name = Path(filename).name if filename else path.name
    if not name.lower().endswith(f".{kind}"):
        name = f"{Path(name).stem or 'upload'}.{kind}"
    return safe_member_name(name) or f"upload.{kind}"


def _scan_single(
    path: Path, kind: str, limits: ArchiveLimits, filename: str | None, sink: Sink | None
) -> ArchiveListing:
    size = path.stat().st_size
    builder = ListingBuilder(kind, "", size, limits)
    name = _single_name(path, kind, filename)
    builder.entry(name)
    builder.add_file(name, size)
    if sink is not None:
        with open(path, "rb") as stream:
            sink(name, stream, size)
    return builder.finish()


# --- public API ------------------------------------------------------------------------------


def _scan(
    path: Path, limits: ArchiveLimits, filename: str | None, sink: Sink | None
) -> ArchiveListing:
    kind, compression = _detect(path)
    if kind == "zip":
        return _scan_zip(path, limits, sink)
    if kind == "tar":
        return _scan_tar(path, compression, limits, sink)
    return _scan_single(path, kind, limits, filename, sink)


def inspect_archive(
    path: Path, limits: ArchiveLimits = DEFAULT_LIMITS, *, filename: str | None = None
) -> ArchiveListing:
    """Every file and folder the upload would produce, checked against ``limits``.

    Nothing is written. Refuses (ArchiveRefused) unsafe names, links, special files,
    duplicates, too many members, sizes and ratios over the limits, an empty, corrupt or
    unrecognised upload. A tar is decompressed to read it (within the limits); a zip's
    data is only read on extraction, so damaged zip data is refused there. ``filename``
    names a single JSON/JSONL/CSV upload (default: the uploaded file's own name).
    """
    return _scan(Path(path), limits, filename, None)


class _StagingWriter:
    """Writes accepted members under a fresh staging folder, counting the actual bytes."""

    def __init__(self, root: Path, limits: ArchiveLimits):
        self.root = root
        self.limits = limits
        self.total = 0
        self.written: list[str] = []

    def _make_dirs(self, relative: list[str]) -> Path:
        # The staging folder is new and only we create entries in it, so no part of this
        # path can be a link planted by the archive.
        folder = self.root
        for part in relative:
            folder = folder / part
            if not folder.is_dir():
                folder.mkdir()
                os.chmod(folder, 0o755)
        return folder

    def directory(self, name: str) -> None:
        self._make_dirs(name.split("/"))

    def __call__(self, name: str, stream: BinaryIO, declared: int) -> None:
        parts = name.split("/")
        target = self._make_dirs(parts[:-1]) / parts[-1]
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        written = 0
        with os.fdopen(os.open(target, flags, 0o644), "wb") as out:
            os.fchmod(out.fileno(), 0o644)
            while True:
                try:
                    chunk = stream.read(_CHUNK)
                except ArchiveRefused:
                    raise
                except _READ_ERRORS as error:
                    raise ArchiveRefused(
                        f"member {name!r} is corrupt or truncated: {error}", "corrupt"
                    ) from None
                if not chunk:
                    break
                written += len(chunk)
                self.total += len(chunk)
                self._check(name, written, declared)
                out.write(chunk)
        if written != declared:
            raise ArchiveRefused(
                f"member {name!r} holds {written:,} bytes but its header declares {declared:,}; "
                "the archive is corrupt",
                "corrupt",
            )
        self.written.append(name)

    def _check(self, name: str, written: int, declared: int) -> None:
        limits = self.limits
        if written > declared:
            raise ArchiveRefused(
                f"member {name!r} produces more bytes than the {declared:,} its header declares; "
                "the archive is corrupt or crafted",
                "corrupt",
            )
        if written > limits.max_file_bytes:
            raise ArchiveRefused(
                f"{name!r} is over {human_size(limits.max_file_bytes)} uncompressed; the limit "
                f"for one file is {human_size(limits.max_file_bytes)}",
                "file_size",
            )
        if self.total > limits.max_total_bytes:
            raise ArchiveRefused(
                f"the archive produces more than {human_size(limits.max_total_bytes)} "
                f"(reached at {name!r}); the limit is {human_size(limits.max_total_bytes)}",
                "total_size",
            )


def extract_archive(
    path: Path,
    dest: Path,
    limits: ArchiveLimits = DEFAULT_LIMITS,
    *,
    filename: str | None = None,
) -> list[Path]:
    """Extract the upload at ``path`` into the new folder ``dest``; the files written, in order.

    Inspects first, then streams each member into a staging folder beside ``dest``,
    counting actual bytes (declared sizes can lie) and refusing past the limits; the
    staging folder becomes ``dest`` only when all is well, so on ArchiveRefused (or any
    other error) nothing is left at ``dest``. Links are never created or followed; files
    are written 0o644 and folders 0o755. A single JSON/JSONL/CSV upload is copied as
    ``dest/<filename>``. Raises FileExistsError if ``dest`` exists.
    """
    path, dest = Path(path), Path(dest)
    if dest.exists() or dest.is_symlink():
        raise FileExistsError(f"{dest} already exists; extraction needs a new folder")
    listing = inspect_archive(path, limits, filename=filename)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent))
    try:
        writer = _StagingWriter(staging, limits)
        _scan(path, limits, filename, writer)
        for member in listing.members:
            if member.is_dir:
                writer.directory(member.name)
        os.chmod(staging, 0o755)
        os.rename(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [dest.joinpath(*name.split("/")) for name in writer.written]
