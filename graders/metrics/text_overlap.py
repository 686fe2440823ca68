"""Word-set overlap between predicted and true text spans (question answering, extraction)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def word_jaccard_per_row(
    y_true: Sequence[str], y_pred: Sequence[str], both_empty: float | None = 0.0
) -> np.ndarray:
    """Per row, ``|A and B| / |A or B|`` of the lowercased whitespace-separated word sets.

    ``both_empty`` is the value of a row where neither side has a word: 0.0 is scikit-learn's
    ``jaccard_score`` (chaii); ``None`` raises ``ZeroDivisionError`` like the plain formula
    tweet-sentiment-extraction uses.
    """
    if len(y_true) != len(y_pred):
        raise ValueError(f"{len(y_true)} true values but {len(y_pred)} predictions")
    true_sets = [set(text.lower().split()) for text in y_true]
    pred_sets = [set(text.lower().split()) for text in y_pred]
    common = np.fromiter(map(len, map(set.intersection, true_sets, pred_sets)), np.int64)
    sizes = np.fromiter(map(len, true_sets), np.int64) + np.fromiter(map(len, pred_sets), np.int64)
    union = sizes - common
    empty = union == 0
    if both_empty is None and empty.any():
        row = int(np.flatnonzero(empty)[0])
        raise ZeroDivisionError(f"row {row}: neither the prediction nor the truth has a word")
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = common / union
    return np.where(empty, 0.0 if both_empty is None else both_empty, scores)


def word_jaccard_mean(
    y_true: Sequence[str], y_pred: Sequence[str], both_empty: float | None = 0.0
) -> float:
    """Mean over rows of ``word_jaccard_per_row`` (higher is better, 1 = every span exact)."""
    return float(np.mean(word_jaccard_per_row(y_true, y_pred, both_empty)))
