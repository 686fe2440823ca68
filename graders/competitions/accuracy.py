"""Competitions scored by label agreement: accuracy, top-1 error, quadratic kappa, MCC.

Every grader pairs rows by id (MLE-bench sorts both files by id and requires identical id
sequences) and then compares labels with scikit-learn's rules (see
``graders.metrics.labels``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.arrow_numpy import to_numpy
from graders.competitions.columns import IdAlignedGrader, answer_labels, label_values
from graders.metrics.classification import (
    accuracy,
    matthews_corrcoef,
    quadratic_weighted_kappa,
)
from graders.results import InvalidSubmission


class AccuracyGrader(IdAlignedGrader):
    """Accuracy of one label column (MLE-bench's shared accuracy helper).

    ``empty_as``: what an empty prediction becomes before comparing (paddy: ""), or None
    to leave it empty (then scikit-learn rejects it). ``as_text``: compare both sides as
    text, empty cells as "nan" (text-normalization's ``astype(str)``).
    """

    metric = "accuracy"
    numpy_rounding = False  # scikit-learn returns a Python float here

    def __init__(self, *args, empty_as: str | None = None, as_text: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.empty_as = empty_as
        self.as_text = as_text
        if as_text:
            self.text_columns = (*self.text_columns, *self.target_columns)

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        y_true = answer_labels(answers, target)
        y_pred = label_values(aligned, target)
        if self.as_text:
            y_true = pc.fill_null(y_true, "nan")
            y_pred = pc.fill_null(y_pred, "nan")
        elif self.empty_as is not None and pa.types.is_null(aligned.column(target).type):
            # An all-empty column (prepare.py's own sample: label "") reads as no type at
            # all; pandas' fillna("") makes it text, every prediction empty.
            y_pred = pa.array([self.empty_as] * aligned.num_rows, type=pa.string())
        elif self.empty_as is not None and not isinstance(y_pred, np.ndarray):
            y_pred = pc.fill_null(y_pred, self.empty_as)
        return y_true, y_pred

    def compute(self, prepared) -> float:
        y_true, y_pred = prepared
        return accuracy(y_true, y_pred, self.target_columns[0])


class Top1ErrorGrader(IdAlignedGrader):
    """1 - accuracy of the first space-separated class id of each prediction (iNaturalist)."""

    metric = "top1_error"
    numpy_rounding = False  # scikit-learn returns a Python float here

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        truth = answer_labels(answers, target)
        predicted = first_integer_token(aligned.column(target), target)
        return np.asarray(truth, dtype=np.int64), predicted

    def compute(self, prepared) -> float:
        truth, predicted = prepared
        return 1 - accuracy(truth, predicted, self.target_columns[0])


_INTEGER = r"^\s*[+-]?\d+\s*$"


def first_integer_token(column: pa.ChunkedArray, name: str) -> np.ndarray:
    """The first whitespace-separated token of each cell as an integer.

    Integer columns are used as they are; a float column (any empty cell makes one) has no
    tokens and is rejected, as is a token that is not an integer.
    """
    if pa.types.is_integer(column.type) and not column.null_count:
        return to_numpy(column).astype(np.int64)
    if pa.types.is_boolean(column.type) and not column.null_count:
        return to_numpy(column).astype(np.int64)
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        raise InvalidSubmission(
            f"Column '{name}' must hold class ids (integers, or space-separated lists of them); "
            "empty cells or decimals are not accepted."
        )
    if column.null_count:
        raise InvalidSubmission(
            f"Column '{name}' has {column.null_count} empty predictions: every row needs one."
        )
    first = pc.list_element(pc.utf8_split_whitespace(pc.utf8_trim_whitespace(column)), 0)
    valid = pc.match_substring_regex(first, _INTEGER).fill_null(False)
    if not pc.all(valid).as_py():
        bad = pc.filter(column, pc.invert(valid)).slice(0, 5).to_pylist()
        raise InvalidSubmission(
            f"Column '{name}' must start each prediction with an integer class id; "
            f"got e.g. {bad!r}."
        )
    return to_numpy(pc.cast(first, pa.int64()))


class KappaGrader(IdAlignedGrader):
    """Quadratic weighted kappa of integer grades (sklearn cohen_kappa_score, quadratic)."""

    metric = "quadratic_weighted_kappa"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        return label_values(aligned, target), answer_labels(answers, target)

    def compute(self, prepared) -> float:
        y_pred, y_true = prepared
        return quadratic_weighted_kappa(y_pred, y_true, self.target_columns[0])


class MccGrader(IdAlignedGrader):
    """Matthews correlation of predicted 0/1 labels (sklearn matthews_corrcoef)."""

    metric = "mcc"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        return answer_labels(answers, target), label_values(aligned, target)

    def compute(self, prepared) -> float:
        y_true, y_pred = prepared
        return matthews_corrcoef(y_true, y_pred, self.target_columns[0])


def _accuracy(competition_id: str, id_column: str, target: str, answers: str, **kwargs):
    return AccuracyGrader(
        competition_id,
        id_column=id_column,
        target_columns=[target],
        answers=f"{competition_id}/prepared/private/{answers}",
        **kwargs,
    )


_SET_ONLY = (
    "Ids are checked as a set plus the row count, not as sorted sequences; "
    "the outcome is the same for a test set with unique ids.",
)

GRADERS = {
    grader.competition_id: grader
    for grader in [
        _accuracy("cassava-leaf-disease-classification", "image_id", "label", "test.csv"),
        _accuracy("cdiscount-image-classification-challenge", "_id", "category_id", "answers.csv"),
        _accuracy("iwildcam-2020-fgvc7", "Id", "Category", "answers.csv"),
        _accuracy("ml2021spring-hw2", "Id", "ClassId", "answers.csv"),
        _accuracy(
            "movie-review-sentiment-analysis-kernels-only", "PhraseId", "Sentiment", "answers.csv"
        ),
        _accuracy(
            "paddy-disease-classification",
            "image_id",
            "label",
            "test.csv",
            empty_as="",
            quirks=("An empty prediction is compared as an empty string (counted wrong).",),
        ),
        _accuracy(
            "spaceship-titanic",
            "PassengerId",
            "Transported",
            "test.csv",
            quirks=("1/0 predictions are accepted and compared with True/False as numbers.",),
        ),
        _accuracy("tabular-playground-series-dec-2021", "Id", "Cover_Type", "test.csv"),
        _accuracy("tensorflow-speech-recognition-challenge", "fname", "label", "test.csv"),
        _accuracy(
            "text-normalization-challenge-english-language",
            "id",
            "after",
            "answers.csv",
            as_text=True,
            quirks=(
                "Both sides are compared as text after pandas' parsing: an empty cell or a "
                "missing-value spelling such as 'NA' or 'null' becomes the text 'nan'.",
            ),
        ),
        _accuracy(
            "text-normalization-challenge-russian-language",
            "id",
            "after",
            "answers.csv",
            as_text=True,
            quirks=(
                "Both sides are compared as text after pandas' parsing: an empty cell or a "
                "missing-value spelling such as 'NA' or 'null' becomes the text 'nan'.",
            ),
        ),
        Top1ErrorGrader(
            "inaturalist-2019-fgvc6",
            id_column="id",
            target_columns=["predicted"],
            answers="inaturalist-2019-fgvc6/prepared/private/answers.csv",
            quirks=("Only the first of the space-separated predicted class ids is scored.",),
        ),
        KappaGrader(
            "aptos2019-blindness-detection",
            id_column="id_code",
            target_columns=["diagnosis"],
            check_row_count=False,
            quirks=(
                *_SET_ONLY,
                "Grades are used as given: no rounding or clipping, so a fractional grade is "
                "invalid and an out-of-range integer counts as an extra grade.",
            ),
        ),
        KappaGrader(
            "learning-agency-lab-automated-essay-scoring-2",
            id_column="essay_id",
            target_columns=["score"],
            answers="learning-agency-lab-automated-essay-scoring-2/prepared/private/answers.csv",
            quirks=(
                "Scores are used as given: no rounding or clipping, so a fractional score is "
                "invalid and an out-of-range integer counts as an extra score.",
            ),
        ),
        MccGrader(
            "nfl-player-contact-detection",
            id_column="contact_id",
            target_columns=["contact"],
            quirks=(
                *_SET_ONLY,
                "Predictions must already be 0/1 labels: probabilities are not thresholded "
                "and make the submission invalid.",
            ),
        ),
    ]
}
