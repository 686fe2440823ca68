"""MLE-bench run-group folders, as its ``run_agent.py`` writes them.

A run group is a folder ``<run_group>/`` with ``metadata.json``
(``{"run_group", "created_at", "runs": {<run_id>: {...}}}``) and one folder per run,
``<competition_id>_<uuid>/``, holding ``submission/submission.csv``, ``logs/`` and
``code/``. Several run groups may sit at the top of the upload or one level under a top
folder. A run group takes its seeds from the uploader, else consecutive ones in name order.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from benchmark.upload_layout.contents import SubmittedRun, competition_of
from benchmark.upload_layout.run_extras import run_facts, run_snapshots, run_usage
from benchmark.upload_tree import UploadLayoutError, UploadTree, check_seed, join_rel, name_some

# Run groups are looked for at the top of the upload and one level below a top folder.
_MAX_GROUP_DEPTH = 2
_SUBMISSION = ("submission", "submission.csv")


@dataclass
class RunGroup:
    """A run-group folder found in the upload, with its run folders."""

    folder: str  # relative to the root ("" when the upload is the run group itself)
    name: str
    alias: str | None  # metadata.json's run_group, when it differs from the folder name
    runs: list[str]  # run folder names, sorted
    missing: list[str]  # runs metadata.json lists that have no folder
    entries: dict  # metadata.json's runs: run id -> what it says of the run


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


def find_run_groups(tree: UploadTree, known: set[str], warnings: list[str]) -> list[RunGroup]:
    """The run groups (folders with a run group's metadata.json), sorted by name."""
    groups: list[RunGroup] = []
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
) -> RunGroup:
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
    return RunGroup(folder, name, alias, sorted(runs + missing), missing, metadata["runs"])


def _group_base_seeds(
    groups: list[RunGroup], multiplicity: dict[str, int], seeds: dict[str, int] | None
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


def read_run_groups(
    tree: UploadTree,
    groups: list[RunGroup],
    known: set[str],
    seeds: dict[str, int] | None,
    warnings: list[str],
) -> tuple[list[SubmittedRun], list[str]]:
    """The runs of ``groups`` with their seeds; or none, and the unknown competitions."""
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
            entry = group.entries.get(run)
            usage_where = f"{join_rel(group.folder, 'metadata.json')}: runs.{run}.usage"
            runs.append(
                SubmittedRun(
                    competition_id=cid,
                    seed=bases[group.folder] + position[cid],
                    run_group=group.name,
                    run_name=run,
                    submission_path=tree.path(submission) if submission in tree.file_set else None,
                    logs_path=tree.path(rel + "/logs") if tree.is_dir(rel + "/logs") else None,
                    code_path=tree.path(rel + "/code") if tree.is_dir(rel + "/code") else None,
                    snapshots=run_snapshots(tree, rel, warnings),
                    usage=run_usage(entry, usage_where),
                    facts=run_facts(tree, rel, entry),
                )
            )
            position[cid] += 1
    return runs, []
