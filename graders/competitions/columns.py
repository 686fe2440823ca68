"""The common shape of most graders: one row per test id, paired with the answers by id.

MLE-bench's usual check is "same number of rows, sort both by id, the id sequences must be
identical". ``IdAlignedGrader.aligned`` performs it without sorting text (see
``graders.validation.align_ids``), says which ids are missing, unknown or repeated, and
returns the submission's rows in the answers' order. Subclasses implement ``prepare`` on top of it and ``compute``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from graders.arrow_numpy import from_numpy, to_numpy
from graders.core import CompetitionGrader
from graders.results import GraderError, InvalidSubmission
from graders.validation import align_ids, require_columns, require_row_count


class IdAlignedGrader(CompetitionGrader):
    """A grader whose submission has an id column plus prediction columns.

    ``id_column``: the id column of both files (read as text). ``target_columns``: the
    prediction columns a submission needs. ``allow_extra_columns``: whether MLE-bench tolerates
    other columns. ``check_row_count``: whether MLE-bench compares lengths before ids (it
    changes only which message a person sees, not validity, for unique test ids).
    ``extra_text_columns``: further columns read as text (labels that must not become numbers).
    """

    def __init__(
        self,
        competition_id: str,
        *,
        id_column: str,
        target_columns: Sequence[str],
        answers: str | None = None,
        allow_extra_columns: bool = True,
        check_row_count: bool = True,
        extra_text_columns: Sequence[str] = (),
        quirks: tuple[str, ...] = (),
        revision: int = 1,
    ) -> None:
        super().__init__(competition_id, answers=answers, quirks=quirks, revision=revision)
        self.id_column = id_column
        self.target_columns = tuple(target_columns)
        self.allow_extra_columns = allow_extra_columns
        self.check_row_count = check_row_count
        self.text_columns = (id_column, *extra_text_columns)

    @property
    def submission_columns(self) -> tuple[str, ...]:
        """The columns a submission must have, id first."""
        return (self.id_column, *self.target_columns)

    def check_columns(self, submission: pa.Table) -> None:
        require_columns(submission, self.submission_columns, allow_extra=self.allow_extra_columns)

    def aligned(self, submission: pa.Table, answers: pa.Table) -> pa.Table:
        """The submission's rows reordered to match the answers' rows one to one.

        The id column is dropped unless the rows are already in the answers' order.

        Raises ``InvalidSubmission`` for missing columns, a wrong row count, or ids that are
        missing from, not in, or repeated against the test set.
        """
        self.check_columns(submission)
        if self.check_row_count:
            require_row_count(submission, answers.num_rows)
        order = align_ids(
            submission.column(self.id_column), answers.column(self.id_column), self.id_column
        )
        if _is_identity(order):
            return submission
        # The ids have served their purpose; moving them would copy every id string.
        others = [c for c in submission.column_names if c != self.id_column]
        return submission.select(others).take(from_numpy(order))


def _is_identity(order) -> bool:
    return bool(np.array_equal(order, np.arange(len(order))))


def label_values(table: pa.Table, name: str):
    """A label column as pandas would hand it to scikit-learn.

    Text stays a pyarrow string array (nulls kept, for the metric to judge); numbers become
    a numpy array - integers with empty cells become float with NaN, as in pandas. Booleans
    with empty cells have no numpy form scikit-learn accepts and are rejected here.
    """
    column = table.column(name)
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return column
    if pa.types.is_null(kind):
        return np.full(len(column), np.nan)
    if pa.types.is_boolean(kind):
        if column.null_count:
            raise InvalidSubmission(
                f"Column '{name}' has {column.null_count} empty labels: every row needs a label."
            )
        return to_numpy(column).astype(bool)
    if pa.types.is_integer(kind) and not column.null_count:
        return to_numpy(column).astype(np.int64)
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return to_numpy(column).astype(np.float64, copy=False)
    raise InvalidSubmission(f"Column '{name}' holds {kind} values, not class labels.")


def answer_labels(answers: pa.Table, name: str):
    """``label_values`` of an answers column; unusable answers are a ``GraderError`` (see
    ``graders.validation.answer_numbers``)."""
    try:
        return label_values(answers, name)
    except InvalidSubmission as error:
        raise GraderError(f"Answers column '{name}' is unusable: {error}") from None
