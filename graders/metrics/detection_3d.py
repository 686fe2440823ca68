"""Lyft 3D object detection's mean average precision over IoU thresholds 0.50..0.95.

A box is ``confidence x y z width length height yaw class``; two boxes overlap as their
ground footprints (rotated rectangles, intersected with shapely) times their vertical
overlap. Per sample and true class, predictions by confidence are matched to the free true
box they overlap most, and VOC's AP is computed; the score is the mean over classes,
samples and thresholds. All samples at once: one shapely array of footprints, only pairs
whose bounding circles meet intersected, and the IoU matrix computed once for the ten
thresholds (MLE-bench, through the Lyft devkit, computes it per threshold).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from graders.metrics.tokens import parse_floats

IOU_THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


class MalformedBoxes3D(ValueError):
    """A prediction string or box that MLE-bench's parser or box checks reject."""

    def __init__(self, row: int, reason: str) -> None:
        super().__init__(f"row {row}: {reason}")
        self.row = row
        self.reason = reason


@dataclass(frozen=True)
class Boxes3D:
    """3D boxes of many samples, in file order (sample index, then position in its string)."""

    sample: np.ndarray  # int64
    name: np.ndarray  # object (class name)
    score: np.ndarray  # float64 confidence
    center: np.ndarray  # float64 (n, 3)
    size: np.ndarray  # float64 (n, 3): width, length, height
    yaw: np.ndarray  # float64

    def __len__(self) -> int:
        return len(self.sample)


def parse_boxes_3d(strings: Sequence[str]) -> Boxes3D:
    """Parse groups of 9 single-space-separated tokens per row; blank rows have no boxes.

    Raises ``MalformedBoxes3D`` when the token count is not a multiple of 9, a number does not
    parse, or a yaw is infinite (its rotation cannot be built).
    """
    tokens = []
    for row, text in enumerate(strings):
        if not isinstance(text, str):
            raise MalformedBoxes3D(row, f"expected text, got {text!r}")
        if text.strip() == "":
            tokens.append([])
            continue
        parts = text.split(" ")  # MLE-bench splits on single spaces
        if len(parts) % 9:
            raise MalformedBoxes3D(
                row, f"expected 9 values per box, got {len(parts)} values in total"
            )
        tokens.append(parts)
    counts = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)) // 9
    flat = np.array([t for parts in tokens for t in parts], dtype=object).reshape(-1, 9)
    try:
        numbers = parse_floats(flat[:, :8]).reshape(-1, 8)
    except ValueError:
        for row, parts in enumerate(tokens):  # only on failure: name the row
            for i, token in enumerate(parts):
                if i % 9 != 8:
                    try:
                        float(token)
                    except ValueError:
                        raise MalformedBoxes3D(row, f"'{token}' is not a number") from None
        raise
    sample = np.repeat(np.arange(len(tokens), dtype=np.int64), counts)
    infinite_yaw = np.flatnonzero(np.isinf(numbers[:, 7]))
    if len(infinite_yaw):  # math.cos(inf) fails while building the rotation
        raise MalformedBoxes3D(int(sample[infinite_yaw[0]]), "a yaw angle is infinite")
    return Boxes3D(
        sample=sample,
        name=flat[:, 8],
        score=numbers[:, 0],
        center=numbers[:, 1:4],
        size=numbers[:, 4:7],
        yaw=numbers[:, 7],
    )


def _footprints(boxes: Boxes3D) -> tuple[np.ndarray, np.ndarray]:
    """Corner coordinates ``(n, 4, 2)`` of each ground footprint, and a validity mask.

    Follows the devkit: a quaternion about the z axis from the yaw, its rotation matrix's first
    column as (cos, sin), corners in the devkit's order, and its right-angle assertions.
    """
    half_yaw = boxes.yaw / 2.0
    w = np.fromiter(map(math.cos, half_yaw.tolist()), dtype=np.float64, count=len(boxes))
    z = np.fromiter(map(math.sin, half_yaw.tolist()), dtype=np.float64, count=len(boxes))
    # Rotation matrix entries of the unit quaternion (w, 0, 0, z). MLE-bench gets them from a
    # 4x4 BLAS product whose last bit depends on the machine's kernel (fused multiply-add).
    cos_angle = w * w - z * z
    sin_angle = z * w + w * z
    cx, cy = boxes.center[:, 0], boxes.center[:, 1]
    width, length = boxes.size[:, 0], boxes.size[:, 1]
    lc, ls = length / 2 * cos_angle, length / 2 * sin_angle
    wc, ws = width / 2 * cos_angle, width / 2 * sin_angle
    corners = np.stack(
        [
            np.stack([cx + lc + ws, cy + ls - wc], axis=1),
            np.stack([cx + lc - ws, cy + ls + wc], axis=1),
            np.stack([cx - lc - ws, cy - ls + wc], axis=1),
            np.stack([cx - lc + ws, cy - ls - wc], axis=1),
        ],
        axis=1,
    )

    def right_angle(a: int, b: int, c: int) -> np.ndarray:
        d1 = corners[:, b] - corners[:, a]
        d2 = corners[:, c] - corners[:, a]
        return np.isclose(d1[:, 0] * d2[:, 0] + d1[:, 1] * d2[:, 1], 0)

    with np.errstate(invalid="ignore"):
        valid = (
            ~np.isnan(boxes.center).any(axis=1)
            & ~np.isnan(boxes.size).any(axis=1)
            & ~np.isnan(boxes.yaw)
            & (boxes.size > 0).all(axis=1)
            & right_angle(0, 1, 3)
            & right_angle(1, 0, 2)
            & right_angle(2, 1, 3)
            & right_angle(3, 0, 2)
        )
    return corners, valid


def valid_boxes(boxes: Boxes3D) -> np.ndarray:
    """Which boxes the devkit can build (no NaN, positive sizes, a rectangular footprint)."""
    return _footprints(boxes)[1]


def _pair_ious(
    predicted: Boxes3D, truth: Boxes3D, pred_corners, truth_corners, p: np.ndarray, t: np.ndarray
) -> np.ndarray:
    """3D IoU of prediction ``p[i]`` with true box ``t[i]``, like the devkit's ``get_iou``."""
    import shapely

    iou = np.zeros(len(p))
    # Footprints whose bounding circles do not meet cannot intersect: IoU exactly 0.
    radius_p = np.hypot(predicted.size[p, 0], predicted.size[p, 1]) / 2
    radius_t = np.hypot(truth.size[t, 0], truth.size[t, 1]) / 2
    gap = np.hypot(
        predicted.center[p, 0] - truth.center[t, 0], predicted.center[p, 1] - truth.center[t, 1]
    )
    near = np.flatnonzero(gap <= (radius_p + radius_t) * (1 + 1e-9) + 1e-9)
    if len(near) == 0:
        return iou
    pn, tn = p[near], t[near]
    ring_p = np.concatenate([pred_corners[pn], pred_corners[pn, :1]], axis=1)
    ring_t = np.concatenate([truth_corners[tn], truth_corners[tn, :1]], axis=1)
    area = shapely.area(shapely.intersection(shapely.polygons(ring_p), shapely.polygons(ring_t)))
    half_p, half_t = predicted.size[pn, 2] / 2, truth.size[tn, 2] / 2
    top = _py_min(truth.center[tn, 2] + half_t, predicted.center[pn, 2] + half_p)
    bottom = _py_max(truth.center[tn, 2] - half_t, predicted.center[pn, 2] - half_p)
    height = np.where(top - bottom > 0, top - bottom, 0.0)
    intersection = height * area
    volume_p = predicted.size[pn, 0] * predicted.size[pn, 1] * predicted.size[pn, 2]
    volume_t = truth.size[tn, 0] * truth.size[tn, 1] * truth.size[tn, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        iou[near] = np.clip(intersection / (volume_p + volume_t - intersection), 0, 1)
    return iou


def _py_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(b > a, b, a)


def _py_min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(b < a, b, a)


def map_3d_iou_range(
    truth: Boxes3D,
    predicted: Boxes3D,
    n_samples: int,
    thresholds: Sequence[float] = IOU_THRESHOLDS,
) -> float:
    """Mean over samples and thresholds of the per-sample mAP (higher is better).

    Samples are ``0..n_samples-1`` in the order MLE-bench averages them. A sample without true
    boxes makes the result NaN, as in MLE-bench. Raises ``ValueError`` when a box the devkit
    would build is invalid (NaN, non-positive size, footprint that is not a rectangle).
    """
    thresholds = np.asarray(thresholds, dtype=np.float64)
    truth_keys = pd.DataFrame({"sample": truth.sample, "name": truth.name})
    classes = truth_keys.drop_duplicates().sort_values(["sample", "name"], kind="stable")
    classes = classes.reset_index(drop=True).assign(group=lambda frame: np.arange(len(frame)))
    n_classes = np.bincount(classes["sample"].to_numpy(np.int64), minlength=n_samples)
    truth_group = truth_keys.merge(classes, how="left")["group"].to_numpy(np.int64)
    pred_keys = pd.DataFrame({"sample": predicted.sample, "name": predicted.name})
    pred_group = pred_keys.merge(classes, how="left")["group"].fillna(-1).to_numpy()
    pred_group = pred_group.astype(np.int64)
    # Predictions of classes absent from the sample's truth are ignored.
    scored = np.flatnonzero(pred_group >= 0)
    n_groups = len(classes)
    ap = np.zeros((n_groups, len(thresholds)))
    if len(scored):
        ap[:] = _average_precisions(
            truth, predicted, truth_group, pred_group, scored, n_groups, thresholds
        )
    group_sample = classes["sample"].to_numpy(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_sample = np.zeros((n_samples, len(thresholds)))
        np.add.at(per_sample, group_sample, ap)
        per_sample = per_sample / n_classes[:, None]  # NaN for a sample without truth
    return float(np.mean(per_sample.reshape(-1)))


def _average_precisions(truth, predicted, truth_group, pred_group, scored, n_groups, thresholds):
    groups_with_preds = np.unique(pred_group[scored])
    involved_truth = np.flatnonzero(np.isin(truth_group, groups_with_preds))
    truth_corners, truth_valid = _footprints(truth)
    pred_corners, pred_valid = _footprints(predicted)
    bad = scored[~pred_valid[scored]]
    if len(bad):
        raise MalformedBoxes3D(
            int(predicted.sample[bad[0]]),
            "a predicted box is invalid (NaN value, size not positive, or not a rectangle)",
        )
    if not truth_valid[involved_truth].all():
        raise ValueError("an answer box is invalid")

    # Predictions of each (sample, class) group, by confidence (highest first, stable).
    order = scored[np.lexsort((scored, -predicted.score[scored], pred_group[scored]))]
    order = _python_sort_where_nan(order, predicted.score, pred_group)
    group = pred_group[order]
    n_truth = np.bincount(truth_group, minlength=n_groups)

    # IoU of every prediction with every true box of its group; keep the best (first on ties).
    pairs = pd.DataFrame({"group": group, "rank": np.arange(len(order))}).merge(
        pd.DataFrame({"group": truth_group[involved_truth], "t": involved_truth}), on="group"
    )
    rank = pairs["rank"].to_numpy(np.int64)
    t = pairs["t"].to_numpy(np.int64)
    iou = _pair_ious(predicted, truth, pred_corners, truth_corners, order[rank], t)
    best = np.lexsort((t, -iou, rank))
    first = np.concatenate(([True], rank[best][1:] != rank[best][:-1]))
    best_iou = np.full(len(order), -np.inf)
    best_truth = np.full(len(order), -1, dtype=np.int64)
    best_iou[rank[best][first]] = iou[best][first]
    best_truth[rank[best][first]] = t[best][first]

    group_start = np.searchsorted(group, group, side="left")
    ap = np.zeros((n_groups, len(thresholds)))
    for k, threshold in enumerate(thresholds):
        hit = best_iou > threshold
        # A true box counts once: the first prediction (in rank order) whose best box it is.
        claimed = np.zeros(len(order), dtype=bool)
        hits = np.flatnonzero(hit)
        _, first_claim = np.unique(best_truth[hits], return_index=True)
        claimed[hits[first_claim]] = True
        tp = np.cumsum(claimed)
        tp = tp - (tp[group_start] - claimed[group_start])
        position = np.arange(len(order)) - group_start + 1
        fp = position - tp
        recall = tp / n_truth[group].astype(np.float64)
        precision = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
        envelope = pd.Series(precision[::-1]).groupby(group[::-1]).cummax().to_numpy()[::-1]
        previous_recall = np.where(position == 1, 0.0, np.concatenate(([0.0], recall[:-1])))
        terms = np.where(claimed, (recall - previous_recall) * envelope, 0.0)
        ap[:, k] = np.bincount(group, weights=terms, minlength=n_groups)
    return ap


def _python_sort_where_nan(order: np.ndarray, score: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Redo the ordering of groups holding a NaN confidence with Python's sort, as MLE-bench."""
    nan_groups = np.unique(group[order][np.isnan(score[order])])
    if len(nan_groups) == 0:
        return order
    order = order.copy()
    sorted_groups = group[order]
    for g in nan_groups.tolist():
        where = np.flatnonzero(sorted_groups == g)
        members = np.sort(order[where])  # file order, as the devkit receives them
        keys = score[members].tolist()
        ranked = sorted(range(len(members)), key=keys.__getitem__, reverse=True)
        order[where] = members[ranked]
    return order
