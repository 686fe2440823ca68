"""kuzushiji-recognition: character points inside true boxes, scored by a pooled F1."""

from __future__ import annotations

import pyarrow as pa

from graders.competitions.columns import IdAlignedGrader
from graders.competitions.pandas_cells import is_text
from graders.metrics.kuzushiji import MalformedLabels, kuzushiji_f1, parse_pages
from graders.results import GraderError, InvalidSubmission


class KuzushijiGrader(IdAlignedGrader):
    """Micro F1 of ``label x y`` points matched to ``label x y width height`` boxes."""

    metric = "kuzushiji_point_f1"
    validate_computes = False

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        truth = _pages(answers.column(target), target)
        predicted = _pages(aligned.column(target), target)
        ids = answers.column(self.id_column)
        try:
            parse_pages(predicted, 3)  # the submission checks MLE-bench makes before scoring
        except MalformedLabels as error:
            raise InvalidSubmission(
                f"Column '{target}' of image {ids[error.row].as_py()!r}: {error.reason}; expected "
                "'label x y' triples separated by single spaces."
            ) from None
        try:
            parse_pages(truth, 5)
        except MalformedLabels as error:
            raise GraderError(f"Answers labels are malformed: {error}") from None
        return truth, predicted

    def compute(self, prepared) -> float:
        truth, predicted = prepared
        return kuzushiji_f1(truth, predicted)


def _pages(column: pa.ChunkedArray, name: str) -> list[str | None]:
    if pa.types.is_null(column.type):
        return [None] * len(column)
    if not is_text(column):
        raise InvalidSubmission(f"Column '{name}' must hold text ('label x y ...'), not numbers.")
    return column.to_pylist()


GRADERS = {
    "kuzushiji-recognition": KuzushijiGrader(
        "kuzushiji-recognition",
        id_column="image_id",
        target_columns=["labels"],
        answers="kuzushiji-recognition/prepared/private/test.csv",
        quirks=(
            "A point must lie strictly inside its box (a point on the border does not count).",
            "Boxes are matched in the order the answers list them, each taking the first unused "
            "prediction inside it with the same label.",
            "Values are split on single spaces: a double space makes an empty token and usually "
            "an invalid submission.",
        ),
    )
}
