"""The rules an uploaded archive must keep, applied member by member.

The limits (``ArchiveLimits``), what a refusal says (``ArchiveRefused``), what inspection
reports (``ArchiveListing``), which member names are safe, and ``ListingBuilder``, which
checks each member as a reader meets it so a bad archive is refused at its first bad
entry. The readers and the extraction live in ``benchmark.archive``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MiB = 1024**2
# Ratios are only judged above this many uncompressed bytes: tiny files (and tar's
# padding blocks) compress far better than 200x without being a bomb.
RATIO_FLOOR = 1 * MiB
SINGLE_FILE_KINDS = ("json", "jsonl", "csv")
MAX_NAME_BYTES = 255  # one file or folder name, as Linux filesystems allow
MAX_PATH_BYTES = 1024  # a whole member path, leaving room for the destination's own path


@dataclass(frozen=True)
class ArchiveLimits:
    """What an upload may hold. Every limit is refused with a message naming it."""

    max_members: int = 20_000  # entries of every kind, folders and macOS junk included
    max_total_bytes: int = 2 * 1024**3  # uncompressed, all members
    max_file_bytes: int = 512 * 1024**2  # any single member (a CSV over this is refused)
    max_ratio: float = 200.0  # uncompressed/compressed, per member and overall (above 1 MiB)


DEFAULT_LIMITS = ArchiveLimits()


class ArchiveRefused(ValueError):
    """An upload that is refused; the message names the member and the limit.

    ``reason`` is a short stable code for programs: ``not_archive``, ``corrupt``,
    ``empty``, ``unsafe_path``, ``link``, ``special_file``, ``encrypted``,
    ``too_many_members``, ``total_size``, ``file_size``, ``ratio``, ``duplicate``.
    """

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class ArchiveMember:
    """One file or folder an archive would produce, under its normalised relative name."""

    name: str  # POSIX relative path, no `.`/`..` components, no trailing slash
    size: int  # declared uncompressed bytes (0 for folders)
    is_dir: bool = False
    compressed_size: int | None = None  # zip only; a tar is compressed as one stream


@dataclass(frozen=True)
class ArchiveListing:
    """What ``inspect_archive`` found: everything that would be extracted, nothing written."""

    kind: str  # zip | tar | json | jsonl | csv
    compression: str  # "" | gz | bz2 | xz (tar only)
    archive_bytes: int  # size of the uploaded file
    members: tuple[ArchiveMember, ...]  # files and folders that would be extracted, in order
    ignored: tuple[str, ...] = ()  # macOS junk that is skipped

    @property
    def files(self) -> tuple[ArchiveMember, ...]:
        """The regular files only."""
        return tuple(m for m in self.members if not m.is_dir)

    @property
    def total_bytes(self) -> int:
        """Declared uncompressed bytes of all files."""
        return sum(m.size for m in self.members)


def human_size(n: float) -> str:
    """``n`` bytes for a person: 512 MiB, 1.5 GiB, 300 bytes."""
    for unit, scale in (("GiB", 1024**3), ("MiB", MiB), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{int(n)} bytes"


# --- member checks shared by zip and tar -------------------------------------------------

_DRIVE = re.compile(r"^[A-Za-z]:")


def safe_member_name(raw: str) -> str:
    """The normalised relative name of a member, or ArchiveRefused if it could escape."""
    if "\x00" in raw:
        raise ArchiveRefused(f"member {raw!r} has a NUL byte in its name", "unsafe_path")
    if "\\" in raw or _DRIVE.match(raw):
        raise ArchiveRefused(
            f"member {raw!r} uses a Windows path (backslash or drive letter); "
            "re-create the archive with '/' separators and relative paths",
            "unsafe_path",
        )
    if raw.startswith("/"):
        raise ArchiveRefused(
            f"member {raw!r} has an absolute path; archive paths must be relative", "unsafe_path"
        )
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ArchiveRefused(
            f"member {raw!r} climbs out of the archive folder with '..'", "unsafe_path"
        )
    # Names the filesystem would reject must be refused here, as the uploader's mistake,
    # rather than fail later as a write error that looks like ours.
    sizes = [len(part.encode("utf-8", "surrogateescape")) for part in parts]
    if any(size > MAX_NAME_BYTES for size in sizes) or sum(sizes) > MAX_PATH_BYTES:
        raise ArchiveRefused(
            f"member {raw[:60]!r}... has a name too long to write (over {MAX_NAME_BYTES} bytes "
            f"per folder or file name, or {MAX_PATH_BYTES} in all)",
            "unsafe_path",
        )
    return "/".join(parts)


def is_macos_junk(name: str) -> bool:
    """True for the files macOS adds to archives (``__MACOSX/``, ``.DS_Store``, ``._*``)."""
    parts = name.split("/")
    return parts[0] == "__MACOSX" or parts[-1] == ".DS_Store" or parts[-1].startswith("._")


@dataclass
class ListingBuilder:
    """Applies the limits member by member, so a bad archive is refused at its first bad entry."""

    kind: str
    compression: str
    archive_bytes: int
    limits: ArchiveLimits
    entries: int = 0
    total: int = 0
    members: list[ArchiveMember] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    files: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)

    def entry(self, raw: str) -> str | None:
        """Count one raw entry; its safe name, or None when it is junk to skip (or the root)."""
        self.entries += 1
        if self.entries > self.limits.max_members:
            raise ArchiveRefused(
                f"the archive has more than {self.limits.max_members:,} members "
                f"(files and folders); the limit is {self.limits.max_members:,}",
                "too_many_members",
            )
        name = safe_member_name(raw)
        if name and is_macos_junk(name):
            self.ignored.append(name)
            return None
        return name or None

    def add_dir(self, name: str) -> None:
        if name in self.files:
            raise ArchiveRefused(
                f"{name!r} is both a file and a folder in the archive", "duplicate"
            )
        if name not in self.dirs:
            self.members.append(ArchiveMember(name=name, size=0, is_dir=True))
            self._add_parents(name + "/x")
            self.dirs.add(name)

    def add_file(self, name: str, size: int, compressed: int | None = None) -> None:
        limits = self.limits
        if name in self.files:
            raise ArchiveRefused(f"{name!r} appears twice in the archive", "duplicate")
        if name in self.dirs:
            raise ArchiveRefused(
                f"{name!r} is both a file and a folder in the archive", "duplicate"
            )
        if size > limits.max_file_bytes:
            unpacked = "" if self.kind in SINGLE_FILE_KINDS else " uncompressed"
            raise ArchiveRefused(
                f"{name!r} is {human_size(size)}{unpacked}; the limit for one file is "
                f"{human_size(limits.max_file_bytes)}",
                "file_size",
            )
        if compressed is not None and size > RATIO_FLOOR and size > limits.max_ratio * compressed:
            ratio = size / max(compressed, 1)
            raise ArchiveRefused(
                f"{name!r} expands {ratio:,.0f}x ({human_size(compressed)} to {human_size(size)}), "
                f"which looks like a compression bomb; the limit is {limits.max_ratio:g}x",
                "ratio",
            )
        self.total += size
        if self.total > limits.max_total_bytes:
            raise ArchiveRefused(
                f"the archive holds more than {human_size(limits.max_total_bytes)} uncompressed "
                f"(reached at {name!r}); the limit is {human_size(limits.max_total_bytes)}",
                "total_size",
            )
        self._check_overall_ratio(name)
        self._add_parents(name)
        self.files.add(name)
        self.members.append(ArchiveMember(name=name, size=size, compressed_size=compressed))

    def _check_overall_ratio(self, name: str) -> None:
        if self.kind in SINGLE_FILE_KINDS or (self.kind == "tar" and not self.compression):
            return  # stored as is: nothing to expand
        if self.total > RATIO_FLOOR and self.total > self.limits.max_ratio * self.archive_bytes:
            raise ArchiveRefused(
                f"the archive expands more than {self.limits.max_ratio:g}x "
                f"({human_size(self.archive_bytes)} to over {human_size(self.total)}, reached at "
                f"{name!r}), which looks like a compression bomb; the limit is "
                f"{self.limits.max_ratio:g}x",
                "ratio",
            )

    def _add_parents(self, name: str) -> None:
        parts = name.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            parent = "/".join(parts[:depth])
            if parent in self.files:
                raise ArchiveRefused(
                    f"{parent!r} is both a file and a folder in the archive", "duplicate"
                )
            self.dirs.add(parent)

    def finish(self) -> ArchiveListing:
        if not self.files:
            raise ArchiveRefused("the archive holds no files", "empty")
        return ArchiveListing(
            kind=self.kind,
            compression=self.compression,
            archive_bytes=self.archive_bytes,
            members=tuple(self.members),
            ignored=tuple(self.ignored),
        )
