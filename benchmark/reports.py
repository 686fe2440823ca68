"""Grade reports in MLE-bench's grading-report JSON, read and written field for field.

One ``CompetitionReport`` per run carries exactly MLE-bench's fields
(``mlebench/grade_helpers.py``); a grading-report file is MLE-bench's
``aggregate_reports`` summary (the ``total_*`` counts) plus ``competition_reports``.
mleboard's extras (``seed``, ``error``, ``grader_version``, ``percentile``,
``error_class``) are written
as extra keys only when set, which MLE-bench's reader ignores; so a file MLE-bench wrote
reads back and writes out unchanged. NaN and infinite scores are kept and written as
``NaN`` / ``Infinity`` / ``-Infinity`` like Python's json (and MLE-bench) does.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath, PureWindowsPath

# MLE-bench's keys, in its order.
REPORT_KEYS = (
    "competition_id",
    "score",
    "gold_threshold",
    "silver_threshold",
    "bronze_threshold",
    "median_threshold",
    "any_medal",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "submission_exists",
    "valid_submission",
    "is_lower_better",
    "created_at",
    "submission_path",
)
EXTRA_KEYS = ("seed", "error", "grader_version", "percentile", "error_class")
_THRESHOLD_KEYS = ("gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold")
_REPORT_KEY_SET = frozenset(REPORT_KEYS)
_BOOL_KEYS = (
    "any_medal",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "submission_exists",
    "valid_submission",
    "is_lower_better",
)


def submission_path_in_run(path: str | None) -> str:
    """A submission's path as a stored or served report gives it: relative to its run's
    folder, never a path on the disk of the machine that graded it. MLE-bench's layout
    ``<run>/submission/submission.csv`` gives ``submission/submission.csv``; a relative
    path stays as it is; any other absolute path gives the file's name."""
    if not path:
        return ""
    posix = PurePosixPath(path.replace("\\", "/"))
    if not posix.is_absolute() and not PureWindowsPath(path).drive:
        return path
    parts = posix.parts
    if len(parts) >= 3 and parts[-2] == "submission":
        return "/".join(parts[-2:])
    return parts[-1] if len(parts) > 1 else ""


class GradingReportError(ValueError):
    """A grading-report file or entry that is not in MLE-bench's format."""


@dataclass(frozen=True)
class CompetitionReport:
    """The grade of one run (one competition, one seed), as MLE-bench reports it."""

    competition_id: str
    score: float | None  # None: no valid submission. May be NaN or +-inf (kept).
    gold_threshold: float | None  # None only when no leaderboard was available
    silver_threshold: float | None
    bronze_threshold: float | None
    median_threshold: float | None
    any_medal: bool
    gold_medal: bool
    silver_medal: bool
    bronze_medal: bool
    above_median: bool
    submission_exists: bool
    valid_submission: bool
    is_lower_better: bool
    created_at: datetime
    submission_path: str
    # mleboard's extras (extra keys in the JSON; MLE-bench ignores them).
    seed: int | None = None
    error: str | None = None  # why the submission is missing or invalid
    grader_version: str | None = None
    percentile: float | None = None  # % of the human leaderboard the score beats
    error_class: str | None = None  # ``graders.ErrorClass`` of ``error``

    def to_dict(self) -> dict:
        """MLE-bench's dict for this report (its keys, order and types), plus set extras."""
        data = {
            "competition_id": self.competition_id,
            "score": _float_or_none(self.score),
            **{key: _float_or_none(getattr(self, key)) for key in _THRESHOLD_KEYS},
            **{key: bool(getattr(self, key)) for key in _BOOL_KEYS},
            "created_at": self.created_at.isoformat(),
            "submission_path": self.submission_path,
        }
        for key in EXTRA_KEYS:
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    @classmethod
    def from_dict(cls, data: dict) -> CompetitionReport:
        """A report from MLE-bench's dict (extras optional); GradingReportError if malformed."""
        if not isinstance(data, dict):
            raise GradingReportError(f"a competition report must be an object, not {data!r}")
        if not data.keys() >= _REPORT_KEY_SET:
            missing = [key for key in REPORT_KEYS if key not in data]
            cid = data.get("competition_id", "?")
            raise GradingReportError(f"competition report {cid!r} lacks {', '.join(missing)}")
        # Field by field in the dataclass' order (no intermediate dicts: a million reports
        # are read at a time), each converted as _float_or_none and bool do.
        try:
            score = data["score"]
            gold = data["gold_threshold"]
            silver = data["silver_threshold"]
            bronze = data["bronze_threshold"]
            median = data["median_threshold"]
            seed = data.get("seed")
            percentile = data.get("percentile")
            return cls(
                str(data["competition_id"]),
                None if score is None else float(score),
                None if gold is None else float(gold),
                None if silver is None else float(silver),
                None if bronze is None else float(bronze),
                None if median is None else float(median),
                bool(data["any_medal"]),
                bool(data["gold_medal"]),
                bool(data["silver_medal"]),
                bool(data["bronze_medal"]),
                bool(data["above_median"]),
                bool(data["submission_exists"]),
                bool(data["valid_submission"]),
                bool(data["is_lower_better"]),
                datetime.fromisoformat(data["created_at"]),
                str(data["submission_path"]),
                int(seed) if seed is not None else None,
                data.get("error"),
                data.get("grader_version"),
                float(percentile) if percentile is not None else None,
                str(data["error_class"]) if data.get("error_class") is not None else None,
            )
        except (TypeError, ValueError) as error:
            cid = data.get("competition_id", "?")
            raise GradingReportError(f"competition report {cid!r} is malformed: {error}") from None


def _float_or_none(value) -> float | None:
    return None if value is None else float(value)


def grading_report_dict(reports: Iterable[CompetitionReport]) -> dict:
    """MLE-bench's grading-report dict: the ``total_*`` counts, then ``competition_reports``."""
    reports = list(reports)
    gold = sum(r.gold_medal for r in reports)
    silver = sum(r.silver_medal for r in reports)
    bronze = sum(r.bronze_medal for r in reports)
    return {
        "total_runs": len(reports),
        "total_runs_with_submissions": sum(r.submission_exists for r in reports),
        "total_valid_submissions": sum(r.valid_submission for r in reports),
        "total_medals": gold + silver + bronze,
        "total_gold_medals": gold,
        "total_silver_medals": silver,
        "total_bronze_medals": bronze,
        "total_above_median": sum(r.above_median for r in reports),
        "competition_reports": [r.to_dict() for r in reports],
    }


def grading_report_json(reports: Iterable[CompetitionReport]) -> str:
    """The grading-report file's text, formatted as MLE-bench writes it (indent 2)."""
    return json.dumps(grading_report_dict(reports), indent=2)


def write_grading_report(path: Path, reports: Iterable[CompetitionReport]) -> None:
    """Write a grading-report JSON file that MLE-bench's tools read (atomic replace)."""
    path = Path(path)
    text = grading_report_json(reports)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def parse_grading_report(
    data: dict | list, name: str = "grading report"
) -> list[CompetitionReport]:
    """The competition reports of a parsed grading-report JSON, in file order.

    Accepts MLE-bench's object with ``competition_reports`` (the ``total_*`` counts are
    recomputed, never trusted) or a bare list of competition reports.
    """
    entries = data.get("competition_reports") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise GradingReportError(
            f"{name} is not an MLE-bench grading report: no `competition_reports` list"
        )
    try:
        return [CompetitionReport.from_dict(entry) for entry in entries]
    except GradingReportError as error:
        raise GradingReportError(f"{name}: {error}") from None


def read_grading_report(path: Path) -> list[CompetitionReport]:
    """The competition reports of a grading-report JSON file, in file order.

    Raises GradingReportError when the file is not JSON or not in MLE-bench's format.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GradingReportError(f"{path}: no such grading report") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise GradingReportError(f"{path} is not a JSON grading report: {error}") from None
    return parse_grading_report(data, name=str(path))
