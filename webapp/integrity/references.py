"""Reference code for a competition, read from a zip (an admin's upload) or a folder (an
MLE-bench checkout's ``references/``): ``.py``, ``.ipynb`` (code cells only are compared)
and ``.R`` files, each with a source note.

Notes come from an optional ``sources.csv`` (columns ``path`` and ``source``) at the top;
a file it does not name gets the corpus's own note. Everything is bounded: a refusal says
what to change, and nothing is stored unless the whole corpus was read."""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from benchmark.integrity.winnowing import language_of, source_text

MAX_FILES = 2000
MAX_FILE_BYTES = 2 * 1024**2
MAX_TOTAL_BYTES = 100 * 1024**2
MAX_ARCHIVE_MEMBERS = 20000
SOURCES_FILE = "sources.csv"
MAX_TEMPLATE_PATH = 300  # ScaffoldTemplate.path


class ReferencesRefused(ValueError):
    """The corpus cannot be read as given; the message says why and what to do."""


@dataclass(frozen=True)
class ReferenceEntry:
    path: str
    source: str
    language: str
    text: str

    @property
    def lines(self) -> int:
        return source_text(self.path, self.text).count("\n") + 1


def _clean_path(name: str) -> str | None:
    """A member's path inside the corpus, or None for one to skip (folders, macOS
    metadata); an escaping or absolute path is refused."""
    if "\x00" in name:
        raise ReferencesRefused(f"a file name holds a NUL byte: {name!r}")
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts:
        raise ReferencesRefused(f"{name!r} points outside the corpus; use relative paths")
    if not path.parts or name.endswith("/") or "__MACOSX" in path.parts:
        return None
    if any(part.startswith(".") for part in path.parts):
        return None
    return path.as_posix()


def _decode(name: str, data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").replace("\x00", "")
    if name.lower().endswith(".ipynb") and not source_text(name, text).strip():
        # An .ipynb that is not a notebook, or has no code: nothing to compare.
        raise ReferencesRefused(f"{name} is not a notebook with code cells (JSON with 'cells')")
    return text


def _sources(raw: bytes | None) -> dict[str, str]:
    if raw is None:
        return {}
    try:
        rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ReferencesRefused(f"{SOURCES_FILE} is not a UTF-8 CSV: {exc}") from None
    if rows and not {"path", "source"} <= set(rows[0]):
        raise ReferencesRefused(f"{SOURCES_FILE} needs the columns path and source")
    return {(r.get("path") or "").strip(): (r.get("source") or "").strip()[:500] for r in rows}


def _entries(files: dict[str, bytes], sources_raw: bytes | None, note: str) -> list[ReferenceEntry]:
    notes = _sources(sources_raw)
    entries = []
    for name in sorted(files):
        language = language_of(name)
        if language is None:
            continue
        entries.append(
            ReferenceEntry(
                name, notes.get(name) or note[:500], language, _decode(name, files[name])
            )
        )
    if not entries:
        raise ReferencesRefused("no .py, .ipynb or .R file was found: nothing to compare with")
    return entries


class _Budget:
    def __init__(self) -> None:
        self.files = 0
        self.total = 0

    def take(self, name: str, size: int) -> None:
        self.files += 1
        self.total += size
        if self.files > MAX_FILES:
            raise ReferencesRefused(f"more than {MAX_FILES} code files; split the corpus")
        if size > MAX_FILE_BYTES:
            raise ReferencesRefused(
                f"{name} is larger than {MAX_FILE_BYTES // 1024**2} MB; reference code is "
                "expected to be a notebook or a script"
            )
        if self.total > MAX_TOTAL_BYTES:
            raise ReferencesRefused(f"the code files exceed {MAX_TOTAL_BYTES // 1024**2} MB")


def read_references_zip(stream, note: str = "") -> list[ReferenceEntry]:
    """The reference files of a zip archive (a file object or path)."""
    try:
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ReferencesRefused(f"not a readable zip archive ({exc})") from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_ARCHIVE_MEMBERS:
            raise ReferencesRefused(f"the archive has more than {MAX_ARCHIVE_MEMBERS} entries")
        budget = _Budget()
        files: dict[str, bytes] = {}
        sources_raw = None
        for info in members:
            name = _clean_path(info.filename)
            if name is None or info.is_dir():
                continue
            wanted = language_of(name) is not None or name == SOURCES_FILE
            if not wanted:
                continue
            budget.take(name, info.file_size)
            try:
                with archive.open(info) as member:
                    data = member.read(MAX_FILE_BYTES + 1)  # never trust the header
            except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError) as exc:
                raise ReferencesRefused(f"{name} cannot be read from the archive ({exc})") from None
            if len(data) > MAX_FILE_BYTES:
                budget.take(name, len(data))
            if name == SOURCES_FILE:
                sources_raw = data
            elif name in files:
                raise ReferencesRefused(f"{name} appears twice in the archive")
            else:
                files[name] = data
    return _entries(files, sources_raw, note)


def read_template(name: str, data: bytes) -> tuple[str, str]:
    """A scaffold's template file as stored: its clean path and its text. Refused (with
    what to change) unless it is one .py, .ipynb or .R file of code within the size of a
    reference file."""
    path = _clean_path(name.strip())
    if path is not None and len(path) > MAX_TEMPLATE_PATH:
        raise ReferencesRefused(f"the file name is over {MAX_TEMPLATE_PATH} characters")
    if path is None or language_of(path) is None:
        raise ReferencesRefused(
            f"{name!r}: name the template with its extension, .py, .ipynb or .R (it gives "
            "the language)"
        )
    if len(data) > MAX_FILE_BYTES:
        raise ReferencesRefused(
            f"{path} is larger than {MAX_FILE_BYTES // 1024**2} MB; a template is a script"
        )
    text = _decode(path, data)
    if not source_text(path, text).strip():
        raise ReferencesRefused(f"{path} holds no code")
    return path, text


def read_references_folder(folder: Path, note: str = "") -> list[ReferenceEntry]:
    """The reference files under ``folder`` (symlinks are not followed)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ReferencesRefused(f"{folder} is not a folder")
    budget = _Budget()
    files: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        name = _clean_path(path.relative_to(folder).as_posix())
        if name is None or (language_of(name) is None and name != SOURCES_FILE):
            continue
        size = path.stat().st_size
        budget.take(name, size)
        files[name] = path.read_bytes()
    sources_raw = files.pop(SOURCES_FILE, None)
    return _entries(files, sources_raw, note)
