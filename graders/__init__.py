"""mleboard's graders: check and score a submission exactly like MLE-bench does.

Import-light on purpose (no pandas, no scikit-learn): the command line and the web app import
this at start-up, and each competition's grader module is imported only when needed.

    >>> from graders import grade_submission
    >>> result = grade_submission(Path("submission.csv"), "spaceship-titanic", Path("data"))
    >>> result.valid_submission, result.score

``data_dir`` is MLE-bench's prepared layout: ``<data_dir>/<competition>/prepared/{public,private}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from graders.registry import grader_for, known_competitions
from graders.results import (
    AnswersMissing,
    ErrorClass,
    GraderError,
    GradeResult,
    InvalidSubmission,
    UnknownCompetition,
    ValidationResult,
)

if TYPE_CHECKING:
    from graders.core import CompetitionGrader

__all__ = [
    "AnswersMissing",
    "ErrorClass",
    "CompetitionGrader",
    "GradeResult",
    "GraderError",
    "InvalidSubmission",
    "UnknownCompetition",
    "ValidationResult",
    "grade_submission",
    "grader_for",
    "known_competitions",
    "missing_submission_reason",
    "validate_submission",
]


def grade_submission(submission_path: Path, competition_id: str, data_dir: Path) -> GradeResult:
    """Grade one submission CSV against the competition's private answers.

    Never raises for a bad submission: a missing file gives ``submission_exists=False``, an
    invalid one ``valid_submission=False`` with ``error`` saying why. Raises
    ``UnknownCompetition`` for an id without a grader and ``AnswersMissing`` when the answers
    are not prepared (an infrastructure problem, worth retrying once fixed).
    """
    return grader_for(competition_id).grade(Path(submission_path), Path(data_dir))


def missing_submission_reason(submission_path: Path) -> str | None:
    """Why grading does not count ``submission_path`` as a submission made (no such file,
    or not a .csv file, as MLE-bench decides); None when it does."""
    from graders.core import CompetitionGrader

    return CompetitionGrader.missing_reason(Path(submission_path))


def validate_submission(
    submission_path: Path, competition_id: str, data_dir: Path
) -> ValidationResult:
    """Whether the submission is well formed for the competition, and why not (never a score)."""
    return grader_for(competition_id).validate(Path(submission_path), Path(data_dir))


def __getattr__(name: str):
    # ``graders.CompetitionGrader`` without importing the base module at start-up.
    if name == "CompetitionGrader":
        from graders.core import CompetitionGrader

        return CompetitionGrader
    raise AttributeError(f"module 'graders' has no attribute {name!r}")
