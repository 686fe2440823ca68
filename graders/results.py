"""What a grader returns, and the errors it raises.

Kept free of heavy imports: the web app and the command line import these types at start-up.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ErrorClass(enum.StrEnum):
    """Why a submission is not graded, as a class (the paper's failure modes): what the
    grader's checks found first. ``InvalidSubmission`` carries one; so do ``GradeResult``
    and ``ValidationResult`` when the submission is missing or invalid."""

    MISSING = "missing"  # no submission.csv
    UNREADABLE = "unreadable"  # empty, not CSV, not UTF-8, no header
    COLUMNS = "columns"  # missing or unexpected columns
    ROW_COUNT = "row_count"  # not one row per test-set entry
    IDS = "ids"  # ids missing, unknown or repeated
    TYPES = "types"  # text where numbers belong
    NAN = "nan"  # empty, NaN or infinite values
    VALUES = "values"  # out of range, unknown labels, malformed values
    OTHER = "other"  # anything else (the metric failed on it, a check of its own)


ERROR_CLASS_LABELS: dict[str, str] = {
    ErrorClass.MISSING: "no submission",
    ErrorClass.UNREADABLE: "unreadable file",
    ErrorClass.COLUMNS: "missing or wrong columns",
    ErrorClass.ROW_COUNT: "wrong row count",
    ErrorClass.IDS: "wrong ids",
    ErrorClass.TYPES: "wrong types",
    ErrorClass.NAN: "empty or NaN values",
    ErrorClass.VALUES: "values out of range",
    ErrorClass.OTHER: "other",
}


@dataclass(frozen=True)
class GradeResult:
    """The outcome of grading one submission.

    ``score`` is rounded to 5 decimals like MLE-bench, ``None`` when the submission is missing
    or invalid, and may be ``nan``/``inf``/``-inf`` (real results, kept as they are).
    ``error`` is the reason a person can act on when the submission is missing or invalid.
    ``grader_version`` names the metric and the revision of the grader's behaviour.
    """

    score: float | None
    valid_submission: bool
    submission_exists: bool
    error: str | None
    grader_version: str
    error_class: str | None = None  # an ``ErrorClass`` when missing or invalid


@dataclass(frozen=True)
class ValidationResult:
    """Whether a submission is well formed; ``message`` never contains a score."""

    valid: bool
    message: str
    error_class: str | None = None  # an ``ErrorClass`` when not valid


VALID_MESSAGE = "Submission is valid."


class GraderError(Exception):
    """Base class of the errors the graders package raises (infrastructure, not submissions)."""


class AnswersMissing(GraderError):
    """The private answers for a competition are not where the prepared layout puts them.

    An infrastructure problem (data not prepared or not mounted): callers retry or report it,
    they never blame the submission.
    """


class UnknownCompetition(GraderError, KeyError):
    """No grader is registered for the competition id."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable.
        return str(self.args[0]) if self.args else "unknown competition"


class InvalidSubmission(Exception):
    """Raised inside a grader when a submission cannot be graded; never escapes the package.

    The message is shown to people as it is, so it says what is wrong and what to change;
    ``kind`` is its ``ErrorClass``.
    """

    def __init__(self, message: str = "", kind: ErrorClass = ErrorClass.OTHER) -> None:
        super().__init__(message)
        self.kind = ErrorClass(kind)
