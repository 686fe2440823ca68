"""Mask competitions end to end: synthetic answers, perfect, sample and corrupted submissions."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy.spatial.distance import directed_hausdorff

import graders
from tests.support.synthetic import CompetitionLayout, shuffled, string_ids

CONTRAILS = "google-research-identify-contrails-reduce-global-warming"
HUBMAP = "hubmap-kidney-segmentation"
TGS = "tgs-salt-identification-challenge"
VESUVIUS = "vesuvius-challenge-ink-detection"
GI_TRACT = "uw-madison-gi-tract-image-segmentation"


def encode(mask: np.ndarray) -> str:
    """Column-major 1-indexed RLE of a (height, width) mask."""
    flat = np.concatenate([[0], mask.T.reshape(-1).astype(np.int8), [0]])
    edges = np.flatnonzero(np.diff(flat))
    return " ".join(f"{s + 1} {e - s}" for s, e in zip(edges[0::2], edges[1::2], strict=True))


def decode(rle: str, height: int, width: int) -> np.ndarray:
    flat = np.zeros(height * width, dtype=bool)
    numbers = [int(t) for t in rle.split()]
    for start, length in zip(numbers[0::2], numbers[1::2], strict=True):
        flat[start - 1 : start - 1 + length] = True
    return flat.reshape(width, height).T


def blobs(rng, n, height, width):
    masks = []
    for i in range(n):
        mask = np.zeros((height, width), bool)
        if i % 3:
            r, c = rng.integers(0, height - 3), rng.integers(0, width - 3)
            mask[r : r + rng.integers(2, 6), c : c + rng.integers(2, 6)] = True
        masks.append(mask)
    return masks


def grade(layout: CompetitionLayout, path):
    return graders.grade_submission(path, layout.competition_id, layout.data_dir)


def layout_for(tmp_path, competition_id) -> CompetitionLayout:
    return CompetitionLayout(tmp_path, competition_id, graders.grader_for(competition_id).answers)


# --- contrails ------------------------------------------------------------------------------------


@pytest.fixture
def contrails(tmp_path):
    layout = layout_for(tmp_path, CONTRAILS)
    rng = np.random.default_rng(0)
    masks = blobs(rng, 30, 16, 12)
    ids = [int(x) for x in rng.choice(10**18, 30, replace=False) + 10**17]
    answers = {
        "record_id": ids,
        "encoded_pixels": [encode(m) or "-" for m in masks],
        "height": [16] * 30,
        "width": [12] * 30,
    }
    layout.write_answers(answers)
    return layout, answers, masks


def test_contrails_perfect_sample_and_corrupted(contrails):
    layout, answers, masks = contrails
    perfect = layout.write_submission("perfect.csv", shuffled(answers))
    assert grade(layout, perfect).score == 1.0

    # MLE-bench's sample: the answers with random "1 3 10 5" or "-" masks (random.seed(0)).
    random.seed(0)
    sample_rles = [random.choice(["1 3 10 5", "-"]) for _ in range(30)]
    sample = layout.write_sample_submission({**answers, "encoded_pixels": sample_rles})
    result = grade(layout, sample)
    predicted = [decode(r if r != "-" else "", 16, 12) for r in sample_rles]
    both = sum(int((p & t).sum()) for p, t in zip(predicted, masks, strict=True))
    total = sum(int(p.sum() + t.sum()) for p, t in zip(predicted, masks, strict=True))
    assert result.valid_submission and result.score == round(2 * both / total, 5)

    overlapping = list(answers["encoded_pixels"])
    overlapping[3] = "1 5 3 2"
    bad = layout.write_submission("bad.csv", {**answers, "encoded_pixels": overlapping})
    result = grade(layout, bad)
    assert not result.valid_submission and result.score is None
    assert (
        "not a valid RLE mask: overlapping" in result.error
        and str(answers["record_id"][3]) in result.error
    )

    empty_cell = list(answers["encoded_pixels"])
    empty_cell[0] = None
    result = grade(
        layout, layout.write_submission("empty.csv", {**answers, "encoded_pixels": empty_cell})
    )
    assert not result.valid_submission and "expected an RLE string" in result.error

    missing = {k: v[1:] for k, v in answers.items()}
    result = grade(layout, layout.write_submission("missing.csv", missing))
    assert not result.valid_submission and "rows" in result.error


def test_contrails_all_empty_is_nan(contrails):
    layout, answers, _ = contrails
    empty = {**answers, "encoded_pixels": ["-"] * 30}
    layout.write_answers(empty)
    result = grade(layout, layout.write_submission("empty.csv", empty))
    assert result.valid_submission and np.isnan(result.score)


# --- hubmap --------------------------------------------------------------------------------------


def test_hubmap_perfect_sample_and_corrupted(tmp_path):
    layout = layout_for(tmp_path, HUBMAP)
    rng = np.random.default_rng(1)
    shapes = [(40, 30), (25, 50), (33, 33)]
    masks = [blobs(rng, 2, h, w)[1] for h, w in shapes]
    masks[2][:] = False
    masks[2][3:5, 7:9] = True  # every test image has glomeruli (an empty answer cannot decode)
    ids = ["aaa1", "bbb2", "ccc3"]
    layout.write_answers(
        {
            "id": ids,
            "encoding": [encode(m) for m in masks],
            "width_pixels": [w for _, w in shapes],
            "height_pixels": [h for h, _ in shapes],
        }
    )
    perfect = layout.write_submission(
        "perfect.csv", {"id": ids[::-1], "predicted": [encode(m) for m in masks][::-1]}
    )
    assert grade(layout, perfect).score == 1.0
    sample = layout.write_sample_submission({"id": ids, "predicted": [""] * 3})
    result = grade(layout, sample)
    assert result.valid_submission and result.score == 0.0

    unsorted = layout.write_submission(
        "unsorted.csv", {"id": ids, "predicted": ["10 2 1 3", "", ""]}
    )
    result = grade(layout, unsorted)
    assert (
        not result.valid_submission and "sorted by start" in result.error and "aaa1" in result.error
    )
    validation = graders.validate_submission(unsorted, HUBMAP, layout.data_dir)
    assert not validation.valid and "sorted by start" in validation.message


# --- tgs salt ------------------------------------------------------------------------------------------


def histogram_score(truth: np.ndarray, pred: np.ndarray) -> float:
    if truth.sum() == 0:
        return float(pred.sum() == 0)
    t, p = truth.ravel().astype(np.uint8), pred.ravel().astype(np.uint8)
    joint = np.histogram2d(t, p, bins=(2, 2))[0]
    union = np.histogram(t, bins=2)[0][:, None] + np.histogram(p, bins=2)[0][None, :] - joint
    iou = joint[1, 1] / union[1, 1]
    return float(np.mean([iou > th for th in np.arange(0.5, 1.0, 0.05)]))


@pytest.fixture
def salt(tmp_path):
    layout = layout_for(tmp_path, TGS)
    rng = np.random.default_rng(2)
    masks = blobs(rng, 24, 101, 101)
    masks[5][:, :80] = True  # mostly salt: an empty prediction earns credit here
    ids = string_ids(24, prefix="img")
    answers = {"id": ids, "rle_mask": [encode(m) for m in masks]}
    layout.write_answers(answers)
    return layout, answers, masks


def test_salt_perfect_sample_and_corrupted(salt):
    layout, answers, masks = salt
    assert grade(layout, layout.write_submission("perfect.csv", shuffled(answers))).score == 1.0

    sample = layout.write_sample_submission({"id": sorted(answers["id"]), "rle_mask": ["1 1"] * 24})
    result = grade(layout, sample)
    by_id = dict(zip(answers["id"], masks, strict=True))
    one_pixel = decode("1 1", 101, 101)
    expected = np.mean([histogram_score(by_id[i], one_pixel) for i in sorted(answers["id"])])
    assert result.valid_submission and result.score == round(float(expected), 5)

    extra = layout.write_submission("extra.csv", {**answers, "depth": [1] * 24})
    result = grade(layout, extra)
    assert not result.valid_submission and "1 unexpected column" in result.error


def test_salt_empty_prediction_quirk(salt):
    layout, answers, masks = salt
    result = grade(
        layout, layout.write_submission("empty.csv", {"id": answers["id"], "rle_mask": [None] * 24})
    )
    expected = np.mean([histogram_score(m, np.zeros_like(m)) for m in masks])
    assert result.valid_submission and result.score == round(float(expected), 5)
    # Image 5 is 80% salt: the empty prediction passes the thresholds below 0.8.
    assert histogram_score(masks[5], np.zeros_like(masks[5])) == 0.6


# --- vesuvius ----------------------------------------------------------------------------------------


def test_vesuvius_perfect_sample_and_corrupted(tmp_path):
    layout = layout_for(tmp_path, VESUVIUS)
    height, width = 30, 40
    ink = np.zeros((height, width), bool)
    ink[5:12, 3:30] = True
    row_major = encode(ink.T)  # the competition's RLE runs along rows
    layout.write_answers(
        {"Id": ["a"], "Predicted": [row_major], "width": [width], "height": [height]}
    )
    assert (
        grade(
            layout, layout.write_submission("perfect.csv", {"Id": ["a"], "Predicted": [row_major]})
        ).score
        == 1.0
    )

    sample = layout.write_sample_submission({"Id": ["a"], "Predicted": ["1 1 5 1"]})
    result = grade(layout, sample)
    predicted = decode("1 1 5 1", width, height).T
    tp = int((predicted & ink).sum())
    expected = 1.25 * tp / (0.25 * ink.sum() + predicted.sum())
    assert result.valid_submission and result.score == round(expected, 5)

    result = grade(
        layout,
        layout.write_submission("three.csv", {"Id": ["a"], "Predicted": [row_major], "x": [1]}),
    )
    assert not result.valid_submission and "exactly 2 columns" in result.error
    result = grade(
        layout, layout.write_submission("other.csv", {"Id": ["b"], "Predicted": [row_major]})
    )
    assert not result.valid_submission and "order of Id" in result.error


# --- uw-madison -----------------------------------------------------------------------------------


def reference_gi_tract(sub_ids, sub_rles, ans_ids, ans_rles, heights, widths) -> float:
    """MLE-bench's algorithm with dense masks and scipy's directed_hausdorff."""
    n = min(len(sub_rles), len(ans_rles))
    sub_masks = [decode(sub_rles[i], heights[i], widths[i]) for i in range(n)]
    ans_masks = [decode(r, h, w) for r, h, w in zip(ans_rles, heights, widths, strict=True)]
    dice = []
    for p, t in zip(sub_masks, ans_masks, strict=False):
        total = p.sum() + t.sum()
        dice.append(np.nan if total == 0 else 2 * (p & t).sum() / total)

    def volumes(masks, ids):
        slices: dict[str, list] = {}
        for mask, slice_id in sorted(zip(masks, ids, strict=False), key=lambda x: x[1]):
            slices.setdefault(slice_id, []).append(mask)
        days: dict[str, list] = {}
        for slice_id, group in slices.items():
            days.setdefault(slice_id.split("_slice_")[0], []).append(np.logical_or.reduce(group))
        return [np.stack(v) for v in days.values()]

    distances = []
    for p, t in zip(volumes(sub_masks, sub_ids), volumes(ans_masks, ans_ids), strict=False):
        if p.sum() == 0 and t.sum() == 0:
            distances.append(np.nan)
        elif np.array_equal(p, t):
            distances.append(0.0)
        elif p.sum() == 0 or t.sum() == 0 or p.sum() > 10 * t.sum():
            distances.append(1.0)
        else:
            tc, pc_ = np.argwhere(t) / t.shape, np.argwhere(p) / t.shape
            d = max(directed_hausdorff(tc, pc_)[0], directed_hausdorff(pc_, tc)[0])
            distances.append(d / np.sqrt(3))
    return 0.4 * np.nanmean(dice) + 0.6 * (1 - np.nanmean(distances))


@pytest.fixture
def gi_tract(tmp_path):
    layout = layout_for(tmp_path, GI_TRACT)
    rng = np.random.default_rng(3)
    rows = {"id": [], "class": [], "predicted": [], "image_width": [], "image_height": []}
    for case, (h, w) in [
        ("case7_day0", (12, 10)),
        ("case12_day3", (9, 14)),
        ("case7_day10", (12, 10)),
    ]:
        for s in range(1, 5):
            for organ in ("large_bowel", "small_bowel", "stomach"):
                mask = np.zeros((h, w), bool)
                if rng.random() < 0.5 and case != "case7_day10":
                    r, c = rng.integers(0, h - 4), rng.integers(0, w - 4)
                    mask[r : r + 3, c : c + rng.integers(1, 4)] = True
                rows["id"].append(f"{case}_slice_{s:04d}")
                rows["class"].append(organ)
                rows["predicted"].append(encode(mask) or None)
                rows["image_width"].append(float(w))
                rows["image_height"].append(float(h))
    layout.write_answers(rows)
    return layout, rows


def test_gi_tract_perfect_sample_and_corrupted(gi_tract):
    layout, rows = gi_tract
    submission = {k: rows[k] for k in ("id", "class", "predicted")}
    assert grade(layout, layout.write_submission("perfect.csv", submission)).score == 1.0

    sample = layout.write_sample_submission(
        {**submission, "predicted": ["1 1 5 2"] * len(rows["id"])}
    )
    result = grade(layout, sample)
    heights = [int(h) for h in rows["image_height"]]
    widths = [int(w) for w in rows["image_width"]]
    answers_rles = [r or "" for r in rows["predicted"]]
    expected = reference_gi_tract(
        rows["id"], ["1 1 5 2"] * len(heights), rows["id"], answers_rles, heights, widths
    )
    assert result.valid_submission and result.score == round(float(expected), 5)

    result = grade(
        layout,
        layout.write_submission("cols.csv", {"id": rows["id"], "predicted": rows["predicted"]}),
    )
    assert not result.valid_submission and "class" in result.error


def test_gi_tract_pairs_rows_by_position(gi_tract):
    layout, rows = gi_tract
    rng = np.random.default_rng(4)
    heights = [int(h) for h in rows["image_height"]]
    widths = [int(w) for w in rows["image_width"]]
    answers_rles = [r or "" for r in rows["predicted"]]
    # Shorter submission, rows of the first case-day reversed (same sizes), noisy masks.
    n = len(rows["id"]) - 7
    order = list(range(12))[::-1] + list(range(12, n))
    sub_ids = [rows["id"][i] for i in order]
    sub_rles = []
    for i in order:
        mask = decode(answers_rles[i], heights[i], widths[i])
        mask[rng.integers(0, 9), rng.integers(0, 10)] ^= True
        sub_rles.append(encode(mask))
    path = layout.write_submission(
        "partial.csv", {"id": sub_ids, "class": ["x"] * n, "predicted": sub_rles}
    )
    result = grade(layout, path)
    # MLE-bench decodes row i with the size of answer row i.
    positional = [encode(decode(r, heights[j], widths[j])) for j, r in enumerate(sub_rles)]
    expected = reference_gi_tract(sub_ids, positional, rows["id"], answers_rles, heights, widths)
    assert result.valid_submission and result.score == round(float(expected), 5)
