"""A ``submissions.jsonl`` as ``mlebench grade`` takes it, and the files it names.

Each line names ``competition_id`` and ``submission_path``, optionally ``seed``,
``logs_path`` and ``code_path``; blank lines and ``#`` or ``//`` comments are skipped.
A line without a seed takes the next one its competition has free, in order of appearance.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from benchmark.upload_layout.contents import SubmittedRun
from benchmark.upload_tree import UploadLayoutError, UploadTree, check_seed, is_inside, name_some

_DRIVE = re.compile(r"^[A-Za-z]:$")


def _meaningful_lines(text: str) -> Iterable[tuple[int, str]]:
    # Like MLE-bench's reader: blank lines and lines commented out with # or // are skipped.
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "//")):
            yield number, stripped


def is_submissions_jsonl(tree: UploadTree, rel: str) -> bool:
    """True for a file named submissions.jsonl, or whose first line names a submission."""
    name = rel.rsplit("/", 1)[-1]
    if name in ("submissions.jsonl", "submission.jsonl"):
        return True
    text = tree.head(rel).decode("utf-8", errors="replace")
    for _number, line in _meaningful_lines(text):
        try:
            first = json.loads(line)
        except (ValueError, RecursionError):
            return False
        return isinstance(first, dict) and {"competition_id", "submission_path"} <= set(first)
    return False


@dataclass
class _Line:
    source: str  # the JSONL file, relative to the root
    number: int
    entry: dict
    seed: int | None


def _read_jsonl(tree: UploadTree, rel: str) -> list[_Line]:
    try:
        text = tree.path(rel).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise UploadLayoutError(f"{rel} is not UTF-8 text: {error}") from None
    lines = []
    for number, line in _meaningful_lines(text):
        where = f"line {number} of {rel}"
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError) as error:
            raise UploadLayoutError(f"{where} is not valid JSON: {error}") from None
        if not isinstance(entry, dict):
            raise UploadLayoutError(f"{where} is not a JSON object")
        if not isinstance(entry.get("competition_id"), str) or "submission_path" not in entry:
            raise UploadLayoutError(f"{where} needs `competition_id` and `submission_path`")
        seed = entry.get("seed")
        seed = None if seed is None else check_seed(seed, f"the seed on {where}")
        lines.append(_Line(rel, number, entry, seed))
    return lines


def _resolve(tree: UploadTree, line: _Line, key: str, warnings: list[str]) -> str | None:
    """The uploaded file a JSONL path names (relative to the root), or None.

    A relative path is taken from the JSONL's folder; an absolute path, or one that is
    not there, is matched by the longest path suffix it shares with an uploaded file.
    """
    raw = line.entry.get(key)
    if raw is None or raw == "":
        return None
    where = f"line {line.number} of {line.source}"
    text = str(raw)
    parts = [p for p in re.split(r"[\\/]+", text) if p not in ("", ".")]
    absolute = text.startswith(("/", "\\")) or bool(parts and _DRIVE.match(parts[0]))
    with_dirs = key != "submission_path"
    if absolute:
        parts = parts[1:] if parts and _DRIVE.match(parts[0]) else parts
    else:
        stack = line.source.split("/")[:-1]
        for part in parts:
            if part != "..":
                stack.append(part)
            elif stack:
                stack.pop()
            else:
                raise UploadLayoutError(f"{where}: {key} {text!r} points outside the upload")
        candidate = "/".join(stack)
        if candidate in tree.file_set or (with_dirs and candidate and tree.is_dir(candidate)):
            return candidate
        parts = parts[len(parts) - parts[::-1].index("..") :] if ".." in parts else parts
    if not parts:
        return None
    matches = tree.longest_suffix_matches(parts, with_dirs)
    if len(matches) > 1:
        raise UploadLayoutError(
            f"{where}: {key} {text!r} matches several uploaded files ({name_some(matches)}); "
            "give paths relative to the JSONL file"
        )
    if not matches and key == "submission_path":
        warnings.append(f"{where}: {text!r} is not in the upload; recorded as no submission")
    return matches[0] if matches else None


def read_jsonl_runs(
    tree: UploadTree, sources: list[str], known: set[str], warnings: list[str]
) -> tuple[list[SubmittedRun], list[str]]:
    """The runs the JSONL ``sources`` name; or none, and the unknown competitions."""
    lines = [line for rel in sources for line in _read_jsonl(tree, rel)]
    unknown = [
        ln.entry["competition_id"] for ln in lines if ln.entry["competition_id"] not in known
    ]
    if unknown:
        return [], unknown
    taken: dict[str, set[int]] = defaultdict(set)
    for line in lines:
        if line.seed is not None:
            taken[line.entry["competition_id"]].add(line.seed)
    following: Counter[str] = Counter()
    runs = []
    for line in lines:
        cid = line.entry["competition_id"]
        seed = line.seed
        if seed is None:  # in order of appearance, past the seeds other lines name
            while following[cid] in taken[cid]:
                following[cid] += 1
            seed = following[cid]
            following[cid] += 1
        paths = {
            key: _resolve(tree, line, key, warnings)
            for key in ("submission_path", "logs_path", "code_path")
        }
        stem = Path(line.source).stem
        runs.append(
            SubmittedRun(
                competition_id=cid,
                seed=seed,
                run_group=f"{stem}-seed{seed}",
                run_name=f"{Path(line.source).name}:{line.number}",
                **{key: tree.path(rel) if rel else None for key, rel in paths.items()},
            )
        )
    return runs, []


def jsonl_names_only(tree: UploadTree, sources: list[str], folders: list[str]) -> bool:
    """True when every submission a JSONL names lies in these run-group folders.

    Such a JSONL (as MLE-bench's make_submission.py writes one) indexes the run groups
    it ships with; grading the run folders grades the same submissions.
    """
    for rel in sources:
        for line in _read_jsonl(tree, rel):
            found = _resolve(tree, line, "submission_path", [])
            if found is None and line.entry.get("submission_path") is None:
                continue
            if found is None or not is_inside(found, [f for f in folders if f] or [""]):
                return False
    return True
