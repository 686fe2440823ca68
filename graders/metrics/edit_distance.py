"""Edit distances between predicted and true sequences, computed pairwise in C (rapidfuzz).

MLE-bench calls ``Levenshtein.distance`` in a Python loop; rapidfuzz implements the same
distance (insertions, deletions and substitutions each cost 1) and ``cpdist`` runs the whole
column of pairs in C on all cores.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist


def levenshtein_distances(y_true: Sequence, y_pred: Sequence) -> np.ndarray:
    """Levenshtein distance of each pair ``(y_true[i], y_pred[i])`` as int64.

    Elements are strings (character edits) or sequences of hashable tokens (token edits).
    """
    if len(y_true) != len(y_pred):
        raise ValueError(f"{len(y_true)} true values but {len(y_pred)} predictions")
    if len(y_true) == 0:
        return np.zeros(0, dtype=np.int64)
    distances = cpdist(
        list(y_true), list(y_pred), scorer=Levenshtein.distance, dtype=np.int64, workers=-1
    )
    return np.asarray(distances, dtype=np.int64)


def levenshtein_mean(y_true: Sequence[str], y_pred: Sequence[str]) -> float:
    """Mean character-level Levenshtein distance over rows (lower is better; NaN if no rows)."""
    return float(np.mean(levenshtein_distances(y_true, y_pred)))


def normalized_sequence_levenshtein(
    y_true: Sequence[Sequence[int]], y_pred: Sequence[Sequence[int]]
) -> float:
    """Sum over rows of the token-level edit distance, divided by the number of true tokens.

    An error rate that can exceed 1 (too many inserted tokens). Division by zero when the
    truth has no tokens at all raises ``ZeroDivisionError``, as MLE-bench's does.
    """
    total_distance = int(levenshtein_distances(y_true, y_pred).sum())
    total_true = sum(len(sequence) for sequence in y_true)
    return total_distance / total_true
