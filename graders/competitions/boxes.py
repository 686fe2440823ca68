"""Competitions scored on 2D boxes: vinbigdata (pycocotools mAP at IoU 0.4) and siim-covid19
(VOC-style mAP at IoU 0.5 over study- and image-level rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from graders.competitions.columns import IdAlignedGrader
from graders.competitions.pandas_cells import is_text
from graders.core import CompetitionGrader
from graders.metrics.detection import (
    CocoBoxes,
    MalformedBoxes,
    coco_map_at_iou,
    parse_box_strings,
    voc_map_iou50,
)
from graders.metrics.tokens import parse_floats
from graders.results import GraderError, InvalidSubmission
from graders.validation import SHOWN, require_columns, show


def _prediction_texts(column: pa.ChunkedArray, name: str, ids: pa.ChunkedArray) -> list[str]:
    """Every cell must be text: MLE-bench calls string methods on it (an empty cell fails)."""
    if not is_text(column) or column.null_count:
        if is_text(column):
            empty = np.flatnonzero(pc.is_null(column).to_numpy(zero_copy_only=False))
            examples = ids.take(pa.array(empty[:SHOWN])).to_pylist()
            raise InvalidSubmission(
                f"Column '{name}' is empty for {len(empty)} rows (first ids: "
                f"{show(examples, len(empty))}): every row needs at least one prediction."
            )
        raise InvalidSubmission(f"Column '{name}' must hold text predictions, not numbers.")
    return column.to_pylist()


# --- vinbigdata ------------------------------------------------------------------------------


class VinBigDataGrader(CompetitionGrader):
    """pycocotools bbox AP at IoU 0.4 over the answers' classes, like MLE-bench's VinBigDataEval."""

    metric = "coco_map_iou40"
    text_columns = ("image_id",)

    def prepare(self, submission: pa.Table, answers: pa.Table):
        require_columns(submission, ("PredictionString", "image_id"))
        answer_ids = answers.column("image_id")
        submitted_ids = submission.column("image_id")
        # Only the sets of ids are compared: repeated rows add their boxes, no length check.
        unknown = pc.filter(submitted_ids, pc.invert(pc.is_in(submitted_ids, answer_ids)))
        missing = pc.filter(answer_ids, pc.invert(pc.is_in(answer_ids, submitted_ids)))
        if len(unknown) or len(missing):
            problems = []
            if len(missing):
                distinct = pc.unique(missing)
                problems.append(f"missing images: {show(distinct.to_pylist(), len(distinct))}")
            if len(unknown):
                distinct = pc.unique(unknown)
                problems.append(f"unknown images: {show(distinct.to_pylist(), len(distinct))}")
            raise InvalidSubmission(
                "The set of image_id values must equal the test set's: " + "; ".join(problems) + "."
            )
        texts = _prediction_texts(
            submission.column("PredictionString"), "PredictionString", submitted_ids
        )
        truth, categories, image_index = _coco_truth(answers)
        predicted = _coco_predictions(texts, submitted_ids, image_index)
        return truth, predicted, categories, len(image_index)

    def compute(self, prepared) -> float:
        truth, predicted, categories, n_images = prepared
        return coco_map_at_iou(truth, predicted, categories, n_images, iou_threshold=0.4)


def _coco_truth(answers: pa.Table):
    frame = answers.to_pandas()
    for column in ("x_min", "y_min", "x_max", "y_max"):
        if frame[column].isna().any():
            raise GraderError(f"Answers hold empty '{column}' values.")
    if "class_name" not in frame.columns:
        frame["class_name"] = frame["class_id"]
    # Images are numbered by first appearance; boxes listed image by image (annotation ids
    # matter: pycocotools cannot match the box numbered 0).
    image_codes, unique_images = pd.factorize(frame["image_id"])
    order = np.argsort(image_codes, kind="stable")
    frame = frame.iloc[order]
    corners = frame[["x_min", "y_min", "x_max", "y_max"]].to_numpy(np.float64)
    truth = CocoBoxes(
        image=image_codes[order].astype(np.int64),
        category=frame["class_id"].to_numpy().astype(np.int64),
        bbox=corners,
        area=(corners[:, 2] - corners[:, 0]) * (corners[:, 3] - corners[:, 1]),
    )
    cats = frame[["class_name", "class_id"]].drop_duplicates().sort_values(by="class_id")
    categories = [(name, int(cid)) for name, cid in cats.itertuples(index=False)]
    image_index = pd.Index(unique_images)
    return truth, categories, image_index


def _coco_predictions(texts: list[str], ids: pa.ChunkedArray, image_index: pd.Index) -> CocoBoxes:
    tokens = [text.split(" ") for text in texts]  # MLE-bench splits on single spaces
    counts = np.fromiter(map(len, tokens), np.int64, count=len(tokens))
    bad = np.flatnonzero(counts % 6)
    if len(bad):
        raise InvalidSubmission(
            f"PredictionString of image {ids[int(bad[0])].as_py()!r} has {counts[bad[0]]} values; "
            "expected groups of 6 'class_id confidence x_min y_min x_max y_max' separated by "
            "single spaces."
        )
    flat = [t for row in tokens for t in row]
    try:
        numbers = parse_floats(np.array(flat, dtype=object)).reshape(-1, 6)
    except ValueError:
        row = next(i for i, row in enumerate(tokens) if not _all_floats(row))
        raise InvalidSubmission(
            f"PredictionString of image {ids[row].as_py()!r} holds a value that is not a number."
        ) from None
    if not np.isfinite(numbers[:, 0]).all():
        raise InvalidSubmission("Every predicted class_id must be a finite number.")
    rows = np.repeat(np.arange(len(tokens)), counts // 6)
    image = image_index.get_indexer(pd.Index(ids.to_pylist()))[rows]
    corners = numbers[:, 2:6]
    return CocoBoxes(
        image=image.astype(np.int64),
        category=np.trunc(numbers[:, 0]).astype(np.int64),  # int() of the float
        bbox=corners,
        area=(corners[:, 2] - corners[:, 0]) * (corners[:, 3] - corners[:, 1]),
        score=numbers[:, 1],
    )


def _all_floats(tokens: list[str]) -> bool:
    try:
        [float(t) for t in tokens]
    except ValueError:
        return False
    return True


# --- siim-covid19 ----------------------------------------------------------------------------------


class SiimGrader(IdAlignedGrader):
    """Mean over the answers' classes of a VOC-style AP at IoU > 0.5 (see the metric)."""

    metric = "map_iou50_voc"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        ids = answers.column(self.id_column)
        texts = _prediction_texts(aligned.column(target), target, ids)
        try:
            predicted = parse_box_strings(texts)
        except MalformedBoxes as error:
            raise InvalidSubmission(
                f"PredictionString of {ids[error.row].as_py()!r}: {error.reason}; expected "
                "'label confidence xmin ymin xmax ymax' groups."
            ) from None
        try:
            truth = parse_box_strings(answers.column(target).to_pylist())
        except MalformedBoxes as error:
            raise GraderError(f"Answers PredictionString is malformed: {error}") from None
        return truth, predicted, answers.num_rows

    def compute(self, prepared) -> float:
        truth, predicted, n_rows = prepared
        if n_rows == 0:
            return 0.0
        return voc_map_iou50(truth, predicted, n_rows)


GRADERS = {
    grader.competition_id: grader
    for grader in [
        VinBigDataGrader(
            "vinbigdata-chest-xray-abnormalities-detection",
            answers="vinbigdata-chest-xray-abnormalities-detection/prepared/private/answers.csv",
            quirks=(
                "Box corners (x_min y_min x_max y_max) are handed to pycocotools as if they "
                "were x y width height, for answers and predictions alike.",
                "pycocotools cannot match an annotation numbered 0: the first answer box is "
                "never found (a perfect submission scores below 1), and a box matched by the "
                "first prediction stays open to a second one.",
                "Only the set of image ids is checked: repeated rows add their boxes.",
                "PredictionString must not be empty (use '14 1 0 0 1 1' for no finding); "
                "values are split on single spaces and the class id is truncated to an integer.",
            ),
        ),
        SiimGrader(
            "siim-covid19-detection",
            id_column="id",
            target_columns=["PredictionString"],
            answers="siim-covid19-detection/prepared/private/test.csv",
            quirks=(
                "Study-level labels and 'none' are ordinary classes with dummy boxes; each "
                "class's AP pools every row, adding (positive, 0) for each missed box and "
                "(negative, 0) for a row with neither truth nor prediction of the class.",
                "An empty PredictionString is rejected.",
                "A class whose pooled pairs are all positive makes the submission ungradable.",
            ),
        ),
    ]
}
