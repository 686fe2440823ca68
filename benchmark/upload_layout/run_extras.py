"""What a run folder of an upload says beyond its submission: snapshots, tokens, how it went.

- **Snapshots**: ``snapshots/<elapsed_seconds>/submission.csv`` (or mleboard's own
  ``snapshots/submission_<elapsed_seconds>s.csv``), at most ``MAX_SNAPSHOTS``, the earliest;
- **Tokens**: ``runs.<run id>.usage`` in the run group's ``metadata.json``: declared, not
  metered;
- **How it went**: ``"success": false`` there is a harness error; the duration is
  MLE-bench's ``Run completed in N seconds.`` line of ``run.log``; the validation calls are
  ``validation_calls.jsonl``'s lines. The layout: docs/upload-format.md.
"""

from __future__ import annotations

import re

from benchmark.cost import parse_usage_declaration
from benchmark.file_seek import seek_clamped
from benchmark.upload_tree import UploadLayoutError, UploadTree, join_rel

MAX_SNAPSHOTS = 48
_ELAPSED = re.compile(r"^\d{1,9}(\.\d{1,6})?$")
_HARNESS_NAME = re.compile(r"^submission_(\d{1,9}(?:\.\d{1,6})?)s\.csv$")
_COMPLETED = re.compile(rb"Run completed in ([0-9]+(?:\.[0-9]+)?) seconds\.")
_LOG_TAIL_BYTES = 65536
_MAX_COUNTED_LINES = 1_000_000


def run_snapshots(tree: UploadTree, run_folder: str, warnings: list[str]) -> tuple:
    """((elapsed seconds, path), ...) of the run's snapshots, earliest first."""
    folder = join_rel(run_folder, "snapshots")
    if not tree.is_dir(folder):
        return ()
    found: list[tuple[float, str]] = []
    for child in tree.dirs.get(folder, []):
        rel = join_rel(join_rel(folder, child), "submission.csv")
        if _ELAPSED.match(child) and rel in tree.file_set:
            found.append((float(child), rel))
    prefix = folder + "/"
    for rel in tree.files:
        if rel.startswith(prefix) and "/" not in rel[len(prefix) :]:
            match = _HARNESS_NAME.match(rel[len(prefix) :])
            if match:
                found.append((float(match.group(1)), rel))
    found.sort()
    if len(found) > MAX_SNAPSHOTS:
        warnings.append(
            f"{folder}/ holds {len(found)} snapshots; the first {MAX_SNAPSHOTS} are graded"
        )
        found = found[:MAX_SNAPSHOTS]
    return tuple((elapsed, tree.path(rel)) for elapsed, rel in found)


def run_usage(entry, where: str) -> dict | None:
    """The tokens a run's metadata entry declares, checked; None when it declares none."""
    if not isinstance(entry, dict) or entry.get("usage") is None:
        return None
    try:
        return parse_usage_declaration(entry["usage"], where)
    except ValueError as error:
        raise UploadLayoutError(str(error)) from None


def run_facts(tree: UploadTree, run_folder: str, entry) -> dict | None:
    """What the run folder and its metadata entry say of how the run went
    (``benchmark.failures.RunFacts`` fields), or None when they say nothing."""
    facts: dict = {}
    if isinstance(entry, dict) and entry.get("success") is False:
        facts["outcome"] = "harness_error"
    elif isinstance(entry, dict) and entry.get("success") is True:
        facts["harness_error"] = False  # how the agent itself ended is not said
    log = join_rel(run_folder, "run.log")
    if log in tree.file_set:
        path = tree.path(log)
        with path.open("rb") as handle:
            seek_clamped(handle, path.stat().st_size - _LOG_TAIL_BYTES)
            found = _COMPLETED.findall(handle.read())
        if found:
            facts["duration_s"] = float(found[-1])
    for rel in (join_rel(run_folder, "validation_calls.jsonl"),):
        if rel in tree.file_set:
            with tree.path(rel).open("rb") as handle:
                facts["validation_calls"] = sum(
                    1
                    for _, line in zip(range(_MAX_COUNTED_LINES), handle, strict=False)
                    if line.strip()
                )
    return facts or None
