"""Competitions scored on predicted labels and label lists: F1 (macro, micro, multi-label),
probabilistic F1, and mean average precision at k."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.arrow_numpy import from_numpy, to_numpy
from graders.competitions.columns import IdAlignedGrader, answer_labels, label_values
from graders.metrics.classification import f1_macro, f1_micro_counts, probabilistic_f1
from graders.metrics.ranked_lists import map_at_k
from graders.results import GraderError, InvalidSubmission
from graders.validation import align_ids, answer_numbers, numeric_column, require_row_count

_INTEGER = r"^\s*[+-]?\d+\s*$"


def python_ints(column: pa.ChunkedArray, name: str) -> np.ndarray:
    """The column as Python's ``int()`` would convert each value (MLE-bench's list comprehension).

    Integers and booleans as they are; floats truncated toward zero (NaN/infinity invalid);
    text must be an integer literal.
    """
    kind = column.type
    if (pa.types.is_integer(kind) or pa.types.is_boolean(kind)) and not column.null_count:
        return to_numpy(column).astype(np.int64)
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_null(kind):
        values = numeric_column(pa.table({name: column}), name, allow_nan=False, allow_inf=False)
        return np.trunc(values).astype(np.int64)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        if column.null_count:
            raise InvalidSubmission(f"Column '{name}' has {column.null_count} empty labels.")
        valid = pc.match_substring_regex(column, _INTEGER)
        if not pc.all(valid).as_py():
            bad = pc.filter(column, pc.invert(valid)).slice(0, 5).to_pylist()
            raise InvalidSubmission(
                f"Column '{name}' must hold integer class ids; got e.g. {bad!r}."
            )
        return to_numpy(pc.cast(pc.utf8_trim_whitespace(column), pa.int64()))
    raise InvalidSubmission(f"Column '{name}' must hold integer class ids.")


class MacroF1Grader(IdAlignedGrader):
    """Macro F1 over integer class ids (herbarium, iWildCam 2019)."""

    metric = "f1_macro"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        try:
            truth = python_ints(answers.column(target), target)
        except InvalidSubmission as error:  # the data's fault: never quoted to an agent
            raise GraderError(f"Answers column '{target}' is unusable: {error}") from None
        return truth, python_ints(aligned.column(target), target)

    def compute(self, prepared) -> float:
        return f1_macro(*prepared, name=self.target_columns[0])


class SingleLabelMicroF1Grader(IdAlignedGrader):
    """Micro F1 of single text labels (plant seedlings) - the fraction of correct rows."""

    metric = "f1_micro"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        y_true = answer_labels(answers, target)
        y_pred = label_values(aligned, target)
        if isinstance(y_pred, np.ndarray) != isinstance(y_true, np.ndarray):
            raise InvalidSubmission(
                f"Column '{target}' must hold the class names used in the training data."
            )
        if not isinstance(y_pred, np.ndarray) and y_pred.null_count:
            raise InvalidSubmission(f"Column '{target}' has {y_pred.null_count} empty labels.")
        return y_true, y_pred

    def compute(self, prepared) -> float:
        y_true, y_pred = prepared
        if isinstance(y_true, np.ndarray):
            correct = int(np.count_nonzero(y_true == y_pred))
        else:
            correct = pc.sum(pc.equal(y_true, y_pred)).as_py() or 0
        n = len(y_true)
        return f1_micro_counts(correct, n, n)


class MultiLabelMicroF1Grader(IdAlignedGrader):
    """Micro F1 of whitespace-separated label sets; the label universe is the answers' labels.

    Predicted labels never seen in the answers are dropped (not counted as false positives),
    as MultiLabelBinarizer with fixed classes does in MLE-bench.
    """

    metric = "f1_micro"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        predicted = aligned.column(target)
        if pa.types.is_null(predicted.type):
            predicted = pa.chunked_array([pa.array([""] * len(predicted), pa.string())])
        if not (pa.types.is_string(predicted.type) or pa.types.is_large_string(predicted.type)):
            raise InvalidSubmission(
                f"Column '{target}' must hold space-separated labels as text; it was read as "
                f"{predicted.type} (MLE-bench cannot split numbers, e.g. when every row has a "
                "single numeric label)."
            )
        truth = answers.column(target)
        return _label_keys(truth, predicted)

    def compute(self, prepared) -> float:
        true_keys, pred_keys = prepared
        tp = len(np.intersect1d(true_keys, pred_keys, assume_unique=True))
        return f1_micro_counts(tp, len(true_keys), len(pred_keys))


def _label_keys(truth: pa.ChunkedArray, predicted: pa.ChunkedArray):
    """Distinct (row, label) keys of each side, predictions limited to the answers' labels."""
    true_tokens, true_rows = _tokens(truth)
    pred_tokens, pred_rows = _tokens(predicted)
    classes = pc.unique(true_tokens)
    size = max(len(classes), 1)
    true_codes = to_numpy(pc.index_in(true_tokens, value_set=classes))
    pred_codes = pc.index_in(pred_tokens, value_set=classes)
    known = to_numpy(pc.is_valid(pred_codes))
    pred_codes = to_numpy(pred_codes)[known].astype(np.int64)
    true_keys = np.unique(true_rows * size + true_codes.astype(np.int64))
    pred_keys = np.unique(pred_rows[known] * size + pred_codes)
    return true_keys, pred_keys


def _tokens(column: pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    lists = pc.utf8_split_whitespace(pc.fill_null(column, "")).combine_chunks()
    tokens = pc.list_flatten(lists)
    rows = to_numpy(pc.list_parent_indices(lists)).astype(np.int64)
    return tokens, rows


def pandas_str(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """The column after pandas' ``astype(str)``: NaN becomes "nan", numbers their repr."""
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return pc.fill_null(column, "nan")
    if pa.types.is_integer(kind) and not column.null_count:
        return pc.cast(column, pa.string())
    if pa.types.is_boolean(kind) and not column.null_count:
        return pc.if_else(column, "True", "False")
    values = numeric_column(pa.table({"v": column}), "v", allow_nan=True)
    distinct, inverse = np.unique(values, return_inverse=True)
    # Few distinct values in practice; str() of each, then spread back to the rows.
    text = np.array([str(float(v)) for v in distinct], dtype=object)
    return pa.chunked_array([pa.array(text[inverse], pa.string())])


class MapAtKGrader(IdAlignedGrader):
    """MAP@k of space-separated predictions against the answers' item sets.

    ``superset``: the submission may hold ids beyond the test set (they are ignored).
    """

    metric = "map_at_k"

    def __init__(self, *args, k: int, superset: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.k = k
        self.superset = superset

    def prepare(self, submission: pa.Table, answers: pa.Table):
        self.check_columns(submission)
        ids = answers.column(self.id_column)
        if self.superset:
            missing = pc.invert(pc.is_in(ids, value_set=submission.column(self.id_column)))
            if pc.any(missing).as_py():
                absent = pc.filter(ids, missing)
                raise InvalidSubmission(
                    f"Submission is missing {len(absent)} {self.id_column} values of the test "
                    f"set (first: {absent.slice(0, 5).to_pylist()})."
                )
            inside = pc.is_in(submission.column(self.id_column), value_set=ids)
            submission = submission.filter(inside)
        elif self.check_row_count:
            require_row_count(submission, answers.num_rows)
        order = align_ids(submission.column(self.id_column), ids, self.id_column)
        target = self.target_columns[0]
        sorted_rows = to_numpy(pc.sort_indices(ids)).astype(np.int64)
        actual = pandas_str(answers.column(target)).take(from_numpy(sorted_rows))
        predicted = pandas_str(submission.column(target)).take(from_numpy(order[sorted_rows]))
        return actual, predicted

    def compute(self, prepared) -> float:
        actual, predicted = prepared
        return map_at_k(actual, predicted, self.k)


class ProbabilisticF1Grader(IdAlignedGrader):
    """RSNA breast cancer pF1; running sums follow the sorted prediction_id order."""

    metric = "probabilistic_f1"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        predictions = numeric_column(aligned, target, allow_nan=True)
        labels = answer_numbers(answers, target)
        order = to_numpy(pc.sort_indices(answers.column(self.id_column))).astype(np.int64)
        return labels[order], predictions[order]

    def compute(self, prepared) -> float:
        return probabilistic_f1(*prepared)


_UNKNOWN_LABELS = (
    "Predicted labels that never occur in the answers are ignored (not counted as false "
    "positives); an empty prediction means no labels.",
)
_TEXT_LABELS = (
    "Labels must be read as text: a column where every row holds a single number is "
    "rejected, as it is by MLE-bench.",
)


def _macro(competition_id: str, target: str, **kwargs):
    return MacroF1Grader(
        competition_id,
        id_column="Id",
        target_columns=[target],
        answers=f"{competition_id}/prepared/private/answers.csv",
        quirks=("Class ids are converted with int(): decimals are truncated.",),
        **kwargs,
    )


def _multilabel(competition_id: str, id_column: str, target: str, answers: str):
    return MultiLabelMicroF1Grader(
        competition_id,
        id_column=id_column,
        target_columns=[target],
        answers=f"{competition_id}/prepared/private/{answers}",
        quirks=(*_UNKNOWN_LABELS, *_TEXT_LABELS),
    )


GRADERS = {
    grader.competition_id: grader
    for grader in [
        _macro("herbarium-2020-fgvc7", "Predicted"),
        _macro("herbarium-2021-fgvc8", "Predicted"),
        _macro("herbarium-2022-fgvc9", "Predicted"),
        _macro("iwildcam-2019-fgvc6", "Category"),
        _multilabel("facebook-recruiting-iii-keyword-extraction", "Id", "Tags", "test.csv"),
        _multilabel("imet-2020-fgvc7", "id", "attribute_ids", "answers.csv"),
        _multilabel("plant-pathology-2021-fgvc8", "image", "labels", "answers.csv"),
        SingleLabelMicroF1Grader(
            "plant-seedlings-classification",
            id_column="file",
            target_columns=["species"],
            answers="plant-seedlings-classification/prepared/private/answers.csv",
            quirks=("Micro F1 of single labels equals the fraction of correct rows.",),
        ),
        MapAtKGrader(
            "h-and-m-personalized-fashion-recommendations",
            k=12,
            superset=True,
            id_column="customer_id",
            target_columns=["prediction"],
            answers="h-and-m-personalized-fashion-recommendations/prepared/private/answers.csv",
            allow_extra_columns=False,
            quirks=("Customers beyond the test set are allowed and ignored.",),
        ),
        MapAtKGrader(
            "hotel-id-2021-fgvc8",
            k=5,
            id_column="image",
            target_columns=["hotel_id"],
            quirks=("Predictions are split on single spaces; only the first 5 count.",),
        ),
        MapAtKGrader(
            "whale-categorization-playground",
            k=5,
            id_column="Image",
            target_columns=["Id"],
            allow_extra_columns=False,
            quirks=("Predictions are split on single spaces; only the first 5 count.",),
        ),
        ProbabilisticF1Grader(
            "rsna-breast-cancer-detection",
            id_column="prediction_id",
            target_columns=["cancer"],
            answers="rsna-breast-cancer-detection/prepared/private/answers.csv",
            quirks=("Predictions are clipped to [0, 1]; an empty prediction makes the score 0.",),
        ),
    ]
}
