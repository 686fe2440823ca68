"""Detection metrics against slow references written from MLE-bench's described behaviour."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely

from graders.metrics.detection import (
    CocoBoxes,
    MalformedBoxes,
    coco_map_at_iou,
    parse_box_strings,
    voc_map_iou50,
)
from graders.metrics.detection_3d import MalformedBoxes3D, map_3d_iou_range, parse_boxes_3d
from graders.metrics.kuzushiji import MalformedLabels, kuzushiji_f1
from tests.support.detection import reference_voc

# --- kuzushiji -----------------------------------------------------------------------------------


def reference_kuzushiji(truth_pages, pred_pages) -> float:
    tp = fp = fn = 0
    for truth, pred in zip(truth_pages, pred_pages, strict=True):
        boxes = (
            []
            if truth is None
            else [truth.split(" ")[i : i + 5] for i in range(0, len(truth.split(" ")), 5)]
        )
        points = (
            []
            if pred is None
            else [pred.split(" ")[i : i + 3] for i in range(0, len(pred.split(" ")), 3)]
        )
        used = [False] * len(points)
        for label, x, y, w, h in boxes:
            x, y, w, h = map(float, (x, y, w, h))
            for k, (plabel, px, py) in enumerate(points):
                px, py = float(px), float(py)
                if not used[k] and plabel == label and x < px < x + w and y < py < y + h:
                    used[k] = True
                    tp += 1
                    break
            else:
                fn += 1
        fp += used.count(False)
    if tp + fp == 0 or tp + fn == 0:
        return 0.0
    p, r = tp / (tp + fp), tp / (tp + fn)
    return 2 * p * r / (p + r) if p > 0 and r > 0 else 0.0


def _random_pages(rng, n_pages=40, labels=("U+3042", "U+304B", "U+306E")):
    truth, pred = [], []
    for _ in range(n_pages):
        n = int(rng.integers(0, 8))
        if n == 0 and rng.random() < 0.5:
            truth.append(None)
        else:
            parts = []
            for _ in range(n):
                parts += [
                    str(rng.choice(labels)),
                    *(str(int(v)) for v in rng.integers(0, 20, 2)),
                    *(str(int(v)) for v in rng.integers(1, 12, 2)),
                ]
            truth.append(" ".join(parts) if parts else None)
        m = int(rng.integers(0, 9))
        if m == 0:
            pred.append(None)
        else:
            parts = []
            for _ in range(m):
                parts += [str(rng.choice(labels)), *(f"{v:.1f}" for v in rng.uniform(0, 25, 2))]
            pred.append(" ".join(parts))
    return truth, pred


def test_kuzushiji_against_reference():
    rng = np.random.default_rng(0)
    for _ in range(20):
        truth, pred = _random_pages(rng)
        assert kuzushiji_f1(truth, pred) == reference_kuzushiji(truth, pred)


def test_kuzushiji_hand_values():
    truth = ["U+003F 1 1 10 10 U+003F 1 1 10 10", None]
    assert kuzushiji_f1(truth, ["U+003F 3 3 U+003F 4 4", None]) == 1.0
    # One point inside both (identical) boxes is used once; a point on the edge does not count.
    assert kuzushiji_f1(truth, ["U+003F 3 3 U+003F 11 5", "U+0041 1 1"]) == pytest.approx(
        2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2)
    )
    assert kuzushiji_f1([None], [None]) == 0.0
    with pytest.raises(MalformedLabels, match="groups of 3"):
        kuzushiji_f1(truth, ["U+003F 3", None])
    with pytest.raises(MalformedLabels, match="not a number"):
        kuzushiji_f1(truth, ["U+003F x 3", None])


# --- siim-covid19 ----------------------------------------------------------------------------------


def _voc(truth_rows, pred_rows):
    return voc_map_iou50(
        parse_box_strings(truth_rows), parse_box_strings(pred_rows), len(truth_rows)
    )


def test_voc_map_against_reference():
    rng = np.random.default_rng(1)
    for _ in range(15):
        truth_rows, pred_rows = [], []
        for row in range(30):
            if row % 2:
                truth_rows.append(f"{rng.choice(['negative', 'typical'])} 1 0 0 1 1")
                pred_rows.append(
                    " ".join(f"{c} {rng.random():.2f} 0 0 1 1" for c in ["negative", "typical"])
                )
                continue
            boxes = []
            for _ in range(int(rng.integers(1, 4))):
                x, y = rng.integers(0, 10, 2)
                boxes.append(f"opacity 1 {x} {y} {x + 4} {y + 4}")
            truth_rows.append(" ".join(boxes) if rng.random() < 0.7 else "none 1 0 0 1 1")
            preds = []
            for _ in range(int(rng.integers(0, 5))):
                x, y = rng.integers(0, 10, 2)
                conf = rng.choice([0.5, 0.7, rng.random()])
                preds.append(f"opacity {conf:.3f} {x} {y} {x + 4} {y + 4}")
            preds.append(f"none {rng.random():.3f} 0 0 1 1")
            pred_rows.append(" ".join(preds))
        assert _voc(truth_rows, pred_rows) == reference_voc(truth_rows, pred_rows)


def test_voc_map_perfect_and_failures():
    truth = ["opacity 1 0 0 10 10 opacity 1 20 20 30 30", "none 1 0 0 1 1", "negative 1 0 0 1 1"]
    assert _voc(truth, truth) == 1.0
    with pytest.raises(ValueError, match="all positive|every pair"):
        _voc(["none 1 0 0 1 1"], ["none 1 0 0 1 1"])
    with pytest.raises(MalformedBoxes, match="groups of 6"):
        parse_box_strings(["none 1 0 0 1"])
    with pytest.raises(MalformedBoxes, match="not a number"):
        parse_box_strings(["none one 0 0 1 1"])


# --- vinbigdata (pycocotools) ---------------------------------------------------------------------


def _coco(truth, preds, categories, n_images):
    def boxes(rows, scores):
        arr = np.array(rows, dtype=np.float64).reshape(-1, 7 if scores else 6)
        bbox = arr[:, -4:]
        return CocoBoxes(
            image=arr[:, 0].astype(np.int64),
            category=arr[:, 1].astype(np.int64),
            bbox=bbox,
            area=(bbox[:, 2] - bbox[:, 0]) * (bbox[:, 3] - bbox[:, 1]),
            score=arr[:, 2] if scores else None,
        )

    return coco_map_at_iou(boxes(truth, False), boxes(preds, True), categories, n_images, 0.4)


def test_coco_first_answer_box_cannot_be_matched():
    # Annotation ids start at 0 and pycocotools reads a match to id 0 as "no match": the first
    # answer box (here "No finding" on image 0) is never found, even by an exact prediction.
    truth = [(0, 14, 0, 0, 1, 1), (0, 0, 10, 10, 50, 50), (1, 0, 30, 30, 60, 60)]
    cats = [("Aortic", 0), ("No finding", 14)]
    perfect = [(i, c, 1.0, *box) for i, c, *box in truth]
    assert _coco(truth, perfect, cats, 2) == pytest.approx(0.5)
    # The first prediction (id 0) leaves the box it matches looking unmatched, so a duplicate
    # of it is a true positive too: recall reaches 1 with one of category 0's boxes found.
    twice = [(0, 0, 0.9, 10, 10, 50, 50), (0, 0, 0.8, 10, 10, 50, 50)]
    assert _coco(truth, twice, cats, 2) == pytest.approx((1.0 + 0.0) / 2)
    # Category 0 with one of its two boxes found at full confidence: AP = 51/101.
    half = [(0, 14, 1.0, 0, 0, 1, 1), (0, 0, 1.0, 10, 10, 50, 50)]
    assert _coco(truth, half, cats, 2) == pytest.approx((0 + 51 / 101) / 2)


def test_coco_corners_are_read_as_width_height():
    # As corners, (0,0)-(100,10) and (0,5)-(100,10) have IoU 0.5: a hit at 0.4. MLE-bench hands
    # the corners to COCO as x y w h, i.e. boxes [0,100]x[0,10] and [0,100]x[5,15]: IoU 1/3.
    first = (0, 14, 0, 0, 1, 1)  # takes annotation id 0 (never matched, see above)
    truth = [first, (1, 3, 0, 0, 100, 10)]
    cats = [("x", 3), ("No finding", 14)]
    assert _coco(truth, [(1, 3, 0.9, 0, 5, 100, 10)], cats, 2) == 0.0
    assert _coco(truth, [(1, 3, 0.9, 0, 0, 100, 10)], cats, 2) == pytest.approx(0.5)


# --- lyft 3D ---------------------------------------------------------------------------------------


def reference_3d(truth_rows, pred_rows) -> float:
    """The devkit's algorithm with explicit loops and per-pair shapely calls."""

    def boxes(text):
        t = text.split(" ") if text.strip() else []
        out = []
        for i in range(0, len(t), 9):
            conf, x, y, z, w, l_, h, yaw = map(float, t[i : i + 8])
            c = math.cos(yaw / 2) ** 2 - math.sin(yaw / 2) ** 2
            s = 2 * math.sin(yaw / 2) * math.cos(yaw / 2)
            pts = [
                (x + l_ / 2 * c + w / 2 * s, y + l_ / 2 * s - w / 2 * c),
                (x + l_ / 2 * c - w / 2 * s, y + l_ / 2 * s + w / 2 * c),
                (x - l_ / 2 * c - w / 2 * s, y - l_ / 2 * s + w / 2 * c),
                (x - l_ / 2 * c + w / 2 * s, y - l_ / 2 * s - w / 2 * c),
            ]
            out.append(
                dict(score=conf, name=t[i + 8], poly=shapely.Polygon(pts), z=z, h=h, vol=w * l_ * h)
            )
        return out

    def iou(p, g):
        height = max(
            0,
            min(g["z"] + g["h"] / 2, p["z"] + p["h"] / 2)
            - max(g["z"] - g["h"] / 2, p["z"] - p["h"] / 2),
        )
        inter = height * p["poly"].intersection(g["poly"]).area
        return float(np.clip(inter / (p["vol"] + g["vol"] - inter), 0, 1))

    maps = []
    for truth_text, pred_text in zip(truth_rows, pred_rows, strict=True):
        gts, preds = boxes(truth_text), boxes(pred_text)
        names = sorted({g["name"] for g in gts})
        for threshold in (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95):
            aps = []
            for name in names:
                g = [b for b in gts if b["name"] == name]
                p = sorted(
                    [b for b in preds if b["name"] == name], key=lambda b: b["score"], reverse=True
                )
                if not p:
                    aps.append(0.0)
                    continue
                taken = [False] * len(g)
                tp = []
                for b in p:
                    overlaps = [iou(b, x) for x in g]
                    j = int(np.argmax(overlaps))
                    ok = overlaps[j] > threshold and not taken[j]
                    taken[j] = taken[j] or ok
                    tp.append(1.0 if ok else 0.0)
                tps = np.cumsum(tp)
                fps = np.cumsum([1 - v for v in tp])
                recall = np.concatenate(([0.0], tps / len(g), [1.0]))
                precision = np.concatenate(
                    ([0.0], tps / np.maximum(tps + fps, np.finfo(float).eps), [0.0])
                )
                for i in range(len(precision) - 1, 0, -1):
                    precision[i - 1] = max(precision[i - 1], precision[i])
                changed = np.flatnonzero(recall[1:] != recall[:-1])
                aps.append(
                    float(np.sum((recall[changed + 1] - recall[changed]) * precision[changed + 1]))
                )
            maps.append(np.mean(aps))
    return float(np.mean(maps))


def _random_scene(rng, n_boxes):
    parts = []
    for _ in range(n_boxes):
        x, y = rng.uniform(0, 20, 2)
        z = rng.uniform(-1, 1)
        w, l_, h = rng.uniform(1, 3), rng.uniform(2, 5), rng.uniform(1, 2)
        parts.append(
            (x, y, z, w, l_, h, rng.uniform(-3, 3), str(rng.choice(["car", "bus", "pedestrian"])))
        )
    return parts


def _jitter(rng, box):
    x, y, z, w, l_, h, yaw, name = box
    return (
        x + rng.normal(0, 0.3),
        y + rng.normal(0, 0.3),
        z,
        w * rng.uniform(0.8, 1.2),
        l_,
        h,
        yaw + rng.normal(0, 0.2),
        name,
    )


def _text(boxes, scores):
    return " ".join(
        f"{s!r} " + " ".join(repr(float(v)) for v in b[:7]) + f" {b[7]}"
        for b, s in zip(boxes, scores, strict=True)
    )


def test_map_3d_against_reference():
    rng = np.random.default_rng(2)
    truth_rows, pred_rows = [], []
    for _ in range(12):
        scene = _random_scene(rng, int(rng.integers(1, 7)))
        truth_rows.append(_text(scene, [1.0] * len(scene)))
        preds = [_jitter(rng, b) for b in scene if rng.random() < 0.8]
        preds += _random_scene(rng, int(rng.integers(0, 3)))
        scores = [float(rng.choice([0.5, rng.random()])) for _ in preds]
        pred_rows.append(_text(preds, scores))
    mine = map_3d_iou_range(parse_boxes_3d(truth_rows), parse_boxes_3d(pred_rows), len(truth_rows))
    assert mine == pytest.approx(reference_3d(truth_rows, pred_rows), abs=1e-12)
    assert 0 < mine < 1


def test_map_3d_perfect_and_failures():
    truth = ["1.0 0 0 0 2 4 1.5 0.3 car 1.0 10 10 0 2 4 1.5 -1 car", "1.0 5 5 0 1 1 2 0 pedestrian"]
    assert map_3d_iou_range(parse_boxes_3d(truth), parse_boxes_3d(truth), 2) == 1.0
    empty = parse_boxes_3d(["", ""])
    assert map_3d_iou_range(parse_boxes_3d(truth), empty, 2) == 0.0
    with pytest.raises(MalformedBoxes3D, match="9 values"):
        parse_boxes_3d(["1.0 0 0 0 2 4 1.5 0.3"])
    with pytest.raises(MalformedBoxes3D, match="infinite"):
        parse_boxes_3d(["1.0 0 0 0 2 4 1.5 inf car"])
    bad = parse_boxes_3d(["0.5 0 0 0 -2 4 1.5 0.3 car", "0.5 0 0 0 -2 4 1.5 0.3 truck"])
    with pytest.raises(ValueError, match="invalid"):
        map_3d_iou_range(parse_boxes_3d(truth), bad, 2)
    # A broken box of a class the sample's truth does not hold is never built: no error.
    ignored = parse_boxes_3d(["0.5 0 0 0 -2 4 1.5 0.3 truck", ""])
    assert map_3d_iou_range(parse_boxes_3d(truth), ignored, 2) == 0.0
