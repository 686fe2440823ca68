"""Log losses and the KL divergence, with scikit-learn 1.5.1's and Kaggle's exact arithmetic.

scikit-learn 1.5.1's ``log_loss`` clips probabilities to [eps, 1 - eps] (float64 eps) and,
unlike earlier releases, does not renormalise rows (it only warns when they do not sum to 1).
"""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc

from graders.arrow_numpy import from_numpy, to_numpy

EPS = float(np.finfo(np.float64).eps)


def _libm_log(values: np.ndarray) -> np.ndarray:
    """Natural log computed like C's ``log`` (as scipy's ``xlogy`` inside scikit-learn does).

    numpy's vectorised ``log`` differs from the C library's in the last bit for about one
    value in five on AVX-512 machines; pyarrow's ``ln`` calls the C library, so log losses
    here match scikit-learn's bit for bit without importing scipy (half a second).
    """
    flat = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    return to_numpy(pc.ln(from_numpy(flat))).reshape(values.shape)


def multiclass_log_loss(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean over rows of -sum_k y_k * ln(clip(p_k)) for a (rows, classes) indicator truth."""
    probabilities = np.clip(np.asarray(y_pred, dtype=np.float64), EPS, 1 - EPS)
    truth = np.asarray(y_true)
    # xlogy(0, p) is 0 and xlogy(1, p) is ln p: multiply only where the truth is non-zero,
    # so the per-row sums hold exactly the same terms as scikit-learn's.
    terms = np.where(truth != 0, truth * _libm_log(probabilities), 0.0)
    loss = -terms.sum(axis=1)
    return float(np.average(loss))


def binary_log_loss(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Binary log loss of probabilities for the larger of the two labels (sklearn log_loss).

    As in scikit-learn, the (1 - p, p) pair is formed before clipping.
    """
    truth = np.asarray(y_true)
    labels = np.unique(truth)
    if len(labels) != 2:
        raise ValueError(f"binary log loss needs two classes in the answers, got {len(labels)}")
    p = np.asarray(y_pred, dtype=np.float64)
    pair = np.clip(np.column_stack([1 - p, p]), EPS, 1 - EPS)
    positive = truth == labels[1]
    chosen = np.where(positive, pair[:, 1], pair[:, 0])
    loss = -_libm_log(chosen)
    return float(np.average(loss))


RSNA_2022_WEIGHTS_NEGATIVE = np.array([7, 1, 1, 1, 1, 1, 1, 1], dtype=np.float32)
RSNA_2022_WEIGHTS_POSITIVE = np.array([14, 2, 2, 2, 2, 2, 2, 2], dtype=np.float32)


def weighted_binary_log_loss(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """RSNA 2022 cervical spine metric on (studies, 8) arrays ordered patient_overall, C1..C7.

    Per cell: binary log loss with predictions clipped to [1e-15, 1 - 1e-15]; weights 14/7
    (patient_overall positive/negative) and 2/1 (vertebrae); per study the weighted mean;
    the score is the mean over studies.
    """
    epsilon = 1e-15
    p = np.clip(y_pred, epsilon, 1 - epsilon)
    loss = -(y_true * np.log(p) + (1 - y_true) * np.log(1 - p))
    weights = y_true * RSNA_2022_WEIGHTS_POSITIVE + (1 - y_true) * RSNA_2022_WEIGHTS_NEGATIVE
    loss = loss * weights
    loss = np.sum(loss, axis=1)
    loss = loss / weights.sum(axis=1)
    return float(np.mean(loss))


def kl_divergence(solution: np.ndarray, submission: np.ndarray, epsilon: float = 1e-15) -> float:
    """Mean over rows of sum_k p_k ln(p_k / q_k) (Kaggle's KL metric, micro average).

    ``solution`` rows are target distributions; ``submission`` is clipped to
    [epsilon, 1 - epsilon]; terms with p = 0 are 0. Row sums add the columns left to right
    and skip NaN terms (pandas' ``sum``), so a NaN prediction costs nothing - MLE-bench's quirk.
    """
    q = np.clip(submission, epsilon, 1 - epsilon)
    p = solution.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p != 0, p * np.log(p / q), 0.0)
    terms[np.isnan(terms)] = 0.0
    row_sums = terms[:, 0].copy()
    for column in range(1, terms.shape[1]):  # six vote columns, summed in order
        row_sums = row_sums + terms[:, column]
    return float(np.average(row_sums))
