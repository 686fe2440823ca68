"""Label-agreement metrics: accuracy, F1 (micro, macro, probabilistic), MCC, quadratic kappa.

Each function reproduces scikit-learn 1.5.1's arithmetic (same operations in the same order)
so that scores round to the same 5 decimals as MLE-bench's.
"""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc

from graders.metrics.labels import (
    LabelArray,
    confusion_matrix,
    encode_labels,
    is_text,
    numeric_labels,
    text_labels,
)
from graders.results import InvalidSubmission


def accuracy(y_true: LabelArray, y_pred: LabelArray, name: str = "prediction") -> float:
    """Fraction of rows whose predicted label equals the true label (sklearn accuracy_score).

    Follows scikit-learn's acceptance rules: NaN and fractional numbers are invalid; text
    compared with numbers never matches, and is invalid when both sides have at most two
    distinct labels (sklearn then sorts the union and fails).
    """
    n = len(y_true)
    if n == 0:
        raise InvalidSubmission("There are no rows to score.")
    if is_text(y_pred):
        y_pred = text_labels(y_pred, name)
    else:
        y_pred = numeric_labels(np.asarray(y_pred), name)
    if is_text(y_true) != is_text(y_pred):
        if _n_distinct(y_true) <= 2 and _n_distinct(y_pred) <= 2:
            raise InvalidSubmission(
                f"Column '{name}' mixes text and number labels with the answers: use the same "
                "label values as the training data."
            )
        return 0.0  # a string never equals a number
    if is_text(y_true):
        equal = pc.equal(y_true, y_pred)
        matches = pc.sum(equal).as_py() or 0
    else:
        matches = int(np.count_nonzero(np.asarray(y_true, dtype=np.float64) == y_pred))
    return float(matches / n)


def _n_distinct(values: LabelArray) -> int:
    if is_text(values):
        return len(pc.unique(values))
    return len(np.unique(np.asarray(values)))


def f1_macro(y_true: LabelArray, y_pred: LabelArray, name: str = "prediction") -> float:
    """Unweighted mean over labels (union of truth and predictions) of per-label F1."""
    encoded = encode_labels(y_true, y_pred, name)
    n = encoded.n_labels
    hits = encoded.true[encoded.true == encoded.pred]
    tp = np.bincount(hits, minlength=n)
    true_sum = np.bincount(encoded.true, minlength=n)
    pred_sum = np.bincount(encoded.pred, minlength=n)
    f_score = _prf_divide(2.0 * tp, 1.0 * true_sum + pred_sum)
    return float(np.average(f_score))


def f1_micro_counts(tp: int, true_count: int, pred_count: int) -> float:
    """Micro F1 from pooled counts: 2TP / (#true + #predicted), 0 when both are empty."""
    f_score = _prf_divide(2.0 * np.array([tp]), 1.0 * np.array([true_count]) + pred_count)
    return float(np.average(f_score))


def _prf_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    # scikit-learn's zero_division="warn": 0/0 counts as 0.
    mask = denominator == 0.0
    denominator = denominator.copy()
    denominator[mask] = 1
    result = numerator / denominator
    result[mask] = 0.0
    return result


def matthews_corrcoef(y_true: LabelArray, y_pred: LabelArray, name: str = "prediction") -> float:
    """Matthews correlation over the label union (sklearn; 0 when undefined)."""
    encoded = encode_labels(y_true, y_pred, name)
    c = confusion_matrix(encoded.true, encoded.pred, encoded.n_labels)
    t_sum = c.sum(axis=1, dtype=np.float64)
    p_sum = c.sum(axis=0, dtype=np.float64)
    n_correct = np.trace(c, dtype=np.float64)
    n_samples = p_sum.sum()
    cov_ytyp = n_correct * n_samples - np.dot(t_sum, p_sum)
    cov_ypyp = n_samples**2 - np.dot(p_sum, p_sum)
    cov_ytyt = n_samples**2 - np.dot(t_sum, t_sum)
    if cov_ypyp * cov_ytyt == 0:
        return 0.0
    return float(cov_ytyp / np.sqrt(cov_ytyt * cov_ypyp))


def quadratic_weighted_kappa(
    y_first: LabelArray, y_second: LabelArray, name: str = "prediction"
) -> float:
    """Cohen's kappa with quadratic weights over the sorted label union (sklearn).

    Argument order matters only for the last bits of the result; MLE-bench passes
    (prediction, truth), so callers do too. ``y_first`` is validated as the submission.
    """
    encoded = encode_labels(y_second, y_first, name)
    n = encoded.n_labels
    confusion = confusion_matrix(encoded.pred, encoded.true, n)
    sum0 = np.sum(confusion, axis=0)
    sum1 = np.sum(confusion, axis=1)
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    w_mat = np.zeros([n, n], dtype=int)
    w_mat += np.arange(n)
    w_mat = (w_mat - w_mat.T) ** 2
    k = np.sum(w_mat * confusion) / np.sum(w_mat * expected)
    return float(1 - k)


def probabilistic_f1(labels: np.ndarray, predictions: np.ndarray) -> float:
    """pF1 (beta = 1) as in the RSNA breast cancer metric, accumulated row by row.

    Predictions are clipped to [0, 1]; cTP/cFP are running sums in row order (the reference
    adds one row at a time, so the sums are sequential here too). NaN anywhere makes the
    precision NaN and the score 0, like the reference.
    """
    clipped = np.minimum(np.maximum(predictions.astype(np.float64), 0.0), 1.0)
    clipped[np.isnan(predictions)] = np.nan
    positive = labels.astype(bool)
    y_true_count = int(positive.sum())
    ctp = _sequential_sum(np.where(positive, clipped, 0.0))
    cfp = _sequential_sum(np.where(positive, 0.0, clipped))
    if ctp + cfp == 0 and bool(np.all(predictions < 0)):
        # Every prediction clipped to the integer 0: the reference divides 0 by 0 in Python.
        raise InvalidSubmission(
            "Every prediction is negative: the probabilistic F1 is undefined (0/0)."
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        c_precision = np.float64(ctp) / np.float64(ctp + cfp)
        c_recall = np.float64(ctp) / np.float64(y_true_count)
    if c_precision > 0 and c_recall > 0:
        return float(2 * (c_precision * c_recall) / (c_precision + c_recall))
    return 0.0


def _sequential_sum(values: np.ndarray) -> float:
    """Left-to-right float sum (a running total), unlike numpy's pairwise ``sum``."""
    if len(values) == 0:
        return 0.0
    return float(np.cumsum(values)[-1])
