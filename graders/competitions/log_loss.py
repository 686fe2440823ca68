"""Competitions scored by log losses and the KL divergence."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.competitions.columns import IdAlignedGrader, answer_labels
from graders.metrics.log_loss import (
    binary_log_loss,
    kl_divergence,
    multiclass_log_loss,
    weighted_binary_log_loss,
)
from graders.results import GraderError, InvalidSubmission
from graders.validation import (
    align_ids,
    answer_numbers,
    numeric_column,
    require_columns,
    require_row_count,
    to_float,
)


def _probabilities(table: pa.Table, columns: list[str]) -> np.ndarray:
    """(rows, classes) probabilities; NaN is out of range (pandas comparisons are False)."""
    matrix = np.column_stack([numeric_column(table, c, allow_nan=True) for c in columns])
    _check_probability_matrix(matrix, columns)
    return matrix


def _check_probability_matrix(matrix: np.ndarray, columns: list[str]) -> None:
    with np.errstate(invalid="ignore"):
        bad = np.isnan(matrix) | (matrix < 0) | (matrix > 1)
    if bad.any():
        rows, cols = np.nonzero(bad)
        first = f"row {int(rows[0]) + 1}, column '{columns[int(cols[0])]}'"
        raise InvalidSubmission(
            f"All probabilities must be numbers between 0 and 1; {int(bad.sum())} are not "
            f"(first at {first})."
        )


def _row_sums(matrix: np.ndarray) -> np.ndarray:
    # pandas' sum(axis=1) adds the columns left to right and skips NaN.
    total = np.zeros(matrix.shape[0])
    for column in range(matrix.shape[1]):  # class columns, not rows
        total = total + np.nan_to_num(matrix[:, column], nan=0.0)
    return total


class MulticlassLogLossGrader(IdAlignedGrader):
    """Multiclass log loss; the answers hold one 0/1 column per class (one-hot).

    ``sum_check``: how rows must sum to 1 - "isclose" (|sum - 1| <= 1e-6 + 1e-5, numpy's
    ``isclose``) or "round6" (the sum rounded to 6 decimals equals 1). ``exact_columns``:
    no other columns allowed. ``id_first``: the id must be the first column (spooky sums
    every column after the first). ``classes``: the class columns, where MLE-bench's
    ``grade.py`` names them (its answers keep other columns too, e.g. lmsys's prompt and
    responses); by default every answers column but the id is a class.
    """

    metric = "multiclass_log_loss"
    numpy_rounding = False  # scikit-learn returns a Python float here

    def __init__(
        self,
        competition_id: str,
        *,
        sum_check: str = "isclose",
        exact_columns: bool = False,
        id_first: bool = False,
        classes: tuple[str, ...] = (),
        **kwargs,
    ):
        super().__init__(competition_id, id_column="id", target_columns=(), **kwargs)
        self.sum_check = sum_check
        self.exact_columns = exact_columns
        self.id_first = id_first
        self.classes = tuple(classes)

    def prepare(self, submission: pa.Table, answers: pa.Table):
        classes = list(self.classes) or [c for c in answers.column_names if c != self.id_column]
        if self.classes:
            missing = [c for c in (self.id_column, *classes) if c not in answers.column_names]
            if missing:
                raise GraderError(
                    f"Answers for {self.competition_id} lack the columns {missing}: "
                    "not MLE-bench's prepared data?"
                )
        required = [self.id_column, *classes]
        require_columns(submission, required, allow_extra=not self.exact_columns)
        if self.id_first and submission.column_names[0] != self.id_column:
            raise InvalidSubmission(f"The first column must be '{self.id_column}'.")
        require_row_count(submission, answers.num_rows)
        matrix = np.column_stack([numeric_column(submission, c, allow_nan=True) for c in classes])
        if self.sum_check == "round6":  # lmsys checks the range first, then the sums
            _check_probability_matrix(matrix, classes)
        sums = _row_sums(matrix)
        if self.sum_check == "round6":
            bad = np.round(sums, 6) != 1
        else:
            bad = ~np.isclose(sums, 1, atol=1e-6)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise InvalidSubmission(
                f"Each row's probabilities must sum to 1; {int(bad.sum())} rows do not "
                f"(first: data row {first + 1} sums to {sums[first]!r})."
            )
        if self.sum_check != "round6":
            _check_probability_matrix(matrix, classes)
        order = align_ids(
            submission.column(self.id_column), answers.column(self.id_column), self.id_column
        )
        truth = np.column_stack([np.asarray(answer_labels(answers, c)) for c in classes])
        return truth, matrix[order]

    def compute(self, prepared) -> float:
        return multiclass_log_loss(*prepared)


class BinaryLogLossGrader(IdAlignedGrader):
    """Binary log loss of a probability column; values must lie in [0, 1]."""

    metric = "binary_log_loss"
    numpy_rounding = False  # scikit-learn returns a Python float here

    def prepare(self, submission: pa.Table, answers: pa.Table):
        target = self.target_columns[0]
        self.check_columns(submission)
        order = align_ids(
            submission.column(self.id_column), answers.column(self.id_column), self.id_column
        )
        if self.check_row_count:
            require_row_count(submission, answers.num_rows)
        probabilities = _probabilities(submission, [target])[:, 0]
        return np.asarray(answer_labels(answers, target)), probabilities[order]

    def compute(self, prepared) -> float:
        return binary_log_loss(*prepared)


RSNA_2022_COLUMNS = ("patient_overall", "C1", "C2", "C3", "C4", "C5", "C6", "C7")


class CervicalSpineGrader(IdAlignedGrader):
    """RSNA 2022: long-format rows '<study>_<target>' pivoted back to one row per study."""

    metric = "weighted_binary_log_loss"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        self.check_columns(submission)
        target = self.target_columns[0]
        values = numeric_column(submission, target, allow_nan=True)
        with np.errstate(invalid="ignore"):
            outside = np.isnan(values) | (values < 0) | (values > 1)
        if outside.any():
            raise InvalidSubmission(
                f"Submission '{target}' values must be numbers between 0 and 1; "
                f"{int(outside.sum())} are not."
            )
        aligned = self.aligned(submission, answers)
        y_pred = numeric_column(aligned, target)
        y_true = answer_numbers(answers, target)
        return _unmelt(answers.column(self.id_column), y_true, y_pred)

    def compute(self, prepared) -> float:
        return weighted_binary_log_loss(*prepared)


def _unmelt(row_ids: pa.ChunkedArray, y_true: np.ndarray, y_pred: np.ndarray):
    """(studies, 8) truth and prediction matrices, studies in sorted order."""
    parts = pc.split_pattern(row_ids, "_", max_splits=1)
    study = pc.list_element(parts, 0)
    variable = pc.list_element(parts, 1)
    studies = pc.unique(study)
    studies = studies.take(pc.sort_indices(studies))
    row_codes = pc.index_in(study, value_set=studies)
    column_codes = pc.index_in(variable, value_set=pa.array(RSNA_2022_COLUMNS))
    if column_codes.null_count:
        raise InvalidSubmission(
            "Row ids must end in _patient_overall or _C1 ... _C7 after the study id."
        )
    row = row_codes.to_numpy(zero_copy_only=False).astype(np.int64)
    column = column_codes.to_numpy(zero_copy_only=False).astype(np.int64)
    counts = np.bincount(row * 8 + column, minlength=8 * len(studies))
    if (counts != 1).any():
        raise InvalidSubmission(
            "Every study needs exactly one row per target (patient_overall, C1-C7)."
        )
    truth = np.empty((len(studies), 8))
    pred = np.empty((len(studies), 8))
    truth[row, column] = y_true
    pred[row, column] = y_pred
    return truth, pred


HMS_VOTES = ("seizure_vote", "lpd_vote", "gpd_vote", "lrda_vote", "grda_vote", "other_vote")


class BrainActivityGrader(IdAlignedGrader):
    """HMS: KL divergence against vote distributions; eeg_id repeats in the answers.

    Rows are paired by sorting both files on eeg_id with numpy's default (quicksort)
    algorithm, exactly as pandas does in MLE-bench, so rows sharing an eeg_id pair in the
    order that sort leaves them.
    """

    metric = "kl_divergence"

    def __init__(self, competition_id: str, **kwargs):
        super().__init__(competition_id, id_column="eeg_id", target_columns=HMS_VOTES, **kwargs)
        self.text_columns = ()  # eeg_id is an integer; pairing depends on numeric sorting

    def prepare(self, submission: pa.Table, answers: pa.Table):
        self.check_columns(submission)
        require_row_count(submission, answers.num_rows)
        matrix = np.column_stack([numeric_column(submission, c, allow_nan=True) for c in HMS_VOTES])
        if not (np.round(_row_sums(matrix), 5) == 1).all():
            raise InvalidSubmission("Submission probabilities must add to 1 for each row.")
        sub_ids = _integer_ids(submission.column("eeg_id"))
        ans_ids = _integer_ids(answers.column("eeg_id"))
        if sub_ids is None or set(np.unique(sub_ids)) != set(np.unique(ans_ids)):
            raise InvalidSubmission(
                "Submission 'eeg_id' values must be exactly the test set's eeg_ids."
            )
        others = [c for c in submission.column_names if c != "eeg_id"]
        everything = np.column_stack(
            [numeric_column(submission, c, allow_nan=True) for c in others]
        )
        _kaggle_probability_checks(everything)
        votes = np.column_stack([answer_numbers(answers, c) for c in HMS_VOTES])
        with np.errstate(invalid="ignore", divide="ignore"):
            truth = votes / _row_sums(votes)[:, None]
        sub_order = sub_ids.argsort(kind="quicksort")
        ans_order = ans_ids.argsort(kind="quicksort")
        return truth[ans_order], matrix[sub_order]

    def compute(self, prepared) -> float:
        return kl_divergence(*prepared)


def _integer_ids(column: pa.ChunkedArray) -> np.ndarray | None:
    try:
        values = to_float(column, "eeg_id")
    except InvalidSubmission:
        return None
    if np.isnan(values).any() or (values != np.floor(values)).any():
        return None
    return values.astype(np.int64)


def _kaggle_probability_checks(matrix: np.ndarray) -> None:
    """Kaggle's verify_valid_probabilities on every non-id column (NaN skipped)."""
    if np.nanmin(matrix, initial=np.inf) < 0:
        raise InvalidSubmission("All target values in submission must be at least zero.")
    if np.nanmax(matrix, initial=-np.inf) > 1:
        raise InvalidSubmission("All target values in submission must be no greater than one.")
    if not np.allclose(_row_sums(matrix), 1):
        raise InvalidSubmission("Target values in submission do not add to one within all rows.")


def _multiclass(competition_id: str, answers: str = "test.csv", **kwargs):
    return MulticlassLogLossGrader(
        competition_id, answers=f"{competition_id}/prepared/private/{answers}", **kwargs
    )


_PROBABILITY_RULES = (
    "Each row must sum to 1 and every value must lie in [0, 1]; probabilities are clipped "
    "to [eps, 1 - eps] but not renormalised (scikit-learn 1.5.1).",
)

GRADERS = {
    grader.competition_id: grader
    for grader in [
        _multiclass("dog-breed-identification", quirks=_PROBABILITY_RULES),
        _multiclass("leaf-classification", exact_columns=True, quirks=_PROBABILITY_RULES),
        _multiclass(
            "lmsys-chatbot-arena",
            "answers.csv",
            sum_check="round6",
            # prepare.py's answers are whole rows of train.csv (id, model_a, model_b,
            # prompt, response_a, response_b, then the three winner columns).
            classes=("winner_model_a", "winner_model_b", "winner_tie"),
            quirks=("Each row must sum to 1 after rounding to 6 decimals.",),
        ),
        _multiclass(
            "spooky-author-identification",
            exact_columns=True,
            id_first=True,
            quirks=(*_PROBABILITY_RULES, "The id must be the first column."),
        ),
        BinaryLogLossGrader(
            "dogs-vs-cats-redux-kernels-edition",
            id_column="id",
            target_columns=["label"],
            answers="dogs-vs-cats-redux-kernels-edition/prepared/private/answers.csv",
        ),
        BinaryLogLossGrader(
            "statoil-iceberg-classifier-challenge",
            id_column="id",
            target_columns=["is_iceberg"],
            check_row_count=False,
        ),
        CervicalSpineGrader(
            "rsna-2022-cervical-spine-fracture-detection",
            id_column="row_id",
            target_columns=["fractured"],
            answers="rsna-2022-cervical-spine-fracture-detection/prepared/private/answers.csv",
        ),
        BrainActivityGrader(
            "hms-harmful-brain-activity-classification",
            quirks=(
                "eeg_id repeats in the test set: rows are paired only by sorting on eeg_id, so "
                "rows sharing an eeg_id may be paired in any order.",
                "Ids are compared as a set plus the row count: how often each eeg_id appears "
                "is not checked.",
                "An empty probability cell is skipped (it adds nothing to the divergence) as "
                "long as the row's other values still sum to 1.",
            ),
        ),
    ]
}
