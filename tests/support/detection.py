"""A reference for object-detection metrics, written from the metric's definition, that
the box graders are checked against."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import average_precision_score


def reference_voc(truth_rows, pred_rows) -> float:
    def iou(a, b):
        iw = max(0, min(a[2], b[2]) - max(a[0], b[0]))
        ih = max(0, min(a[3], b[3]) - max(a[1], b[1]))
        inter = iw * ih
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
        return inter / union if union > 0 else 0.0

    def parse(text):
        t = text.split()
        return [(t[i], *map(float, t[i + 1 : i + 6])) for i in range(0, len(t), 6)]

    truth = [parse(t) for t in truth_rows]
    preds = [sorted(parse(p), key=lambda b: b[1], reverse=True) for p in pred_rows]
    aps = []
    for cls in sorted({b[0] for row in truth for b in row}):
        pairs = []
        for gts, ps in zip(truth, preds, strict=True):
            boxes = [g[2:] for g in gts if g[0] == cls]
            matched = [False] * len(boxes)
            row = []
            for p in ps:
                if p[0] != cls:
                    continue
                best, best_i = 0, -1
                for i, g in enumerate(boxes):
                    if not matched[i]:
                        v = iou(p[2:], g)
                        if v > best and v > 0.5:
                            best, best_i = v, i
                row.append((1 if best_i >= 0 else 0, p[1]))
                if best_i >= 0:
                    matched[best_i] = True
            row += [(1, 0)] * matched.count(False)
            pairs += row or [(0, 0)]
        aps.append(average_precision_score([a for a, _ in pairs], [b for _, b in pairs]))
    return float(np.mean(aps))
