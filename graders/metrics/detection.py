"""Mean average precision of 2D boxes: COCO's (pycocotools) and SIIM-COVID19's VOC variant.

Boxes are ``xmin ymin xmax ymax``. ``LabelledBoxes`` holds the boxes of all images of a file
in one table (image index, label, confidence, corners) so both metrics can find candidate
matches for every image at once; the greedy matching is walked one box at a time only in the
few images where one box could match several others.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from graders.metrics.tokens import parse_floats


@dataclass(frozen=True)
class LabelledBoxes:
    """Boxes of many images: one entry per box, in file order."""

    image: np.ndarray  # int64 image (row) index
    label: np.ndarray  # object: class label as written (text)
    confidence: np.ndarray  # float64
    corners: np.ndarray  # float64 (n, 4): xmin ymin xmax ymax

    def __len__(self) -> int:
        return len(self.image)


class MalformedBoxes(ValueError):
    """A prediction string that does not split into ``label confidence x y x y`` groups."""

    def __init__(self, row: int, reason: str) -> None:
        super().__init__(f"row {row}: {reason}")
        self.row = row
        self.reason = reason


def parse_box_strings(strings: Sequence[str]) -> LabelledBoxes:
    """Parse ``label confidence xmin ymin xmax ymax`` groups (any whitespace) of each row.

    Raises ``MalformedBoxes`` when a row's token count is not a multiple of 6 or a number
    does not parse.
    """
    tokens = []
    for row, text in enumerate(strings):
        if not isinstance(text, str):
            raise MalformedBoxes(row, f"expected text, got {text!r}")
        parts = text.strip().split()
        if len(parts) % 6:
            raise MalformedBoxes(row, f"expected groups of 6 values, got {len(parts)}")
        tokens.append(parts)
    counts = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)) // 6
    flat = np.array([t for parts in tokens for t in parts], dtype=object).reshape(-1, 6)
    try:
        numbers = parse_floats(flat[:, 1:]).reshape(-1, 5)
    except ValueError:
        for row, parts in enumerate(tokens):  # only on failure: name the row
            for i, token in enumerate(parts):
                if i % 6:
                    try:
                        float(token)
                    except ValueError:
                        raise MalformedBoxes(row, f"'{token}' is not a number") from None
        raise
    return LabelledBoxes(
        image=np.repeat(np.arange(len(tokens), dtype=np.int64), counts),
        label=flat[:, 0],
        confidence=numbers[:, 0],
        corners=numbers[:, 1:],
    )


# --- SIIM-COVID19: VOC-style AP at IoU > 0.5 with injected pairs --------------------------------


def _py_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Python's ``max(a, b)`` elementwise (keeps ``a`` unless ``b > a``; NaN-safe like Python)."""
    return np.where(b > a, b, a)


def _py_min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(b < a, b, a)


def corner_iou(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """IoU of paired corner boxes ``(n, 4)``, with the same float steps as MLE-bench (0 if the
    union is not positive)."""
    inter_w = _py_max(
        np.zeros(len(pred)), _py_min(pred[:, 2], truth[:, 2]) - _py_max(pred[:, 0], truth[:, 0])
    )
    inter_h = _py_max(
        np.zeros(len(pred)), _py_min(pred[:, 3], truth[:, 3]) - _py_max(pred[:, 1], truth[:, 1])
    )
    inter = inter_w * inter_h
    area_pred = (pred[:, 2] - pred[:, 0]) * (pred[:, 3] - pred[:, 1])
    area_truth = (truth[:, 2] - truth[:, 0]) * (truth[:, 3] - truth[:, 1])
    union = area_pred + area_truth - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = inter / np.where(union > 0, union, 1.0)
    return np.where(union > 0, iou, 0.0)


def _rank_in_image(boxes: LabelledBoxes) -> np.ndarray:
    """Position of each box in its image once sorted by confidence, highest first (stable)."""
    order = np.lexsort((np.arange(len(boxes)), -boxes.confidence, boxes.image))
    rank = np.empty(len(boxes), dtype=np.int64)
    firsts = np.searchsorted(boxes.image[order], boxes.image[order], side="left")
    rank[order] = np.arange(len(boxes)) - firsts
    return rank


def voc_map_iou50(truth: LabelledBoxes, predicted: LabelledBoxes, n_images: int) -> float:
    """SIIM-COVID19's mean AP over the classes present in ``truth``.

    Per class and image, predictions sorted by confidence each take the unmatched true box of
    the class with the highest IoU above 0.5 (true positive) or count as false positives; each
    unmatched true box adds a (positive, score 0) pair and an image with neither adds a
    (negative, score 0) pair. AP is scikit-learn's ``average_precision_score`` over the pooled
    pairs. Raises ``ValueError`` where MLE-bench fails: a class whose pairs are all positive,
    or a scored confidence that is not a finite number (scikit-learn's check).
    """
    from sklearn.metrics import average_precision_score

    # A NaN confidence sorts last here; Python's sort (MLE-bench) has no total order with NaN.
    # Only the matching order of an image holding one can differ, and a NaN of a scored class
    # makes scikit-learn fail either way.
    rank = _rank_in_image(predicted)
    aps = []
    for cls in sorted(set(truth.label.tolist())):
        pred_index = np.flatnonzero(predicted.label == cls)
        true_index = np.flatnonzero(truth.label == cls)
        matched_pred, matched_true = _match_class(predicted, truth, pred_index, true_index, rank)
        n_unmatched_true = len(true_index) - int(matched_true.sum())
        has_any = np.zeros(n_images, dtype=bool)
        has_any[predicted.image[pred_index]] = True
        has_any[truth.image[true_index]] = True
        n_nothing = int(n_images - has_any.sum())
        y_true = np.concatenate(
            [
                matched_pred.astype(np.int64),
                np.ones(n_unmatched_true, np.int64),
                np.zeros(n_nothing, np.int64),
            ]
        )
        y_score = np.concatenate(
            [predicted.confidence[pred_index], np.zeros(n_unmatched_true), np.zeros(n_nothing)]
        )
        if len(y_true) and y_true.all():
            raise ValueError(f"every pair of class '{cls}' is positive: its AP is undefined")
        aps.append(average_precision_score(y_true, y_score))
    return float(np.mean(aps)) if aps else 0.0


def _match_class(
    predicted: LabelledBoxes,
    truth: LabelledBoxes,
    pred_index: np.ndarray,
    true_index: np.ndarray,
    rank: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Greedy matching of one class; returns (is TP per prediction, is matched per true box)."""
    matched_pred = np.zeros(len(pred_index), dtype=bool)
    matched_true = np.zeros(len(true_index), dtype=bool)
    if len(pred_index) == 0 or len(true_index) == 0:
        return matched_pred, matched_true
    pairs = pd.DataFrame(
        {"image": predicted.image[pred_index], "p": np.arange(len(pred_index))}
    ).merge(pd.DataFrame({"image": truth.image[true_index], "t": np.arange(len(true_index))}))
    p = pairs["p"].to_numpy(np.int64)
    t = pairs["t"].to_numpy(np.int64)
    iou = corner_iou(predicted.corners[pred_index[p]], truth.corners[true_index[t]])
    candidate = iou > 0.5
    p, t, iou = p[candidate], t[candidate], iou[candidate]
    if len(p) == 0:
        return matched_pred, matched_true
    # Uncontested pairs (the prediction has one candidate box, the box one candidate
    # prediction) always match; images with any other pattern are walked greedily.
    p_count = np.bincount(p, minlength=len(pred_index))
    t_count = np.bincount(t, minlength=len(true_index))
    image = predicted.image[pred_index[p]]
    contested_images = np.unique(image[(p_count[p] > 1) | (t_count[t] > 1)])
    walk = np.isin(image, contested_images)
    matched_pred[p[~walk]] = True
    matched_true[t[~walk]] = True
    if walk.any():
        p, t, iou = p[walk], t[walk], iou[walk]
        # Predictions in confidence order; candidates by IoU, first true box on ties.
        order = np.lexsort((t, -iou, rank[pred_index[p]], image[walk]))
        taken: set[int] = set()
        done: set[int] = set()
        for pi, ti in zip(p[order].tolist(), t[order].tolist(), strict=True):
            if pi in done or ti in taken:
                continue
            taken.add(ti)
            done.add(pi)
            matched_pred[pi] = True
            matched_true[ti] = True
    return matched_pred, matched_true


# --- VinBigData: pycocotools COCOeval -------------------------------------------------------------


@dataclass(frozen=True)
class CocoBoxes:
    """Annotations handed to pycocotools; ``bbox`` rows are passed as COCO's x y w h as given."""

    image: np.ndarray  # int64 image index
    category: np.ndarray  # int64 category id
    bbox: np.ndarray  # float64 (n, 4)
    area: np.ndarray  # float64
    score: np.ndarray | None = None  # float64, predictions only


def coco_map_at_iou(
    truth: CocoBoxes,
    predicted: CocoBoxes,
    categories: Sequence[tuple[object, int]],
    n_images: int,
    iou_threshold: float,
) -> float:
    """pycocotools' bbox AP at one IoU threshold (all areas, 100 detections per image).

    ``categories`` are ``(name, id)`` pairs; images are ``0..n_images-1``. Returns
    ``COCOeval.stats[0]``: the mean precision over categories with truth boxes, -1 if none.
    """
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    images = [{"id": i} for i in range(n_images)]
    cats = [{"id": int(cid), "name": name, "supercategory": "none"} for name, cid in categories]
    truth_anns = _annotations(truth)
    pred_anns = _annotations(predicted)
    with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints progress
        coco_truth = COCO()
        coco_truth.dataset = {
            "type": "instances",
            "images": images,
            "categories": cats,
            "annotations": truth_anns,
        }
        coco_truth.createIndex()
        coco_pred = COCO()
        coco_pred.dataset = {
            "images": list(images),
            "categories": list(cats),
            "annotations": pred_anns,
        }
        coco_pred.createIndex()
        evaluation = COCOeval(coco_truth, coco_pred, "bbox")
        evaluation.params.imgIds = sorted(coco_truth.getImgIds())
        evaluation.params.useCats = True
        evaluation.params.iouThrs = np.array([iou_threshold])
        evaluation.evaluate()
        evaluation.accumulate()
        evaluation.summarize()
    return float(evaluation.stats[0])


def _annotations(boxes: CocoBoxes) -> list[dict]:
    columns = {
        "image_id": boxes.image.tolist(),
        "category_id": boxes.category.tolist(),
        "bbox": boxes.bbox.tolist(),
        "area": boxes.area.tolist(),
    }
    if boxes.score is not None:
        columns["score"] = boxes.score.tolist()
    names = list(columns)
    return [
        {
            "id": k,
            **dict(zip(names, values, strict=True)),
            "segmentation": [],
            "ignore": 0,
            "iscrowd": 0,
        }
        for k, values in enumerate(zip(*columns.values(), strict=True))
    ]
