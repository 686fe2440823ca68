"""What an extracted upload holds, checked against the catalogue.

Three layouts are recognised, looked for in this order:

* **run groups** - what MLE-bench's ``run_agent.py`` writes: a folder ``<run_group>/``
  with ``metadata.json`` (``{"run_group", "created_at", "runs": {<run_id>: {...}}}``)
  and one folder per run, ``<competition_id>_<uuid>/``, holding
  ``submission/submission.csv``, ``logs/`` and ``code/``. Several run groups may sit at
  the top of the upload or one level under a top folder.
* **jsonl** - a ``submissions.jsonl`` as ``mlebench grade`` takes it (``competition_id``,
  ``submission_path``, optional ``seed``, ``logs_path``, ``code_path``) plus the files
  it names.
* **reports** - MLE-bench grading-report JSON files (``total_*`` counts and
  ``competition_reports``), one run group per file, taken as reported.

A run without ``submission.csv`` is a run with no submission: a result, not an error.
Everything the uploader must fix raises UploadLayoutError with a message saying what.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from benchmark.reports import CompetitionReport, GradingReportError, parse_grading_report
from benchmark.upload_tree import (
    UploadLayoutError,
    UploadTree,
    check_seed,
    is_inside,
    join_rel,
    name_some,
)

__all__ = [
    "ReportedGroup",
    "SubmittedRun",
    "UploadContents",
    "UploadLayoutError",
    "competition_of",
    "read_upload",
]

RUN_GROUPS, JSONL, REPORTS = "run_groups", "jsonl", "reports"
# Run groups are looked for at the top of the upload and one level below a top folder.
_MAX_GROUP_DEPTH = 2
_SUBMISSION = ("submission", "submission.csv")
_DRIVE = re.compile(r"^[A-Za-z]:$")


@dataclass(frozen=True)
class SubmittedRun:
    """One run to grade: a competition, a seed and what the run produced."""

    competition_id: str
    seed: int
    run_group: str
    run_name: str  # the run folder's name, or `<jsonl name>:<line>`
    submission_path: Path | None  # None: the run made no submission (a result, not an error)
    logs_path: Path | None
    code_path: Path | None


@dataclass(frozen=True)
class ReportedGroup:
    """One seed's grading reports as the uploader reported them (not graded here)."""

    run_group: str
    seed: int
    reports: list[CompetitionReport]  # each report's `seed` is set to `seed`


@dataclass(frozen=True)
class UploadContents:
    """What ``read_upload`` found; every path lies inside the upload's root."""

    kind: str  # run_groups | jsonl | reports
    runs: tuple[SubmittedRun, ...] = ()  # for run_groups and jsonl
    reported: tuple[ReportedGroup, ...] = ()  # for reports
    warnings: tuple[str, ...] = ()


def competition_of(folder_name: str, known_competitions: Iterable[str]) -> str | None:
    """The longest known competition id that ``folder_name`` is, or starts with followed by `_`."""
    matches = [
        cid for cid in known_competitions if folder_name == cid or folder_name.startswith(cid + "_")
    ]
    return max(matches, key=len) if matches else None


# --- run groups ------------------------------------------------------------------------------


@dataclass
class _RunGroup:
    folder: str  # relative to the root ("" when the upload is the run group itself)
    name: str
    alias: str | None  # metadata.json's run_group, when it differs from the folder name
    runs: list[str]  # run folder names, sorted
    missing: list[str]  # runs metadata.json lists that have no folder


_METADATA_SHAPE = (
    'MLE-bench writes {"run_group": ..., "created_at": ..., "runs": {"<run id>": {...}, ...}}'
)


def _read_metadata(tree: UploadTree, rel: str) -> dict | None:
    """A run group's metadata.json. Malformed ones are refused with what is wrong; None
    when it is some other JSON (no ``runs``) in a folder that holds no run folders."""
    try:
        data = json.loads(tree.path(rel).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise UploadLayoutError(f"{rel} is not valid JSON: {error}") from None
    if isinstance(data, dict) and isinstance(data.get("runs"), dict):
        return data
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    holds_runs = any(_looks_like_run(tree, join_rel(folder, d)) for d in tree.dirs.get(folder, []))
    if not isinstance(data, dict):
        if not holds_runs and not isinstance(data, list):
            return None
        raise UploadLayoutError(
            f"{rel} is malformed: it holds a JSON {_json_type(data)}, not an object; "
            f"{_METADATA_SHAPE}"
        )
    runs = data.get("runs")
    if runs is None:
        if not holds_runs:
            return None
        raise UploadLayoutError(
            f"{rel} is malformed: it has no 'runs' (its keys: "
            f"{', '.join(repr(k) for k in list(data)[:6]) or 'none'}); {_METADATA_SHAPE}"
        )
    raise UploadLayoutError(
        f"{rel} is malformed: 'runs' is a JSON {_json_type(runs)}, but must be an object "
        f"keyed by run id; {_METADATA_SHAPE}"
    )


def _json_type(value) -> str:
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "number",
        float: "number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _looks_like_run(tree: UploadTree, folder: str) -> bool:
    return any(tree.is_dir(join_rel(folder, part)) for part in ("submission", "logs", "code"))


def _find_run_groups(tree: UploadTree, known: set[str], warnings: list[str]) -> list[_RunGroup]:
    groups: list[_RunGroup] = []
    frontier = [""]
    for _depth in range(_MAX_GROUP_DEPTH + 1):
        below: list[str] = []
        for folder in frontier:
            metadata_rel = join_rel(folder, "metadata.json")
            metadata = _read_metadata(tree, metadata_rel) if metadata_rel in tree.file_set else None
            if metadata is None:
                below += [join_rel(folder, d) for d in tree.dirs.get(folder, [])]
                continue
            groups.append(_run_group(tree, folder, metadata, known, warnings))
        frontier = below
    return sorted(groups, key=lambda g: (g.name, g.folder))


def _run_group(
    tree: UploadTree, folder: str, metadata: dict, known: set[str], warnings: list[str]
) -> _RunGroup:
    listed = [str(run_id) for run_id in metadata["runs"]]
    for run_id in listed:
        if not run_id or "/" in run_id or "\\" in run_id or run_id in (".", ".."):
            raise UploadLayoutError(
                f"{join_rel(folder, 'metadata.json')} lists run {run_id!r}, which is not a folder name"
            )
    declared = metadata.get("run_group")
    folder_name = folder.rsplit("/", 1)[-1]
    name = folder_name or (declared if isinstance(declared, str) and declared else "run-group")
    runs = []
    for child in tree.dirs.get(folder, []):
        rel = join_rel(folder, child)
        if child in listed or competition_of(child, known) or _looks_like_run(tree, rel):
            runs.append(child)
        else:
            warnings.append(f"{rel}/ is not a run folder of run group {name}; it was ignored")
    missing = sorted(set(listed) - set(runs))
    for run_id in missing:
        warnings.append(
            f"run {run_id} is listed in {join_rel(folder, 'metadata.json')} but has no folder; "
            "it is recorded as no submission"
        )
    alias = declared if isinstance(declared, str) and declared and declared != name else None
    return _RunGroup(folder, name, alias, sorted(runs + missing), missing)


def _group_base_seeds(
    groups: list[_RunGroup], multiplicity: dict[str, int], seeds: dict[str, int] | None
) -> dict[str, int]:
    """The first seed of each run group: the uploader's, else consecutive in name order."""
    bases: dict[str, int] = {}
    if seeds is not None:
        for group in groups:
            for key in (group.name, group.alias):
                if key is not None and key in seeds:
                    bases[group.folder] = check_seed(seeds[key], f"the seed of run group {key}")
                    break
        lacking = [g.name for g in groups if g.folder not in bases]
        if lacking:
            raise UploadLayoutError(
                f"no seed was given for run group(s) {name_some(lacking)}; give a seed for every "
                f"run group (seeds were given for {name_some(sorted(seeds))})"
            )
        return bases
    following = 0
    for group in groups:  # a group holding n seeds of a competition takes n consecutive seeds
        bases[group.folder] = following
        following += multiplicity[group.folder]
    return bases


def _read_run_groups(
    tree: UploadTree,
    groups: list[_RunGroup],
    known: set[str],
    seeds: dict[str, int] | None,
    warnings: list[str],
) -> tuple[list[SubmittedRun], list[str]]:
    unknown: list[str] = []
    competitions: dict[str, dict[str, str | None]] = {}
    multiplicity: dict[str, int] = {}
    for group in groups:
        found = {run: competition_of(run, known) for run in group.runs}
        for run, cid in found.items():
            if cid is None:
                unknown.append(run.rsplit("_", 1)[0] if "_" in run else run)
        competitions[group.folder] = found
        counts = Counter(cid for cid in found.values() if cid)
        multiplicity[group.folder] = max(counts.values(), default=1)
        several = sorted(cid for cid, n in counts.items() if n > 1)
        if several:
            warnings.append(
                f"run group {group.name} holds several runs of the same competition "
                f"({name_some(several)}); their seeds were assigned by position, in the "
                "order of the run folders' names"
            )
    if unknown:
        return [], unknown
    bases = _group_base_seeds(groups, multiplicity, seeds)
    runs = []
    for group in groups:
        position: Counter[str] = Counter()
        for run in group.runs:
            cid = competitions[group.folder][run]
            assert cid is not None
            rel = join_rel(group.folder, run)
            submission = join_rel(rel, "/".join(_SUBMISSION))
            runs.append(
                SubmittedRun(
                    competition_id=cid,
                    seed=bases[group.folder] + position[cid],
                    run_group=group.name,
                    run_name=run,
                    submission_path=tree.path(submission) if submission in tree.file_set else None,
                    logs_path=tree.path(rel + "/logs") if tree.is_dir(rel + "/logs") else None,
                    code_path=tree.path(rel + "/code") if tree.is_dir(rel + "/code") else None,
                )
            )
            position[cid] += 1
    return runs, []


# --- submissions.jsonl ---------------------------------------------------------------------


def _meaningful_lines(text: str) -> Iterable[tuple[int, str]]:
    # Like MLE-bench's reader: blank lines and lines commented out with # or // are skipped.
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "//")):
            yield number, stripped


def _is_submissions_jsonl(tree: UploadTree, rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    if name in ("submissions.jsonl", "submission.jsonl"):
        return True
    text = tree.head(rel).decode("utf-8", errors="replace")
    for _number, line in _meaningful_lines(text):
        try:
            first = json.loads(line)
        except ValueError:
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
        except ValueError as error:
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


def _read_jsonl_runs(
    tree: UploadTree, sources: list[str], known: set[str], warnings: list[str]
) -> tuple[list[SubmittedRun], list[str]]:
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


def _jsonl_names_only(tree: UploadTree, sources: list[str], folders: list[str]) -> bool:
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


# --- grading reports -------------------------------------------------------------------------


def _is_grading_report(tree: UploadTree, rel: str) -> bool:
    head = tree.head(rel).lstrip()
    if head.startswith(b"{"):
        return b'"competition_reports"' in head or b'"total_runs"' in head
    return head.startswith(b"[") and b'"submission_exists"' in head


def _read_reports(
    tree: UploadTree,
    sources: list[str],
    known: set[str],
    seeds: dict[str, int] | None,
    warnings: list[str],
) -> tuple[list[ReportedGroup], list[str]]:
    parsed: list[tuple[str, list[CompetitionReport]]] = []
    for rel in sources:
        try:
            data = json.loads(tree.path(rel).read_text(encoding="utf-8"))
            parsed.append((rel, parse_grading_report(data, name=rel)))
        except (ValueError, UnicodeDecodeError) as error:
            if isinstance(error, GradingReportError):
                raise UploadLayoutError(str(error)) from None
            raise UploadLayoutError(f"{rel} is not valid JSON: {error}") from None
    unknown = [r.competition_id for _rel, reports in parsed for r in reports]
    unknown = [cid for cid in unknown if cid not in known]
    if unknown:
        return [], unknown
    explicit: dict[str, list[tuple[int, CompetitionReport]]] = {}
    positional: list[tuple[str, list[CompetitionReport]]] = []
    for rel, reports in parsed:
        stem, name = Path(rel).stem, Path(rel).name
        given = next((seeds[k] for k in (stem, name) if seeds and k in seeds), None)
        if reports and all(r.seed is not None for r in reports):
            explicit[rel] = [(check_seed(r.seed, f"a seed in {rel}"), r) for r in reports]
        elif given is not None:
            base = check_seed(given, f"the seed of {rel}")
            explicit[rel] = _by_position(rel, reports, base, warnings)
        else:
            positional.append((rel, reports))
    used = {seed for pairs in explicit.values() for seed, _r in pairs}
    following = 0
    for rel, reports in positional:  # files in name order take the next unused seeds
        width = max(Counter(r.competition_id for r in reports).values(), default=1)
        while any(following + i in used for i in range(width)):
            following += 1
        explicit[rel] = _by_position(rel, reports, following, warnings)
        following += width
    groups = []
    for rel in sources:
        by_seed: dict[int, list[CompetitionReport]] = defaultdict(list)
        for seed, report in explicit[rel]:
            by_seed[seed].append(dataclasses.replace(report, seed=seed))
        groups += [ReportedGroup(Path(rel).stem, seed, by_seed[seed]) for seed in sorted(by_seed)]
    return groups, []


def _by_position(
    rel: str, reports: list[CompetitionReport], base: int, warnings: list[str]
) -> list[tuple[int, CompetitionReport]]:
    position: Counter[str] = Counter()
    pairs = []
    for report in reports:
        pairs.append((base + position[report.competition_id], report))
        position[report.competition_id] += 1
    if any(n > 1 for n in position.values()):
        warnings.append(
            f"{rel} holds several reports of the same competition; their seeds were "
            "assigned by position, in file order"
        )
    return pairs


# --- the whole upload ------------------------------------------------------------------------


def _refuse_unknown(unknown: list[str]) -> None:
    distinct = list(dict.fromkeys(unknown))
    raise UploadLayoutError(
        f"the upload names {len(distinct)} competition(s) mleboard does not know: "
        f"{name_some(distinct)}; check the spelling against the catalogue"
    )


def _refuse_duplicates(pairs: Iterable[tuple[str, int, str]]) -> None:
    seen: dict[tuple[str, int], str] = {}
    for cid, seed, where in pairs:
        if (cid, seed) in seen:
            raise UploadLayoutError(
                f"two runs for competition {cid} with seed {seed} ({seen[(cid, seed)]} and "
                f"{where}); each competition may have one run per seed"
            )
        seen[(cid, seed)] = where


def read_upload(
    root: Path, *, known_competitions: set[str], seeds: dict[str, int] | None = None
) -> UploadContents:
    """The runs (or reported grades) an extracted upload holds, with their seeds.

    ``seeds`` maps run-group names (run-group folders, or report file stems) to seeds,
    as the uploader declared them; a JSONL names its seeds itself (``seed``) or takes
    them by order of appearance, so ``seeds`` does not apply to it. Paths in the runs
    are absolute paths under ``root``. Raises UploadLayoutError for unknown competitions,
    an unrecognised upload, a mix of layouts, two runs of one (competition, seed), and
    malformed metadata.json, JSONL lines or grading reports.
    """
    tree = UploadTree(Path(root))
    known = set(known_competitions)
    warnings: list[str] = []
    groups = _find_run_groups(tree, known, warnings)
    run_folders = [join_rel(g.folder, run) for g in groups for run in g.runs]
    loose = [rel for rel in tree.files if not is_inside(rel, run_folders)]
    # Several files of one kind are read in path order, which decides positional seeds.
    loose.sort()
    jsonls = [rel for rel in loose if rel.endswith(".jsonl") and _is_submissions_jsonl(tree, rel)]
    reports = [
        rel
        for rel in loose
        if rel.endswith(".json")
        and rel.rsplit("/", 1)[-1] != "metadata.json"
        and _is_grading_report(tree, rel)
    ]
    if groups and jsonls and _jsonl_names_only(tree, jsonls, [g.folder for g in groups]):
        warnings.append(
            f"{name_some(jsonls)} only indexes the run folders, which are graded directly"
        )
        jsonls = []
    found = [
        (label, items)
        for label, items in (
            ("run-group folders", [g.folder or "." for g in groups]),
            ("submissions JSONL files", jsonls),
            ("grading-report JSON files", reports),
        )
        if items
    ]
    if len(found) > 1:
        described = "; ".join(f"{label} ({name_some(items)})" for label, items in found)
        raise UploadLayoutError(
            f"the upload mixes layouts: {described}; upload one kind per archive"
        )
    if groups:
        runs, unknown = _read_run_groups(tree, groups, known, seeds, warnings)
        kind = RUN_GROUPS
    elif jsonls:
        runs, unknown = _read_jsonl_runs(tree, jsonls, known, warnings)
        kind = JSONL
    elif reports:
        reported, unknown = _read_reports(tree, reports, known, seeds, warnings)
        if unknown:
            _refuse_unknown(unknown)
        _refuse_duplicates(
            (r.competition_id, g.seed, f"{g.run_group}") for g in reported for r in g.reports
        )
        return UploadContents(REPORTS, reported=tuple(reported), warnings=tuple(warnings))
    else:
        raise UploadLayoutError(
            "found nothing to grade; looked for MLE-bench run-group folders (metadata.json "
            "with runs, and <competition>_<id>/submission/submission.csv run folders), a "
            "submissions.jsonl (lines with competition_id and submission_path) and "
            "grading-report JSON files (total_* counts and competition_reports)"
        )
    if unknown:
        _refuse_unknown(unknown)
    _refuse_duplicates((r.competition_id, r.seed, f"{r.run_group}/{r.run_name}") for r in runs)
    return UploadContents(kind, runs=tuple(runs), warnings=tuple(warnings))
