"""Competitions scored by edit distance: billion-word-imputation, bms-molecular-translation
(characters) and multi-modal-gesture-recognition (gesture ids)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from graders.competitions.columns import IdAlignedGrader
from graders.competitions.pandas_cells import as_pandas_str, strict_text
from graders.metrics.edit_distance import levenshtein_mean, normalized_sequence_levenshtein
from graders.results import GraderError, InvalidSubmission
from graders.validation import show


class LevenshteinMeanGrader(IdAlignedGrader):
    """Mean character-level Levenshtein distance between predicted and true text.

    ``as_text``: both sides go through pandas' ``astype(str)`` first (bms: an empty cell
    becomes the text "nan"); otherwise every prediction must already be text
    (billion-word: MLE-bench's distance call fails on an empty cell).
    """

    metric = "levenshtein_mean"
    validate_computes = False  # the distance cannot reject anything prepare accepted

    def __init__(self, *args, as_text: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.as_text = as_text

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        if self.as_text:
            return as_pandas_str(answers.column(target)), as_pandas_str(aligned.column(target))
        try:
            truth = strict_text(answers.column(target), target)
        except InvalidSubmission as error:  # names answer rows: the data's fault, not shown
            raise GraderError(f"Answers column '{target}' is unusable: {error}") from None
        return truth, strict_text(aligned.column(target), target)

    def compute(self, prepared) -> float:
        y_true, y_pred = prepared
        return levenshtein_mean(y_true, y_pred)


class GestureSequenceGrader(IdAlignedGrader):
    """Token-level edit distance of gesture-id sequences over the number of true gestures."""

    metric = "normalized_sequence_levenshtein"
    validate_computes = False

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        try:
            y_true = _integer_sequences(as_pandas_str(answers.column(target)), target, "Answers")
        except InvalidSubmission as error:  # quotes answers: the data's fault, not shown
            raise GraderError(str(error)) from None
        y_pred = _integer_sequences(as_pandas_str(aligned.column(target)), target, "Submission")
        return y_true, y_pred

    def compute(self, prepared) -> float:
        y_true, y_pred = prepared
        return normalized_sequence_levenshtein(y_true, y_pred)


def _integer_sequences(texts: list[str], name: str, what: str) -> list[list[int]]:
    """Space-separated integers of each row (Python ``int`` syntax, like MLE-bench's map(int))."""
    tokens = [text.split() for text in texts]
    counts = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    flat = [t for row in tokens for t in row]
    try:
        values = np.array(flat).astype(np.int64) if flat else np.zeros(0, np.int64)
    except (ValueError, OverflowError):
        bad = []
        for text, row in zip(texts, tokens, strict=True):
            for token in row:
                try:
                    int(token)
                except ValueError:
                    bad.append(text)
                    break
        raise InvalidSubmission(
            f"{what} column '{name}' must hold gesture ids as integers separated by spaces; "
            f"{len(bad)} rows do not (first: {show(bad, len(bad))})."
        ) from None
    return [part.tolist() for part in np.split(values, np.cumsum(counts)[:-1])]


_IMPUTATION_QUIRK = (
    "Predictions are compared exactly as read: an empty cell (or a missing-value spelling such "
    "as 'NA') is not text and makes the submission ungradable."
)

GRADERS = {
    grader.competition_id: grader
    for grader in [
        LevenshteinMeanGrader(
            "billion-word-imputation",
            id_column="id",
            target_columns=["sentence"],
            answers="billion-word-imputation/prepared/private/test.csv",
            as_text=False,
            quirks=(_IMPUTATION_QUIRK,),
        ),
        LevenshteinMeanGrader(
            "bms-molecular-translation",
            id_column="image_id",
            target_columns=["InChI"],
            answers="bms-molecular-translation/prepared/private/test.csv",
            as_text=True,
            quirks=(
                "Both sides are converted with pandas' astype(str): an empty prediction is "
                "scored as the text 'nan'.",
            ),
        ),
        GestureSequenceGrader(
            "multi-modal-gesture-recognition",
            id_column="Id",
            target_columns=["Sequence"],
            answers="multi-modal-gesture-recognition/prepared/private/test.csv",
            quirks=(
                "An empty prediction becomes the text 'nan' and is rejected as not an integer.",
                "A column where every prediction is one number with a decimal point "
                "(e.g. '3.0') is rejected: its tokens are not integers.",
            ),
        ),
    ]
}
