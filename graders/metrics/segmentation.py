"""Overlap scores of binary masks: Dice, IoU-threshold precision, pixel F-beta.

Every function takes two ``MaskRuns`` batches (predicted, true) parsed with the same mask sizes
and works from three counts per mask: predicted pixels, true pixels, and their overlap. Results
match MLE-bench's dense computations bit for bit: the counts are exact integers and the final
divisions and means are done in the same order and precision.
"""

from __future__ import annotations

import numpy as np

from graders.metrics.rle_masks import MaskRuns, intersection_areas

# MLE-bench's thresholds are ``np.arange(0.5, 1.0, 0.05)``: 0.6000000000000001 and friends,
# which matters when an IoU lands exactly on a threshold.
IOU_THRESHOLDS = np.arange(0.5, 1.0, 0.05)


def _counts(predicted: MaskRuns, truth: MaskRuns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return predicted.areas(), truth.areas(), intersection_areas(predicted, truth)


def dice_global(predicted: MaskRuns, truth: MaskRuns) -> float:
    """One Dice ``2|P and T| / (|P| + |T|)`` over all pixels of all masks together.

    NaN when no mask has a set pixel on either side.
    """
    p, t, both = (int(x.sum()) for x in _counts(predicted, truth))
    if p + t == 0:
        return float("nan")
    return float(np.int64(2 * both) / np.int64(p + t))


def dice_per_mask(predicted: MaskRuns, truth: MaskRuns, both_empty: float) -> np.ndarray:
    """Dice of each mask; ``both_empty`` where neither mask has a set pixel."""
    p, t, both = _counts(predicted, truth)
    union = p + t
    with np.errstate(invalid="ignore", divide="ignore"):
        dice = (2 * both) / union
    return np.where(union == 0, both_empty, dice)


def dice_mean(predicted: MaskRuns, truth: MaskRuns) -> float:
    """Mean over masks of the Dice coefficient; a mask pair with no pixels at all scores 1."""
    return float(np.mean(dice_per_mask(predicted, truth, both_empty=1.0)))


def iou_threshold_precision_per_mask(predicted: MaskRuns, truth: MaskRuns) -> np.ndarray:
    """TGS salt's score of each mask: the share of thresholds 0.50..0.95 that the IoU exceeds.

    Each mask is one object. Both empty scores 1; an empty truth with a non-empty prediction
    scores 0. MLE-bench's IoU comes from a two-bin histogram of the pixel values, and a constant
    image puts all its pixels in the "object" bin: an *empty prediction* against a non-empty
    truth is scored as if every pixel were predicted, so its IoU is ``|T| / pixels`` (and an
    empty prediction of an all-salt image scores 1). That is reproduced here.
    """
    p, t, both = _counts(predicted, truth)
    pixels = predicted.sizes
    intersection = np.where(p == 0, t, both)
    union = np.where(p == 0, pixels, p + t - both)
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = intersection.astype(np.float64) / union
    passed = (iou[:, None] > IOU_THRESHOLDS[None, :]).sum(axis=1)
    score = passed / len(IOU_THRESHOLDS)
    score = np.where(t == 0, np.where(p == 0, 1.0, 0.0), score)
    return score


def iou_threshold_precision_mean(predicted: MaskRuns, truth: MaskRuns) -> float:
    """Mean over masks of ``iou_threshold_precision_per_mask``."""
    return float(np.mean(iou_threshold_precision_per_mask(predicted, truth)))


def fbeta_per_mask(predicted: MaskRuns, truth: MaskRuns, beta: float = 0.5) -> np.ndarray:
    """Pixel-level F-beta of each mask, as scikit-learn's ``fbeta_score`` computes it.

    ``(1 + b^2) TP / (b^2 (TP + FN) + TP + FP)``; 0 when neither mask has a set pixel
    (scikit-learn's ``zero_division="warn"`` value).
    """
    p, t, both = _counts(predicted, truth)
    beta2 = beta**2
    denominator = beta2 * t + p
    with np.errstate(invalid="ignore", divide="ignore"):
        score = ((1 + beta2) * both) / np.where(denominator == 0, 1, denominator)
    return np.where(denominator == 0, 0.0, score)
