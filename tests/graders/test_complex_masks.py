"""RLE parsing and mask metrics, checked against dense brute-force references."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import fbeta_score

from graders.metrics.rle_masks import (
    RleError,
    decode_masks,
    intersection_areas,
    parse_rle_masks,
)
from graders.metrics.segmentation import (
    dice_global,
    dice_mean,
    dice_per_mask,
    fbeta_per_mask,
    iou_threshold_precision_mean,
    iou_threshold_precision_per_mask,
)

# --- references: the behaviour MLE-bench documents, written the slow obvious way -------------


def dense_decode(rle: str, height: int, width: int) -> np.ndarray:
    """Decode like MLE-bench: column-major, 1-indexed, numpy slicing and broadcasting rules."""
    if not isinstance(rle, str):
        raise TypeError("not a string")
    flat = np.zeros(height * width, dtype=bool)
    if rle.strip() == "":
        return flat.reshape(width, height).T
    numbers = [int(token) for token in rle.split()]
    starts, lengths = numbers[0::2], numbers[1::2]
    if starts != sorted(starts) or min(starts) <= 0 or any(x <= 0 for x in lengths):
        raise ValueError("bad runs")
    ends = np.array(starts) - 1 + np.array(lengths, dtype=np.int64)  # broadcasting as numpy does
    for lo, hi in zip(np.array(starts) - 1, ends, strict=False):
        if flat[lo:hi].any():
            raise ValueError("overlap")
        flat[lo:hi] = True
    return flat.reshape(width, height).T


def encode(mask: np.ndarray) -> str:
    """Column-major 1-indexed RLE of a (height, width) mask."""
    flat = np.concatenate([[0], mask.T.reshape(-1).astype(np.int8), [0]])
    edges = np.flatnonzero(np.diff(flat))
    starts, ends = edges[0::2], edges[1::2]
    return " ".join(f"{s + 1} {e - s}" for s, e in zip(starts, ends, strict=True))


def random_masks(rng, n, height, width, density=0.3):
    masks = []
    for _ in range(n):
        kind = rng.integers(4)
        if kind == 0:
            masks.append(np.zeros((height, width), bool))
        elif kind == 1:
            masks.append(np.ones((height, width), bool))
        else:
            masks.append(rng.random((height, width)) < density * kind / 2)
    return masks


def histogram_iou_score(truth: np.ndarray, pred: np.ndarray) -> float:
    """TGS salt's per-image score via two-bin histograms (the source of the empty-mask quirk)."""
    if truth.sum() == 0:
        return 1.0 if pred.sum() == 0 else 0.0
    t, p = truth.astype(np.uint8).ravel(), pred.astype(np.uint8).ravel()
    joint = np.histogram2d(t, p, bins=(2, 2))[0]
    area_t = np.histogram(t, bins=2)[0][:, None]
    area_p = np.histogram(p, bins=2)[0][None, :]
    iou = joint[1:, 1:] / (area_t + area_p - joint)[1:, 1:]
    hits = [float(iou[0, 0] > th) for th in np.arange(0.5, 1.0, 0.05)]
    return float(np.mean(hits))


# --- parsing ------------------------------------------------------------------------------


def test_parse_counts_match_dense_decoding():
    rng = np.random.default_rng(0)
    height, width = 7, 5
    truth = random_masks(rng, 40, height, width)
    pred = random_masks(rng, 40, height, width, density=0.5)
    t_runs = parse_rle_masks([encode(m) for m in truth], [height * width] * 40)
    p_runs = parse_rle_masks([encode(m) for m in pred], [height * width] * 40)
    assert t_runs.areas().tolist() == [int(m.sum()) for m in truth]
    expected = [int((a & b).sum()) for a, b in zip(truth, pred, strict=True)]
    assert intersection_areas(p_runs, t_runs).tolist() == expected
    dense = decode_masks(t_runs, np.arange(40))
    for row, mask in zip(dense, truth, strict=True):
        assert np.array_equal(row.reshape(width, height).T, mask)


@pytest.mark.parametrize(
    "rle",
    [
        "",
        "   ",
        "5",  # one number: numpy broadcasts an empty list of lengths -> empty mask
        "1 2 5",  # three numbers: two runs of length 2
        "30 10",  # runs past the end are cut
        "34 2 40 3",  # a run starting beyond the image is ignored
        "1 1 2 1 3 1",  # touching runs are fine
        "+3 2",
        "0004 1",
    ],
)
def test_lenient_strings_decode_like_mle_bench(rle):
    height, width = 5, 7
    runs = parse_rle_masks([rle], [height * width])
    mine = decode_masks(runs, [0])[0].reshape(width, height).T
    assert np.array_equal(mine, dense_decode(rle, height, width))


@pytest.mark.parametrize(
    ("rle", "reason"),
    [
        ("1 3 2 2", "overlapping"),
        ("3 1 1 1", "sorted"),
        ("0 1", "positive"),
        ("1 0", "positive"),
        ("-4", "positive"),
        ("1 2 3 4 5", "even number"),
        ("1.5 2", "not an integer"),
        ("a b", "not an integer"),
    ],
)
def test_rejected_strings_name_the_reason(rle, reason):
    with pytest.raises(RleError, match=reason) as caught:
        parse_rle_masks(["", rle], [35, 35])
    assert caught.value.row == 1
    with pytest.raises((ValueError, TypeError)):
        dense_decode(rle, 5, 7)


def test_non_text_is_rejected():
    with pytest.raises(RleError, match="expected an RLE string"):
        parse_rle_masks([float("nan")], [4])


def test_masks_of_different_sizes():
    runs = parse_rle_masks(["1 4", "3 10", "2 1"], [4, 16, 9])
    assert runs.areas().tolist() == [4, 10, 1]
    other = parse_rle_masks(["2 2", "1 5", ""], [4, 16, 9])
    assert intersection_areas(runs, other).tolist() == [2, 3, 0]


# --- metrics ---------------------------------------------------------------------------------


def _batch(rng, n=60, height=6, width=9):
    truth = random_masks(rng, n, height, width)
    pred = random_masks(rng, n, height, width, density=0.6)
    size = [height * width] * n
    return (
        truth,
        pred,
        parse_rle_masks([encode(m) for m in truth], size),
        parse_rle_masks([encode(m) for m in pred], size),
    )


def test_dice_against_dense_reference():
    truth, pred, t_runs, p_runs = _batch(np.random.default_rng(1))
    per_mask = []
    for t, p in zip(truth, pred, strict=True):
        total = t.sum() + p.sum()
        per_mask.append(1.0 if total == 0 else 2 * (t & p).sum() / total)
    assert dice_mean(p_runs, t_runs) == float(np.mean(per_mask))
    both = 2 * sum(int((t & p).sum()) for t, p in zip(truth, pred, strict=True))
    total = sum(int(t.sum() + p.sum()) for t, p in zip(truth, pred, strict=True))
    assert dice_global(p_runs, t_runs) == both / total
    empty = parse_rle_masks(["", ""], [4, 4])
    assert np.isnan(dice_global(empty, empty))
    assert np.isnan(dice_per_mask(empty, empty, both_empty=np.nan)).all()


def test_iou_threshold_precision_matches_histogram_reference():
    truth, pred, t_runs, p_runs = _batch(np.random.default_rng(2))
    expected = [histogram_iou_score(t, p) for t, p in zip(truth, pred, strict=True)]
    assert iou_threshold_precision_per_mask(p_runs, t_runs).tolist() == expected
    assert iou_threshold_precision_mean(p_runs, t_runs) == float(np.mean(expected))


def test_empty_prediction_quirk_is_reproduced():
    # A 2x2 image with 3 true pixels: the empty prediction counts as "all 4 pixels", IoU 0.75.
    truth = parse_rle_masks(["1 3", "1 4"], [4, 4])
    empty = parse_rle_masks(["", ""], [4, 4])
    scores = iou_threshold_precision_per_mask(empty, truth)
    assert scores.tolist() == [0.5, 1.0]  # 0.75 beats 0.50..0.70: 5 of 10 thresholds


def test_fbeta_matches_scikit_learn():
    truth, pred, t_runs, p_runs = _batch(np.random.default_rng(3), n=25)
    mine = fbeta_per_mask(p_runs, t_runs, beta=0.5)
    for value, t, p in zip(mine, truth, pred, strict=True):
        assert value == fbeta_score(t.ravel(), p.ravel(), beta=0.5, zero_division=0.0)


# --- 3D Hausdorff --------------------------------------------------------------------------------


def reference_hausdorff(predicted: np.ndarray, truth: np.ndarray) -> float:
    from scipy.spatial.distance import directed_hausdorff

    if predicted.sum() == 0 and truth.sum() == 0:
        return float("nan")
    if np.array_equal(predicted, truth):
        return 0.0
    if predicted.sum() == 0 or truth.sum() == 0 or predicted.sum() > 10 * truth.sum():
        return 1.0
    t, p = np.argwhere(truth) / truth.shape, np.argwhere(predicted) / truth.shape
    return max(directed_hausdorff(t, p)[0], directed_hausdorff(p, t)[0]) / np.sqrt(3)


def test_hausdorff_matches_scipy_exactly():
    from graders.metrics.volumes import normalized_hausdorff

    rng = np.random.default_rng(5)
    for trial in range(40):
        shape = tuple(int(x) for x in rng.integers(2, 12, 3))
        truth = np.zeros(shape, bool)
        for _ in range(rng.integers(1, 4)):
            lo = [rng.integers(0, s) for s in shape]
            truth[lo[0] : lo[0] + 3, lo[1] : lo[1] + 4, lo[2] : lo[2] + 2] = True
        other = shape if trial % 3 else (shape[0] + 2, shape[1], shape[2])
        predicted = np.zeros(other, bool)
        predicted[: shape[0], :, :] = np.roll(truth, int(rng.integers(-2, 3)), axis=1)
        predicted |= rng.random(other) < 0.02 * (trial % 4)
        assert normalized_hausdorff(predicted, truth) == reference_hausdorff(predicted, truth)
    empty = np.zeros((2, 3, 3), bool)
    assert np.isnan(normalized_hausdorff(empty, empty))
    full = np.ones((2, 3, 3), bool)
    assert normalized_hausdorff(full, full) == 0.0 and normalized_hausdorff(empty, full) == 1.0
