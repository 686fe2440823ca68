"""What an agent left behind, read safely: a run's folder (an uploaded run's folder in
its extracted archive, or an agent run's output folder), its files listed, paged, searched,
highlighted and zipped. Every path asked for is confined to the run's folder: ``..``,
absolute paths and symlinks are refused (``PathRefused``, a 404 to the caller); large
files are only ever read in bounded chunks."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmark.file_seek import seek_clamped
from benchmark.trajectory import JournalError, Trajectory, read_journal
from runner.spec import CODE_DIR, LOGS_DIR, RUN_LOG, SUBMISSION_DIR, VALIDATION_CALLS
from webapp.results.models import Run, Upload
from webapp.results.selectors import experiments_visible_to
from webapp.runs.models import AgentRun
from webapp.runs.selectors import agent_runs_visible_to

PAGE_BYTES = 64 * 1024
MAX_PAGE_BYTES = 1024 * 1024
SEARCH_CHUNK = 1024 * 1024
SEARCH_MAX_HITS = 200
SEARCH_MAX_BYTES = 2 * 1024**3
SNIPPET_CHARS = 240
MAX_LISTED = 5000
MAX_DEPTH = 12
CODE_MAX_BYTES = 512 * 1024
ZIP_MAX_BYTES = 2 * 1024**3
HEAD_BYTES = 64 * 1024
HEAD_ROWS = 20
TIMELINE_EVENTS = 200
CODE_SUFFIXES = {".py", ".ipynb", ".sh", ".r", ".jl", ".cpp", ".c", ".h", ".js", ".ts", ".yaml"}
CODE_SUFFIXES |= {".yml", ".toml", ".cfg", ".json", ".md", ".txt", ".sql", ".java", ".rs"}


class PathRefused(LookupError):
    """A path outside the run's folder, through a symlink, or not a regular file."""


@dataclass
class RunRef:
    """One run as its page shows it: the graded run, the agent run, or both."""

    kind: str  # "result" (a results Run) or "agent" (an AgentRun)
    pk: int
    run: Run | None
    agent_run: AgentRun | None
    folder: Path | None

    @property
    def competition_id(self) -> str:
        return (self.run or self.agent_run).competition.slug

    @property
    def seed(self) -> int:
        return (self.run or self.agent_run).seed


def run_ref_for(user, kind: str, pk: int) -> RunRef | None:
    """The run ``kind``/``pk`` if ``user`` may see it (as they see its experiment, or
    its launch for an agent run not graded yet); None otherwise."""
    if kind == "result":
        run = (
            Run.objects.filter(pk=pk, experiment__in=experiments_visible_to(user).values("pk"))
            .select_related("experiment", "competition")
            .first()
        )
        if run is None:
            return None
        agent_run = AgentRun.objects.filter(result_run=run).first()
        folder = _agent_folder(agent_run) if agent_run else upload_run_folder(run)
        return RunRef("result", pk, run, agent_run, folder)
    if kind == "agent":
        agent_run = agent_runs_visible_to(user).filter(pk=pk).select_related("result_run").first()
        if agent_run is None:
            return None
        return RunRef("agent", pk, agent_run.result_run, agent_run, _agent_folder(agent_run))
    return None


def result_run_folder(run: Run) -> Path | None:
    """A graded run's folder: its agent run's outputs, or its folder in the upload."""
    agent_run = AgentRun.objects.filter(result_run=run).first()
    return _agent_folder(agent_run) if agent_run else upload_run_folder(run)


def _agent_folder(agent_run: AgentRun) -> Path | None:
    if not agent_run.output_dir:
        return None
    folder = Path(agent_run.output_dir)
    return folder if folder.is_dir() and not folder.is_symlink() else None


def upload_run_folder(run: Run) -> Path | None:
    """An uploaded run's folder in its extracted archive (kept after reading):
    ``<run>/submission/submission.csv`` names it; without a submission, the run group's
    folders of the run's competition, in name order, are matched to its seeds in order
    as the reader assigned them."""
    from webapp.results.uploads.services import extraction_dir

    upload = Upload.objects.filter(experiment_id=run.experiment_id).first()
    if upload is None:
        return None
    root = extraction_dir(upload)
    if not root.is_dir():
        return None
    root = root.resolve()
    if run.submission_path:
        candidate = Path(run.submission_path).parent.parent
        if _inside(root, candidate) and candidate.is_dir():
            return candidate
    if not run.run_group:
        return None
    groups = [root / run.run_group]
    groups += [d / run.run_group for d in _subdirs(root)]
    prefix = f"{run.competition.slug}_"
    for group in groups:
        if not group.is_dir() or group.is_symlink():
            continue
        folders = sorted(d for d in _subdirs(group) if d.name.startswith(prefix))
        seeds = sorted(
            Run.objects.filter(
                experiment_id=run.experiment_id,
                run_group=run.run_group,
                competition_id=run.competition_id,
            ).values_list("seed", flat=True)
        )
        if run.seed in seeds and seeds.index(run.seed) < len(folders):
            return folders[seeds.index(run.seed)]
    return None


def _subdirs(folder: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _inside(root: Path, path: Path) -> bool:
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return False
    return resolved != root and resolved.is_relative_to(root)


def safe_file(folder: Path, rel: str) -> Path:
    """``rel`` as a regular file of ``folder``, or PathRefused: no ``..``, no absolute
    path, no symlink anywhere on the way, nothing resolving outside."""
    if not rel or "\x00" in rel or "\\" in rel or rel.startswith("/") or len(rel) > 1000:
        raise PathRefused(rel)
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise PathRefused(rel)
    current = folder
    for part in parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            raise PathRefused(rel) from None
        if stat.S_ISLNK(mode):
            raise PathRefused(rel)
    if not stat.S_ISREG(mode) or not _inside(folder.resolve(), current):
        raise PathRefused(rel)
    return current


def _open(path: Path):
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    return os.fdopen(fd, "rb")


def file_kind(rel: str) -> str:
    top = rel.split("/", 1)[0]
    if top == CODE_DIR or Path(rel).suffix.lower() in {".py", ".ipynb"}:
        return "code"
    if top == SUBMISSION_DIR:
        return "submission"
    if top == LOGS_DIR or rel == RUN_LOG or rel.endswith(".log"):
        return "log"
    return "other"


def list_files(folder: Path) -> tuple[list[dict], bool]:
    """Regular files under ``folder`` (symlinks skipped, not followed), sorted, capped;
    True when the list was cut."""
    out: list[dict] = []
    stack = [(folder, "", 0)]
    while stack:
        current, prefix, depth = stack.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if depth < MAX_DEPTH:
                    stack.append((Path(entry.path), rel + "/", depth + 1))
            elif entry.is_file(follow_symlinks=False):
                size = entry.stat(follow_symlinks=False).st_size
                out.append({"path": rel, "size": size, "kind": file_kind(rel)})
                if len(out) >= MAX_LISTED:
                    return sorted(out, key=lambda f: f["path"]), True
    return sorted(out, key=lambda f: f["path"]), False


def _decode(data: bytes, at_end: bool) -> tuple[str, int]:
    """Text of ``data`` and the bytes used: a character cut at the end of a page is left
    for the next page."""
    if not at_end:
        for cut in range(0, 4):
            try:
                return data[: len(data) - cut].decode("utf-8"), len(data) - cut
            except UnicodeDecodeError:
                continue
    return data.decode("utf-8", "replace"), len(data)


def read_page(path: Path, offset: int = 0, length: int = PAGE_BYTES) -> dict:
    """``length`` bytes (capped) of ``path`` from byte ``offset``."""
    length = max(1, min(int(length), MAX_PAGE_BYTES))
    offset = max(0, int(offset))
    with _open(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        seek_clamped(handle, offset)
        data = handle.read(length)
    at_end = offset + len(data) >= size
    text, used = _decode(data, at_end)
    end = offset + used
    return {
        "size": size,
        "offset": offset,
        "length": used,
        "next_offset": None if end >= size else end,
        "eof": end >= size,
        "text": text,
    }


def search_file(path: Path, query: str, max_hits: int = SEARCH_MAX_HITS) -> dict:
    """Lines of ``path`` holding ``query`` (case-insensitive), read in chunks: line
    numbers, byte offsets of the lines and snippets around the match, capped."""
    needle = query.lower()
    hits: list[dict] = []
    line_no = 1
    line_start = 0
    carry = b""
    scanned = 0
    truncated = False
    with _open(path) as handle:
        while True:
            chunk = handle.read(SEARCH_CHUNK)
            scanned += len(chunk)
            data = carry + chunk
            lines = data.split(b"\n")
            carry = lines.pop() if chunk else b""
            if not chunk and not data:
                break
            if len(carry) > SEARCH_CHUNK:  # one enormous line: search it in pieces
                lines.append(carry)
                carry = b""
                joined_partial = True
            else:
                joined_partial = False
            for position, raw in enumerate(lines):
                text = raw.decode("utf-8", "replace")
                at = text.lower().find(needle)
                if at >= 0:
                    start = max(0, at - SNIPPET_CHARS // 2)
                    hits.append(
                        {
                            "line": line_no,
                            "offset": line_start,
                            "snippet": text[start : start + SNIPPET_CHARS],
                            "column": at,
                        }
                    )
                    if len(hits) >= max_hits:
                        truncated = True
                        break
                last_piece = joined_partial and position == len(lines) - 1
                line_start += len(raw) + (0 if last_piece else 1)
                if not last_piece:
                    line_no += 1
            if truncated or not chunk or scanned >= SEARCH_MAX_BYTES:
                truncated = truncated or (bool(chunk) and scanned >= SEARCH_MAX_BYTES)
                break
    return {"query": query, "hits": hits, "truncated": truncated}


def highlighted(path: Path, max_bytes: int = CODE_MAX_BYTES) -> dict:
    """The file as HTML highlighted by Pygments, when it is at most ``max_bytes``."""
    size = path.stat().st_size
    if size > max_bytes:
        return {"html": "", "too_large": True, "size": size}
    with _open(path) as handle:
        text = handle.read(max_bytes).decode("utf-8", "replace")
    return {"html": highlight_code(text, path.name), "too_large": False, "size": size}


def highlight_code(text: str, filename: str = "code.py") -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer, get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(filename, stripnl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False)
    return highlight(text, lexer, HtmlFormatter(cssclass="highlight", wrapcode=True))


def highlight_css() -> str:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(cssclass="highlight").get_style_defs(".highlight")


def submission_head(folder: Path) -> dict | None:
    """The first rows of ``submission/submission.csv`` (at most 64 KB read)."""
    try:
        path = safe_file(folder, "submission/submission.csv")
    except PathRefused:
        return None
    with _open(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(HEAD_BYTES)
    lines = data.decode("utf-8", "replace").splitlines()
    if len(data) < size and lines:
        lines = lines[:-1]  # the last line may be cut
    rows = list(csv.reader(io.StringIO("\n".join(lines[: HEAD_ROWS + 1]))))
    return {
        "header": rows[0] if rows else [],
        "rows": rows[1:],
        "size": size,
        "more": len(lines) > HEAD_ROWS + 1 or len(data) < size,
    }


def find_journal(folder: Path) -> str | None:
    """The path of the first ``journal.json`` under ``logs/`` (shallowest first)."""
    found = [
        f["path"]
        for f in list_files(folder)[0]
        if f["path"].startswith("logs/") and f["path"].rsplit("/", 1)[-1] == "journal.json"
    ]
    return min(found, key=lambda p: (p.count("/"), p)) if found else None


def trajectory_of(folder: Path) -> tuple[str | None, Trajectory | None, str]:
    """The journal's path, its tree, and an error message when it cannot be read."""
    rel = find_journal(folder)
    if rel is None:
        return None, None, ""
    try:
        return rel, read_journal(safe_file(folder, rel)), ""
    except (JournalError, PathRefused, OSError) as error:
        return rel, None, str(error) or "journal.json cannot be read"


TIMELINE_KEYS = ("type", "action", "observation", "event", "kind", "role")


def _event(record) -> dict | None:
    if not isinstance(record, dict):
        return None
    kind = next((k for k in TIMELINE_KEYS if isinstance(record.get(k), str)), None)
    if kind is None:
        return None
    label = record[kind] if kind not in ("action", "observation") else f"{kind}: {record[kind]}"
    body = ""
    for key in ("message", "content", "thought", "command", "code", "args", "text", "output"):
        value = record.get(key)
        if value:
            body = value if isinstance(value, str) else json.dumps(value, default=str)
            break
    when = next(
        (str(record[k]) for k in ("timestamp", "time", "ts", "created_at") if record.get(k)), ""
    )
    return {"label": str(label)[:120], "time": when[:40], "body": body[:4000]}


def looks_like_timeline(path: Path) -> bool:
    """JSON lines whose first records name a type, an action or an observation."""
    with _open(path) as handle:
        head = handle.read(HEAD_BYTES)
    records = 0
    for line in head.split(b"\n")[:20]:
        line = line.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            return False
        if _event(record) is None:
            return False
        records += 1
    return records > 0


def timeline_page(path: Path, offset: int = 0, limit: int = TIMELINE_EVENTS) -> dict:
    """Events of a JSON-lines log from byte ``offset``: at most ``limit`` events or
    1 MiB read; lines that are not events are shown as text."""
    events = []
    with _open(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        position = seek_clamped(handle, offset)
        while len(events) < limit and position - offset < MAX_PAGE_BYTES:
            line = handle.readline(MAX_PAGE_BYTES)
            if not line:
                break
            position += len(line)
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                event = _event(json.loads(text))
            except ValueError:
                event = None
            events.append(event or {"label": "text", "time": "", "body": text[:4000]})
    return {"events": events, "next_offset": position if position < size else None, "size": size}


class _Pipe(io.RawIOBase):
    """A write-only stream whose bytes are collected for a streamed response."""

    def __init__(self):
        self.parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        return data


def zip_size(folder: Path) -> int:
    files, _cut = list_files(folder)
    return sum(f["size"] for f in files)


def zip_stream(folder: Path, name: str) -> Iterator[bytes]:
    """A zip of the run's regular files (symlinks never followed), made as it is sent."""
    files, _cut = list_files(folder)
    pipe = _Pipe()
    with zipfile.ZipFile(pipe, "w", zipfile.ZIP_DEFLATED) as archive:
        for entry in files:
            try:
                path = safe_file(folder, entry["path"])
                source = _open(path)
            except (PathRefused, OSError):
                continue
            with source, archive.open(f"{name}/{entry['path']}", "w", force_zip64=True) as out:
                while chunk := source.read(SEARCH_CHUNK):
                    out.write(chunk)
                    yield pipe.take()
            yield pipe.take()
    yield pipe.take()


VALIDATION_CALLS_FILE = VALIDATION_CALLS
VALIDATION_CALLS_SHOWN = 500
_TAIL_CHUNK = 64 * 1024
_TAIL_MAX_BYTES = 4 * 1024 * 1024  # 500 lines of capped answers fit well within it


def find_validation_calls(folder: Path, files: list[dict] | None, agent: bool) -> str | None:
    """The run's ``validation_calls.jsonl``: the harness's, at the top of an agent run's
    folder (never one the agent wrote under ``logs/``); for an uploaded run, the first one
    anywhere in its folder."""
    try:
        safe_file(folder, VALIDATION_CALLS_FILE)
        return VALIDATION_CALLS_FILE
    except PathRefused:
        pass
    if agent:
        return None
    if files is None:
        files = list_files(folder)[0]
    for f in files:
        if f["path"].rsplit("/", 1)[-1] == VALIDATION_CALLS_FILE:
            return f["path"]
    return None


def _tail_lines(path: Path, count: int) -> tuple[list[bytes], bool]:
    """The last ``count`` lines of ``path``, read backwards in chunks (bounded bytes), and
    whether earlier lines were left out."""
    with _open(path) as f:
        end = f.seek(0, os.SEEK_END)
        data = b""
        position = end
        while position > 0 and data.count(b"\n") <= count and end - position < _TAIL_MAX_BYTES:
            step = min(_TAIL_CHUNK, position)
            position -= step
            seek_clamped(f, position)
            data = f.read(step) + data
    lines = data.split(b"\n")
    if position > 0:
        lines = lines[1:]  # the first one is cut
    lines = [line for line in lines if line.strip()]
    return lines[-count:], position > 0 or len(lines) > count


def _elapsed_text(seconds) -> str:
    if not isinstance(seconds, int | float) or isinstance(seconds, bool) or seconds < 0:
        return "—"
    total = int(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min {secs} s"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{secs} s"


def validation_calls(folder: Path, rel: str, count: int = VALIDATION_CALLS_SHOWN) -> dict:
    """The last ``count`` recorded validation calls of ``rel``, oldest first, each with its
    elapsed time as text; lines that are not call records are skipped."""
    try:
        path = safe_file(folder, rel)
        raw, more = _tail_lines(path, count)
    except (PathRefused, OSError):
        return {"file": rel, "calls": [], "truncated": False}
    calls = []
    for line in raw:
        try:
            record = json.loads(line.decode("utf-8", "replace"))
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        valid = record.get("valid")
        status = record.get("status")
        elapsed = record.get("elapsed_s")
        calls.append(
            {
                "at": str(record.get("at") or "")[:40],
                "elapsed_s": elapsed if isinstance(elapsed, int | float) else None,
                "elapsed": _elapsed_text(elapsed),
                "status": status if isinstance(status, int) else None,
                "valid": valid if isinstance(valid, bool) else None,
                "message": str(record.get("message") or "")[:2000],
                "bytes": record.get("bytes") if isinstance(record.get("bytes"), int) else None,
            }
        )
    return {"file": rel, "calls": calls, "truncated": more}
