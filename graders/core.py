"""The base class every competition grader derives from.

A grader turns (submission CSV, prepared data folder) into a ``GradeResult`` in four steps:
``read_submission`` (a pyarrow table, ids as text), ``load_answers`` (cached while the file
is unchanged), ``prepare`` (every acceptance check MLE-bench makes, raising
``InvalidSubmission`` with a message a person can act on) and ``compute`` (the metric, a
float). ``grade`` runs all four and rounds like MLE-bench; ``validate`` stops after
``prepare`` and never reveals a score. Validation answers an agent while it runs, so it may
depend on the private answers only through the test ids and the row count
(``validation_checks``); errors about the answers are ``GraderError``, and an unexpected
error's text is not shown (it may quote the answers).
"""

from __future__ import annotations

import logging
import math
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

from graders.results import (
    VALID_MESSAGE,
    AnswersMissing,
    ErrorClass,
    GraderError,
    GradeResult,
    InvalidSubmission,
    ValidationResult,
)

logger = logging.getLogger(__name__)

_ANSWERS_CACHE: dict[tuple, Any] = {}
_ANSWERS_CACHE_SIZE = 2  # answers can be large; keep only the last few competitions


def round_score(score: float, numpy_style: bool = True) -> float:
    """Round to 5 decimals like MLE-bench's grader wrapper (``round(score, 5)``).

    Python's ``round`` rounds a ``float`` correctly (0.123455 -> 0.12345, because the
    stored double is just below the half) but rounds a numpy float64 by scaling and
    ``rint`` (-> 0.12346). About one discrete score in five (k/n with n = 200,000) rounds
    differently, so ``numpy_style`` must follow the type MLE-bench's metric returns.
    nan and infinities are kept.
    """
    value = float(score)
    if not math.isfinite(value):
        return value
    if numpy_style:
        import numpy as np

        return float(np.round(np.float64(value), 5))
    return round(value, 5)


class CompetitionGrader(ABC):
    """Grades submissions for one competition.

    Subclasses set ``metric`` (the catalogue's metric name) and implement ``prepare`` and
    ``compute``. ``quirks`` lists, in plain words, where MLE-bench's grader is lenient or
    surprising and this grader reproduces it (shown on the site as known issues).
    Bump ``revision`` whenever a change could alter a score or a validity decision.
    """

    metric: ClassVar[str] = ""
    # ``validate`` also runs ``compute`` (and discards the score) so that a submission the
    # metric itself would reject is reported invalid; heavy metrics may switch this off.
    validate_computes: ClassVar[bool] = True
    # Whether MLE-bench's grade function returns a numpy float64 (most scikit-learn and
    # numpy results) or a Python float (accuracy_score, log_loss, plain arithmetic): the
    # two round differently (see ``round_score``).
    numpy_rounding: ClassVar[bool] = True
    # Columns read as text in both the submission and the answers (ids, labels).
    text_columns: tuple[str, ...] = ()

    def __init__(
        self,
        competition_id: str,
        *,
        answers: str | None = None,
        quirks: tuple[str, ...] = (),
        revision: int = 1,
    ) -> None:
        self.competition_id = competition_id
        self.answers = answers or f"{competition_id}/prepared/private/test.csv"
        self.quirks = tuple(quirks)
        self.revision = revision

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.competition_id} {self.grader_version}>"

    @property
    def grader_version(self) -> str:
        """``"<metric>/<revision>"``, stored with every grade so re-grades can be spotted."""
        return f"{self.metric}/{self.revision}"

    # --- the four steps -------------------------------------------------------------------

    def read_submission(self, path: Path) -> Any:
        """The submission as a pyarrow table; ``InvalidSubmission`` when it is not a CSV."""
        from graders.reading import read_csv_table

        return read_csv_table(path, string_columns=self.text_columns)

    def read_answers(self, path: Path) -> Any:
        """The answers file as a pyarrow table (override for other formats)."""
        from graders.reading import read_csv_table

        try:
            return read_csv_table(path, string_columns=self.text_columns, what="Answers")
        except InvalidSubmission as error:
            raise GraderError(
                f"Answers for {self.competition_id} are unreadable: {error}"
            ) from None

    def answers_path(self, data_dir: Path) -> Path:
        """Where the private answers live in MLE-bench's prepared layout."""
        return Path(data_dir) / self.answers

    def load_answers(self, data_dir: Path) -> Any:
        """The answers, read once and reused while the file is unchanged.

        Raises ``AnswersMissing`` when the file is absent (the data is not prepared).
        """
        path = self.answers_path(data_dir)
        try:
            stat = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            raise AnswersMissing(
                f"Answers for {self.competition_id} not found at {path}: prepare the "
                "competition's data (MLE-bench layout <data>/<competition>/prepared/private/)."
            ) from None
        key = (type(self), self.competition_id, str(path.resolve()), stat.st_mtime_ns, stat.st_size)
        if key not in _ANSWERS_CACHE:
            answers = self.read_answers(path)
            while len(_ANSWERS_CACHE) >= _ANSWERS_CACHE_SIZE:
                _ANSWERS_CACHE.pop(next(iter(_ANSWERS_CACHE)))
            _ANSWERS_CACHE[key] = answers
        return _ANSWERS_CACHE[key]

    @abstractmethod
    def prepare(self, submission: Any, answers: Any) -> Any:
        """Check the submission against the answers and return what ``compute`` needs.

        Raises ``InvalidSubmission`` for everything MLE-bench would not grade.
        """

    @abstractmethod
    def compute(self, prepared: Any) -> float:
        """The metric's value for prepared inputs (unrounded)."""

    def validation_checks(self, submission: Any) -> None:  # noqa: B027 - optional hook
        """Checks ``validate`` makes on the submission alone, before ``prepare``.

        Override where MLE-bench accepts or rejects a submission depending on private answer
        values: require here the stricter condition that does not depend on them, so that
        validation cannot be used to probe the answers. Raises ``InvalidSubmission``.
        """

    # --- entry points -------------------------------------------------------------------------

    def grade(self, submission_path: Path, data_dir: Path) -> GradeResult:
        """Grade one submission; never raises for a bad submission.

        Raises ``AnswersMissing``/``GraderError`` only for infrastructure problems.
        """
        missing = self.missing_reason(Path(submission_path))
        if missing:
            return GradeResult(None, False, False, missing, self.grader_version, ErrorClass.MISSING)
        try:
            submission, answers = self._read_both(Path(submission_path), data_dir)
            prepared = self.prepare(submission, answers)
            del submission
            score = self.compute(prepared)
        except InvalidSubmission as error:
            return GradeResult(None, False, True, str(error), self.grader_version, error.kind)
        except (GraderError, MemoryError):
            raise
        except Exception as error:  # MLE-bench turns any grading exception into "invalid"
            logger.warning("Grader %s failed on %s", self, submission_path, exc_info=True)
            reason = f"Submission could not be graded: {type(error).__name__}: {error}"
            return GradeResult(None, False, True, reason, self.grader_version, ErrorClass.OTHER)
        return GradeResult(
            round_score(score, self.numpy_rounding), True, True, None, self.grader_version
        )

    def validate(self, submission_path: Path, data_dir: Path) -> ValidationResult:
        """Whether the submission is well formed, and why not; never computes a score."""
        missing = self.missing_reason(Path(submission_path))
        if missing:
            return ValidationResult(False, missing, ErrorClass.MISSING)
        try:
            submission, answers = self._read_both(Path(submission_path), data_dir)
            self.validation_checks(submission)
            prepared = self.prepare(submission, answers)
            del submission
            if self.validate_computes:
                self.compute(prepared)
        except InvalidSubmission as error:
            return ValidationResult(False, str(error), error.kind)
        except (GraderError, MemoryError):
            raise
        except Exception as error:
            # Its text may quote the private answers: the type only (the log has the rest).
            logger.warning("Grader %s failed validating %s", self, submission_path, exc_info=True)
            return ValidationResult(
                False,
                f"Submission could not be checked: the metric failed on it "
                f"({type(error).__name__}; details withheld, they may involve the private "
                "answers). MLE-bench would count it invalid.",
                ErrorClass.OTHER,
            )
        return ValidationResult(True, VALID_MESSAGE)

    def _read_both(self, submission_path: Path, data_dir: Path) -> tuple[Any, Any]:
        """(submission, answers), the answers read on a second thread meanwhile.

        Both reads spend their time in pyarrow's C++ code, which releases the GIL, so on
        two cores this takes about as long as the larger of the two. ``AnswersMissing``
        and ``GraderError`` from the answers propagate unchanged.
        """
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1) as pool:
            answers = pool.submit(self.load_answers, data_dir)
            try:
                submission = self.read_submission(submission_path)
            except BaseException:
                answers.result()  # an infrastructure problem outranks a bad submission
                raise
            return submission, answers.result()

    @staticmethod
    def missing_reason(path: Path) -> str | None:
        # MLE-bench counts a submission as made only if it is a file ending in .csv.
        if not path.is_file():
            return f"No submission file at {path}."
        if path.suffix.lower() != ".csv":
            return f"Submission must be a .csv file; got '{path.name}'."
        return None
