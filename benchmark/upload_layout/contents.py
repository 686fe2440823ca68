"""What ``read_upload`` returns: the runs to grade or the grades reported, by layout.

The readers of every layout build these; ``competition_of`` tells which known
competition a run folder (or any name) belongs to.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from benchmark.reports import CompetitionReport

RUN_GROUPS, JSONL, REPORTS = "run_groups", "jsonl", "reports"


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
    # Submissions saved during the run: ((elapsed seconds, path), ...), earliest first.
    snapshots: tuple[tuple[float, Path], ...] = ()
    # Tokens the upload declares for the run (``benchmark.cost``), or None.
    usage: dict | None = None
    # How the run went, as far as its folder says (``benchmark.failures.RunFacts``), or None.
    facts: dict | None = None


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
    # The conditions the archive discloses (its ``disclosure.yaml``), read through
    # ``benchmark.disclosure``; empty when it has none.
    disclosure: dict = field(default_factory=dict)


def competition_of(folder_name: str, known_competitions: Iterable[str]) -> str | None:
    """The longest known competition id that ``folder_name`` is, or starts with followed by `_`."""
    matches = [
        cid for cid in known_competitions if folder_name == cid or folder_name.startswith(cid + "_")
    ]
    return max(matches, key=len) if matches else None
