"""The files of an extracted upload, and the small vocabulary the layout readers share.

``UploadTree`` walks the upload once (links and macOS junk skipped) and answers by
relative POSIX path, so a reader never builds a path from uploaded text that could lead
outside the root. ``UploadLayoutError`` is the refusal every reader raises.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

_NAMED_AT_MOST = 5
_SNIFF_BYTES = 4096


class UploadLayoutError(ValueError):
    """An upload whose contents cannot be taken; the message says what to change."""


def join_rel(folder: str, name: str) -> str:
    """``folder/name`` as a relative POSIX path ("" is the root)."""
    return f"{folder}/{name}" if folder else name


def is_junk(name: str) -> bool:
    """True for the files and folders macOS adds (``__MACOSX``, ``.DS_Store``, ``._*``)."""
    return name in ("__MACOSX", ".DS_Store") or name.startswith("._")


def is_inside(rel: str, folders: Iterable[str]) -> bool:
    """True when ``rel`` is one of ``folders`` or lies under one ("" contains everything)."""
    return any(folder == "" or rel == folder or rel.startswith(folder + "/") for folder in folders)


def name_some(items: list[str]) -> str:
    """The first few ``items`` for a message, saying how many more there are."""
    shown = ", ".join(items[:_NAMED_AT_MOST])
    more = len(items) - _NAMED_AT_MOST
    return shown + (f" (and {more} more)" if more > 0 else "")


def check_seed(value: object, what: str) -> int:
    """``value`` as a seed; UploadLayoutError unless it is a whole number >= 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UploadLayoutError(f"{what} must be a whole number >= 0, not {value!r}")
    return value


def _shared_suffix(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


class UploadTree:
    """The files and folders under the upload's root, as relative POSIX paths."""

    def __init__(self, root: Path):
        self.root = root
        self.files: list[str] = []  # sorted within each folder, folders depth first
        self.dirs: dict[str, list[str]] = {}  # folder -> the names of its sub-folders
        for folder, subdirs, names in os.walk(root):
            rel = Path(folder).relative_to(root).as_posix()
            rel = "" if rel == "." else rel
            # Extraction never creates links; a link here was put by something else and
            # could lead out of the upload, so it is not part of it.
            subdirs[:] = sorted(
                d for d in subdirs if not is_junk(d) and not os.path.islink(Path(folder, d))
            )
            self.dirs[rel] = list(subdirs)
            for name in sorted(names):
                if not is_junk(name) and not os.path.islink(Path(folder, name)):
                    self.files.append(join_rel(rel, name))
        self.file_set = set(self.files)
        self._by_name: dict[bool, dict[str, list[str]]] = {}

    @classmethod
    def from_members(cls, files: dict[str, Path], dirs: dict[str, Path]) -> UploadTree:
        """The tree an archive of these members would unpack to, read where the members
        are now (``files`` and ``dirs``: relative POSIX path -> where it is): what the
        command line checks before it sends anything."""
        tree = cls.__new__(cls)
        tree.root = Path(".")
        tree._where = {**dirs, **files}
        tree.files = []
        tree.dirs = {"": []}
        for rel in sorted({*dirs, *(f.rsplit("/", 1)[0] for f in files if "/" in f)}):
            parts = rel.split("/")
            for depth in range(1, len(parts) + 1):
                folder, parent = "/".join(parts[:depth]), "/".join(parts[: depth - 1])
                if folder not in tree.dirs:
                    tree.dirs[folder] = []
                    tree.dirs.setdefault(parent, []).append(parts[depth - 1])
        for children in tree.dirs.values():
            children.sort()
        by_folder: dict[str, list[str]] = defaultdict(list)
        for rel in files:
            by_folder[rel.rsplit("/", 1)[0] if "/" in rel else ""].append(rel)
        # Folders depth first, files sorted within each, as walking the unpacked tree gives.
        stack = [""]
        while stack:
            folder = stack.pop()
            tree.files.extend(sorted(by_folder.get(folder, [])))
            stack.extend(join_rel(folder, d) for d in reversed(tree.dirs.get(folder, [])))
        tree.file_set = set(tree.files)
        tree._by_name = {}
        return tree

    def path(self, rel: str) -> Path:
        """The filesystem path of ``rel``."""
        where = getattr(self, "_where", None)
        if where is not None:
            return where.get(rel, Path(rel))
        return self.root.joinpath(*rel.split("/")) if rel else self.root

    def is_dir(self, rel: str) -> bool:
        return rel in self.dirs

    def head(self, rel: str) -> bytes:
        """The first few KiB of a file, enough to tell what it is."""
        with open(self.path(rel), "rb") as handle:
            return handle.read(_SNIFF_BYTES)

    def longest_suffix_matches(self, parts: list[str], with_dirs: bool) -> list[str]:
        """The uploaded paths sharing the longest trailing run of components with ``parts``.

        Only paths whose last component equals ``parts[-1]`` are considered; folders too
        when ``with_dirs``. One result is a match, several are ambiguous, none is absent.
        """
        best, matches = 0, []
        for rel in self._named(parts[-1], with_dirs):
            shared = _shared_suffix(rel.split("/"), parts)
            if shared > best:
                best, matches = shared, [rel]
            elif shared == best:
                matches.append(rel)
        return matches

    def _named(self, name: str, with_dirs: bool) -> list[str]:
        if with_dirs not in self._by_name:
            index: dict[str, list[str]] = defaultdict(list)
            for rel in self.files + ([d for d in self.dirs if d] if with_dirs else []):
                index[rel.rsplit("/", 1)[-1]].append(rel)
            self._by_name[with_dirs] = index
        return self._by_name[with_dirs].get(name, [])
