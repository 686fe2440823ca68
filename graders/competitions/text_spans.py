"""Competitions scored by the word-level Jaccard of extracted text spans: chaii (Hindi and Tamil
question answering) and tweet-sentiment-extraction."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from graders.competitions.columns import IdAlignedGrader
from graders.competitions.pandas_cells import as_pandas_str, filled_text, pandas_sort_order
from graders.metrics.text_overlap import word_jaccard_mean
from graders.results import InvalidSubmission
from graders.validation import SHOWN, show


class WordJaccardGrader(IdAlignedGrader):
    """Mean word-set Jaccard between predicted and true spans.

    ``strict``: tweet's plain formula, where a row with no word on either side divides by zero
    (MLE-bench cannot grade the submission); otherwise scikit-learn's ``jaccard_score``, which
    scores such a row 0 (chaii). ``as_str``: tweet converts both sides with ``astype(str)``
    after filling empty cells; chaii needs text and fails on a column of numbers.

    With ``strict``, validation rejects every prediction without a word, whatever the answer:
    naming the rows where the answer is empty too would reveal private answers (grading
    still fails only where both sides are empty, as MLE-bench does).
    """

    metric = "word_jaccard_mean"
    validate_computes = False

    def __init__(self, *args, strict: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.strict = strict

    def _texts(self, column: pa.ChunkedArray, name: str, what: str) -> list[str]:
        if self.strict:
            if pa.types.is_string(column.type) or pa.types.is_null(column.type):
                return filled_text(column, name, what=what)
            return [("" if v == "nan" else v) for v in as_pandas_str(column)]
        return filled_text(column, name, what=what)

    def validation_checks(self, submission: pa.Table) -> None:
        target = self.target_columns[0]
        names = submission.column_names
        if not self.strict or target not in names or self.id_column not in names:
            return  # prepare names the missing column
        texts = self._texts(submission.column(target), target, "Submission")
        empty = np.flatnonzero(np.fromiter((not t.split() for t in texts), bool, len(texts)))
        if len(empty):
            ids = submission.column(self.id_column).take(pa.array(empty[:SHOWN])).to_pylist()
            raise InvalidSubmission(
                f"{len(empty)} rows have no word in their prediction (ids: "
                f"{show(ids, len(empty))}): predict at least one word in every row. Where the "
                "answer has no word either, MLE-bench's Jaccard divides by zero and cannot "
                "grade the submission at all; validation does not say which rows those are."
            )

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        order = pandas_sort_order(answers.column(self.id_column))  # MLE-bench's row order
        y_true = self._texts(answers.column(target), target, "Answers")
        y_pred = self._texts(aligned.column(target), target, "Submission")
        y_true = [y_true[i] for i in order]
        y_pred = [y_pred[i] for i in order]
        if self.strict:
            undefined = _both_empty_rows(y_true, y_pred)
            if len(undefined):
                ids = answers.column(self.id_column).take(pa.array(order[undefined]))
                raise InvalidSubmission(
                    f"{len(undefined)} rows have no word in either the prediction or the "
                    f"answer (ids: {show(ids.to_pylist(), len(undefined))}); MLE-bench's "
                    "Jaccard divides by zero there and cannot grade the submission: "
                    "predict at least one word."
                )
        return y_true, y_pred

    def compute(self, prepared) -> float:
        y_true, y_pred = prepared
        return word_jaccard_mean(y_true, y_pred, both_empty=None if self.strict else 0.0)


def _both_empty_rows(y_true: list[str], y_pred: list[str]) -> np.ndarray:
    true_empty = np.fromiter((not t.split() for t in y_true), bool, count=len(y_true))
    pred_empty = np.fromiter((not p.split() for p in y_pred), bool, count=len(y_pred))
    return np.flatnonzero(true_empty & pred_empty)


GRADERS = {
    grader.competition_id: grader
    for grader in [
        WordJaccardGrader(
            "chaii-hindi-and-tamil-question-answering",
            id_column="id",
            target_columns=["PredictionString"],
            answers="chaii-hindi-and-tamil-question-answering/prepared/private/test.csv",
            strict=False,
            quirks=(
                "An empty prediction counts as no words; a row with no word on either side "
                "scores 0 (scikit-learn's jaccard_score).",
                "A PredictionString column holding only numbers is rejected (not text).",
            ),
        ),
        WordJaccardGrader(
            "tweet-sentiment-extraction",
            id_column="textID",
            target_columns=["selected_text"],
            answers="tweet-sentiment-extraction/prepared/private/test.csv",
            strict=True,
            quirks=(
                "A row where neither the prediction nor the answer has a word makes the whole "
                "submission ungradable (division by zero in MLE-bench's Jaccard).",
            ),
        ),
    ]
}
