"""The whole upload: which layout it holds, read by that layout's reader, then checked.

An upload holds one layout only; competitions must be in the catalogue and each
(competition, seed) may have one run.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from benchmark import disclosure
from benchmark.upload_layout.contents import JSONL, REPORTS, RUN_GROUPS, UploadContents
from benchmark.upload_layout.report_files import is_grading_report, read_reports
from benchmark.upload_layout.run_groups import find_run_groups, read_run_groups
from benchmark.upload_layout.submissions_jsonl import (
    is_submissions_jsonl,
    jsonl_names_only,
    read_jsonl_runs,
)
from benchmark.upload_tree import UploadLayoutError, UploadTree, is_inside, join_rel, name_some


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


SUBMISSION_IN_RUN = "submission/submission.csv"


def _refuse_run_folders_without_metadata(tree: UploadTree) -> None:
    """Run folders (``<run>/submission/submission.csv``) in no run group: the refusal
    names the ``metadata.json`` their run-group folder lacks."""
    runs = sorted(
        rel[: -len(SUBMISSION_IN_RUN) - 1]
        for rel in tree.files
        if rel.endswith("/" + SUBMISSION_IN_RUN)
    )
    if not runs:
        return
    groups = sorted({run.rpartition("/")[0] for run in runs})
    where = [f"{g}/metadata.json" if g else "metadata.json" for g in groups]
    raise UploadLayoutError(
        f"metadata.json is missing: found {len(runs)} run folder{'s' if len(runs) != 1 else ''} "
        f"({name_some(runs)}) but no metadata.json beside them; MLE-bench writes one per "
        f"run-group folder, listing its runs. Add {name_some(where)} and upload again"
    )


def read_upload(
    root: Path | UploadTree,
    *,
    known_competitions: set[str],
    seeds: dict[str, int] | None = None,
) -> UploadContents:
    """The runs (or reported grades) an extracted upload holds, with their seeds.

    ``seeds`` maps run-group names (run-group folders, or report file stems) to seeds,
    as the uploader declared them; a JSONL names its seeds itself (``seed``) or takes
    them by order of appearance, so ``seeds`` does not apply to it. Paths in the runs
    are absolute paths under ``root``. Raises UploadLayoutError for unknown competitions,
    an unrecognised upload, a mix of layouts, two runs of one (competition, seed), and
    malformed metadata.json, JSONL lines or grading reports. ``root`` may be a tree of
    members not yet archived (``UploadTree.from_members``).
    """
    tree = root if isinstance(root, UploadTree) else UploadTree(Path(root))
    known = set(known_competitions)
    warnings: list[str] = []
    groups = find_run_groups(tree, known, warnings)
    run_folders = [join_rel(g.folder, run) for g in groups for run in g.runs]
    loose = [rel for rel in tree.files if not is_inside(rel, run_folders)]
    # Several files of one kind are read in path order, which decides positional seeds.
    loose.sort()
    jsonls = [rel for rel in loose if rel.endswith(".jsonl") and is_submissions_jsonl(tree, rel)]
    reports = [
        rel
        for rel in loose
        if rel.endswith(".json")
        and rel.rsplit("/", 1)[-1] != "metadata.json"
        and is_grading_report(tree, rel)
    ]
    if groups and jsonls and jsonl_names_only(tree, jsonls, [g.folder for g in groups]):
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
        runs, unknown = read_run_groups(tree, groups, known, seeds, warnings)
        kind = RUN_GROUPS
    elif jsonls:
        runs, unknown = read_jsonl_runs(tree, jsonls, known, warnings)
        kind = JSONL
    elif reports:
        reported, unknown = read_reports(tree, reports, known, seeds, warnings)
        if unknown:
            _refuse_unknown(unknown)
        _refuse_duplicates(
            (r.competition_id, g.seed, f"{g.run_group}") for g in reported for r in g.reports
        )
        return UploadContents(
            REPORTS,
            reported=tuple(reported),
            warnings=tuple(warnings),
            disclosure=read_disclosure(tree, loose),
        )
    else:
        _refuse_run_folders_without_metadata(tree)
        raise UploadLayoutError(
            "found nothing to grade; looked for MLE-bench run-group folders (metadata.json "
            "with runs, and <competition>_<id>/submission/submission.csv run folders), a "
            "submissions.jsonl (lines with competition_id and submission_path) and "
            "grading-report JSON files (total_* counts and competition_reports)"
        )
    if unknown:
        _refuse_unknown(unknown)
    _refuse_duplicates((r.competition_id, r.seed, f"{r.run_group}/{r.run_name}") for r in runs)
    return UploadContents(
        kind, runs=tuple(runs), warnings=tuple(warnings), disclosure=read_disclosure(tree, loose)
    )


def read_disclosure(tree: UploadTree, loose: list[str]) -> dict:
    """The archive's disclosure file (``disclosure.yaml``, ``.yml`` or ``.json``, outside
    the run folders), checked; {} when there is none. Two are refused: which one counts
    would be a guess."""
    found = [rel for rel in loose if rel.rsplit("/", 1)[-1].lower() in disclosure.FILE_NAMES]
    if not found:
        return {}
    if len(found) > 1:
        raise UploadLayoutError(
            f"the upload holds {len(found)} disclosure files ({name_some(found)}); keep one"
        )
    path = tree.path(found[0])
    with path.open("rb") as handle:
        data = handle.read(disclosure.MAX_FILE_BYTES + 1)
    try:
        return disclosure.read_file(data, found[0])
    except disclosure.DisclosureError as error:
        raise UploadLayoutError(f"the conditions it discloses are not valid: {error}") from None
