"""3d-object-detection-for-autonomous-vehicles (Lyft): 3D box mAP over IoU 0.50..0.95."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.competitions.columns import IdAlignedGrader
from graders.competitions.pandas_cells import is_text, pandas_sort_order
from graders.metrics.detection_3d import (
    MalformedBoxes3D,
    map_3d_iou_range,
    parse_boxes_3d,
    valid_boxes,
)
from graders.results import GraderError, InvalidSubmission


class Lyft3DGrader(IdAlignedGrader):
    """Mean over samples and IoU thresholds of the per-sample 3D mAP (Lyft devkit rules)."""

    metric = "map_3d_iou_range"

    def validation_checks(self, submission: pa.Table) -> None:
        # MLE-bench ignores boxes of classes absent from a sample's answers, even invalid
        # ones; which classes those are is private, so validation wants every box valid.
        target = self.target_columns[0]
        if target not in submission.column_names or self.id_column not in submission.column_names:
            return  # prepare names the missing column
        ids = submission.column(self.id_column)
        predicted = self._predictions(submission.column(target), ids)
        bad = np.flatnonzero(~valid_boxes(predicted))
        if len(bad):
            raise InvalidSubmission(
                f"{len(bad)} predicted boxes are invalid (first in sample "
                f"{ids[int(predicted.sample[bad[0]])].as_py()!r}): NaN value, size not positive "
                "or not a rectangle. Every box must be valid, whatever its class."
            )

    def _predictions(self, column: pa.ChunkedArray, ids: pa.ChunkedArray):
        target = self.target_columns[0]
        if pa.types.is_null(column.type):
            texts = [""] * len(column)
        elif not is_text(column):
            raise InvalidSubmission(f"Column '{target}' must hold text, not numbers.")
        else:
            texts = pc.fill_null(column, "").to_pylist()  # an empty cell means no boxes
        try:
            return parse_boxes_3d(texts)
        except MalformedBoxes3D as error:
            raise InvalidSubmission(
                f"PredictionString of sample {ids[error.row].as_py()!r}: {error.reason}; expected "
                "'confidence x y z width length height yaw class' groups separated by single "
                "spaces."
            ) from None

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        order = pandas_sort_order(answers.column(self.id_column))  # MLE-bench's sample order
        answers, aligned = answers.take(pa.array(order)), aligned.take(pa.array(order))
        ids = answers.column(self.id_column)
        target = self.target_columns[0]
        predicted = self._predictions(aligned.column(target), ids)
        try:
            truth = parse_boxes_3d(answers.column(target).to_pylist())
        except MalformedBoxes3D as error:
            raise GraderError(f"Answers PredictionString is malformed: {error}") from None
        return truth, predicted, answers.num_rows, ids

    def compute(self, prepared) -> float:
        truth, predicted, n_samples, ids = prepared
        try:
            return map_3d_iou_range(truth, predicted, n_samples)
        except MalformedBoxes3D as error:
            raise InvalidSubmission(
                f"A box of sample {ids[error.row].as_py()!r} is invalid: {error.reason}."
            ) from None


GRADERS = {
    "3d-object-detection-for-autonomous-vehicles": Lyft3DGrader(
        "3d-object-detection-for-autonomous-vehicles",
        id_column="Id",
        target_columns=["PredictionString"],
        answers="3d-object-detection-for-autonomous-vehicles/prepared/private/test.csv",
        quirks=(
            "mAP is computed per sample (over the classes in that sample's truth) and then "
            "averaged over samples and the ten IoU thresholds; predictions of classes absent "
            "from a sample's truth are ignored, even when malformed.",
            "A prediction matched to a true box already taken at that threshold is a false "
            "positive (its best box is not replaced by the next best).",
            "Values are split on single spaces; an empty PredictionString means no boxes.",
            "Scores agree with MLE-bench to about 1e-15: its box corners come from a BLAS "
            "matrix product whose last bit depends on the machine.",
        ),
    )
}
