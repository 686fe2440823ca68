"""Errors and correlations of numeric predictions.

The error metrics repeat scikit-learn 1.5.1's operations (``np.average`` over a (rows, 1)
column, then the square root) so results agree to the last bit.
"""

from __future__ import annotations

import numpy as np

from graders.results import InvalidSubmission


def _column(values: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).reshape((-1, 1))


def rmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Root mean squared error (sklearn root_mean_squared_error)."""
    errors = np.sqrt(np.average((_column(y_true) - _column(y_pred)) ** 2, axis=0))
    return float(np.average(errors))


def mae(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean absolute error (sklearn mean_absolute_error)."""
    errors = np.average(np.abs(_column(y_pred) - _column(y_true)), axis=0)
    return float(np.average(errors))


def rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Root mean squared log error, sqrt(mean((ln(1+p) - ln(1+t))^2)); negatives invalid."""
    t = np.asarray(y_true, dtype=np.float64)
    p = np.asarray(y_pred, dtype=np.float64)
    if (t < 0).any() or (p < 0).any():
        raise InvalidSubmission(
            "RMSLE cannot score negative values: predictions must be >= 0 "
            f"({int((p < 0).sum())} are negative)."
        )
    return rmse(np.log1p(t), np.log1p(p))


def mean_columnwise_rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean over columns of RMSLE, summed left to right then halved like MLE-bench."""
    total = 0.0
    for column in range(y_true.shape[1]):  # two target columns
        total = total + rmsle(y_true[:, column], y_pred[:, column])
    return float(total / y_true.shape[1])


def mcrmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean over columns of the column RMSE (``np.mean`` of the per-column values)."""
    errors = [rmse(y_true[:, c], y_pred[:, c]) for c in range(y_true.shape[1])]
    return float(np.mean(errors))


def log_mae_by_type(y_true: np.ndarray, y_pred: np.ndarray, type_codes: np.ndarray) -> float:
    """Mean over coupling types (in sorted type order) of ln(MAE within the type).

    ``type_codes`` are 0..T-1 in sorted type order; rows keep their order within a type. An
    exactly right type gives ln(0) = -inf, which MLE-bench keeps.
    """
    order = np.argsort(type_codes, kind="stable")
    boundaries = np.flatnonzero(np.diff(type_codes[order])) + 1
    log_maes = []
    for group in np.split(order, boundaries):  # one group per coupling type (about eight)
        with np.errstate(divide="ignore"):
            log_maes.append(np.log(mae(y_true[group], y_pred[group])))
    return float(np.mean(log_maes))


def laplace_log_likelihood(
    actual: np.ndarray, predicted: np.ndarray, confidence: np.ndarray
) -> float:
    """OSIC's modified Laplace log likelihood with sigma >= 70 and errors capped at 1000."""
    sd_clipped = np.maximum(confidence, 70)
    delta = np.minimum(np.abs(actual - predicted), 1000)
    metric = -np.sqrt(2) * delta / sd_clipped - np.log(np.sqrt(2) * sd_clipped)
    return float(np.mean(metric))


def mean_angular_error(
    az_true: np.ndarray, zen_true: np.ndarray, az_pred: np.ndarray, zen_pred: np.ndarray
) -> float:
    """Mean angle (radians) between true and predicted directions given as azimuth/zenith."""
    sa1, ca1 = np.sin(az_true), np.cos(az_true)
    sz1, cz1 = np.sin(zen_true), np.cos(zen_true)
    sa2, ca2 = np.sin(az_pred), np.cos(az_pred)
    sz2, cz2 = np.sin(zen_pred), np.cos(zen_pred)
    scalar_prod = sz1 * sz2 * (ca1 * ca2 + sa1 * sa2) + (cz1 * cz2)
    scalar_prod = np.clip(scalar_prod, -1, 1)
    return float(np.average(np.abs(np.arccos(scalar_prod))))


HAVERSINE_RADIUS = 6_371_000


def haversine_metres(
    lat_pred: np.ndarray, lng_pred: np.ndarray, lat_true: np.ndarray, lng_true: np.ndarray
) -> np.ndarray:
    """Great-circle distance in metres between degree positions (sphere of 6,371 km)."""
    lat1, lng1 = np.deg2rad(lat_pred), np.deg2rad(lng_pred)
    lat2, lng2 = np.deg2rad(lat_true), np.deg2rad(lng_true)
    dlat = lat2 - lat1
    dlng = lng2 - lng1
    a = np.sin(dlat / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin(dlng / 2) ** 2
    return 2 * HAVERSINE_RADIUS * np.arcsin(np.sqrt(a))


def haversine_p50_p95_mean(distances_by_trip: list[np.ndarray]) -> float:
    """Mean over trips of (median + 95th percentile)/2 of the trip's distances."""
    scores = [np.mean([np.quantile(d, 0.50), np.quantile(d, 0.95)]) for d in distances_by_trip]
    return float(np.mean(scores))


def pearson(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Pearson's r (scipy.stats.pearsonr); NaN when either side is constant."""
    import warnings

    from scipy.stats import pearsonr  # scipy is slow to import: only when this metric runs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(pearsonr(y_true, y_pred)[0])


def mean_columnwise_spearman(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean over columns of Spearman's rho (scipy.stats.spearmanr); NaN propagates."""
    import warnings

    from scipy.stats import spearmanr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = [spearmanr(y_pred[:, c], y_true[:, c]).correlation for c in range(y_true.shape[1])]
    return float(np.mean(values))
