"""ROC AUC and the AUC-based competition metrics.

``roc_curve`` and ``roc_auc`` perform scikit-learn 1.5.1's computation step by step (stable
descending sort, one point per distinct score, collinear points dropped, trapezoids), so
scores agree to the last bit, ties included.
"""

from __future__ import annotations

import numpy as np

from graders.results import InvalidSubmission


def _trapezoid(y: np.ndarray, x: np.ndarray) -> float:
    return np.add.reduce(np.diff(x) * (y[1:] + y[:-1]) / 2.0)


def area_under_curve(x: np.ndarray, y: np.ndarray) -> float:
    """Trapezoidal area under (x, y) with x monotonic (sklearn.metrics.auc)."""
    direction = 1
    dx = np.diff(x)
    if np.any(dx < 0):
        if np.all(dx <= 0):
            direction = -1
        else:
            raise ValueError("x is neither increasing nor decreasing")
    return direction * _trapezoid(y, x)


def roc_curve(
    positive: np.ndarray, score: np.ndarray, *, drop_intermediate: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """False- and true-positive rates at each distinct threshold, from (0, 0) up.

    ``positive`` is a boolean array (row is of the positive class); ``score`` float64.
    Rates are NaN when a class is absent, as in scikit-learn.
    """
    # scikit-learn sorts (score, truth) pairs by descending score and reads, at the last row
    # of each distinct score, the running counts of positives (tps) and negatives (fps).
    # Those counts are exact integers: counting the positives and negatives scored at or
    # above each distinct score gives the same floats, from two half-size sorts.
    positive_scores = np.sort(score[positive])
    negative_scores = np.sort(score[~positive])
    merged = np.sort(np.concatenate([positive_scores, negative_scores]), kind="stable")
    last = np.r_[np.flatnonzero(np.diff(merged)), merged.size - 1]  # ascending distinct
    distinct = merged[last][::-1]  # descending, as scikit-learn walks the curve
    tps = (len(positive_scores) - np.searchsorted(positive_scores, distinct, "left")).astype(
        np.float64
    )
    fps = (len(negative_scores) - np.searchsorted(negative_scores, distinct, "left")).astype(
        np.float64
    )
    if drop_intermediate and len(fps) > 2:
        optimal = np.where(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True])[0]
        fps = fps[optimal]
        tps = tps[optimal]
    tps = np.r_[0, tps]
    fps = np.r_[0, fps]
    fpr = np.repeat(np.nan, fps.shape) if fps[-1] <= 0 else fps / fps[-1]
    tpr = np.repeat(np.nan, tps.shape) if tps[-1] <= 0 else tps / tps[-1]
    return fpr, tpr


def binary_truth(y_true: np.ndarray) -> np.ndarray:
    """The positive-class indicator of a two-class truth column (the larger label is positive).

    Raises ``InvalidSubmission`` when the rows scored hold only one class: the AUC is then
    undefined and MLE-bench's grader fails.
    """
    labels = np.unique(y_true)
    if len(labels) != 2:
        raise InvalidSubmission(
            "ROC AUC is undefined here: the scored rows contain only one class."
            if len(labels) < 2
            else f"ROC AUC needs two classes in the answers, found {len(labels)}."
        )
    return y_true == labels[1]


def roc_auc(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """Binary ROC AUC, identical to sklearn.metrics.roc_auc_score (ties count half)."""
    positive = binary_truth(np.asarray(y_true))
    score = np.asarray(y_score, dtype=np.float64)
    if len(positive) != len(score):
        raise InvalidSubmission(
            f"Found {len(score)} scores for {len(positive)} rows: lengths must match."
        )
    if not np.all(np.isfinite(score)):
        raise InvalidSubmission("Scores must be finite numbers (no NaN or infinity).")
    fpr, tpr = roc_curve(positive, score)
    return float(area_under_curve(fpr, tpr))


def mean_columnwise_roc_auc(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """Mean over columns of the binary ROC AUC of each column (sklearn macro average)."""
    scores = np.zeros((y_true.shape[1],))
    for column in range(y_true.shape[1]):  # a handful of label columns, not rows
        scores[column] = roc_auc(y_true[:, column], y_score[:, column])
    return float(np.average(scores))


def alaska_weighted_auc(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """ALASKA2's weighted AUC: TPR bands [0, 0.4] (weight 2) and [0.4, 1] (weight 1).

    The band edges are inserted into the ROC curve by linear interpolation of the FPR; each
    band's area (TPR shifted to start at 0, closed at FPR 1) is weighted and the sum is
    divided by 1.4.
    """
    tpr_thresholds = [0.0, 0.4, 1.0]
    weights = [2, 1]
    positive = np.asarray(y_true) == 1
    fpr, tpr = roc_curve(positive, np.asarray(y_score, dtype=np.float64))
    fpr, tpr = _insert_thresholds(fpr, tpr, tpr_thresholds)
    areas = np.array(tpr_thresholds[1:]) - np.array(tpr_thresholds[:-1])
    total = 0
    for index, weight in enumerate(weights):
        y_min, y_max = tpr_thresholds[index], tpr_thresholds[index + 1]
        mask = (y_min <= tpr) & (tpr <= y_max)
        if mask.sum() == 0:
            continue
        xs = np.concatenate([fpr[mask], [1]])
        ys = np.concatenate([tpr[mask], [y_max]]) - y_min
        total += area_under_curve(xs, ys) * weight
    return float(total / np.dot(areas, weights))


def _insert_thresholds(fpr: np.ndarray, tpr: np.ndarray, thresholds: list[float]):
    """Add each threshold missing from ``tpr`` before the first larger TPR, FPR interpolated."""
    for threshold in thresholds:
        if np.any(tpr == threshold):
            continue
        above = np.flatnonzero(tpr > threshold)
        if len(above) == 0:
            continue
        i = int(above[0])
        # i == 0 would read index -1, as the reference's list arithmetic does.
        new_fpr = fpr[i - 1] + (fpr[i] - fpr[i - 1]) * (threshold - tpr[i - 1]) / (
            tpr[i] - tpr[i - 1]
        )
        fpr = np.concatenate([fpr[:i], [new_fpr], fpr[i:]])
        tpr = np.concatenate([tpr[:i], [threshold], tpr[i:]])
    return fpr, tpr


def jigsaw_bias_auc(
    toxic: np.ndarray,
    predicted_toxic: np.ndarray,
    identities: np.ndarray,
    *,
    power: int = -5,
    weight: float = 0.25,
) -> float:
    """Jigsaw unintended-bias metric on hard 0/1 labels.

    ``toxic``, ``predicted_toxic``: 0/1 arrays; ``identities``: (rows, groups) 0/1 matrix.
    0.25 * overall AUC + 0.25 * power mean (p = -5) of each of subgroup, BPSN and BNSP AUCs.
    """
    overall = roc_auc(toxic, predicted_toxic)
    bias = []
    for group in range(identities.shape[1]):  # nine identity groups, not rows
        member = identities[:, group] == 1
        subgroup = member
        bpsn = ((toxic == 0) & member) | ((toxic == 1) & ~member)
        bnsp = ((toxic == 1) & member) | ((toxic == 0) & ~member)
        bias.append(
            [roc_auc(toxic[mask], predicted_toxic[mask]) for mask in (subgroup, bpsn, bnsp)]
        )
    n_groups = identities.shape[1]
    means = []
    for kind in range(3):
        values = [np.float64(row[kind]) for row in bias]
        # numpy powers: an AUC of exactly 0 gives inf and a power mean of 0, as in MLE-bench.
        with np.errstate(divide="ignore", over="ignore"):
            means.append((sum([v**power for v in values]) / n_groups) ** (1 / power))
    return float(weight * overall + sum([weight * m for m in means]))
