"""Ranked-list metrics: mean average precision at k, and lwlrap.

``map_at_k`` works on whole columns of space-separated strings at once (pyarrow list
kernels and numpy), never row by row.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.arrow_numpy import to_numpy


def _flatten(lists: pa.ChunkedArray | pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(tokens, row of each token, position of each token within its row)."""
    lists = lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists
    tokens = pc.list_flatten(lists)
    rows = to_numpy(pc.list_parent_indices(lists)).astype(np.int64)
    offsets = to_numpy(lists.offsets).astype(np.int64)
    positions = np.arange(len(rows), dtype=np.int64) - (offsets[rows] - offsets[0])
    return tokens, rows, positions


def map_at_k(actual: pa.Array, predicted: pa.Array, k: int) -> float:
    """Mean over rows of AP@k between the true item set and the predicted item list.

    Both arguments are text columns of single-space-separated items (split on " " exactly,
    so doubled spaces make empty items, as Python's ``str.split(" ")`` does). Per row,
    AP@k = (sum over the first k predictions that are relevant and not repeated of
    hits_so_far / rank) / min(#distinct true items, k).
    """
    n_rows = len(actual)
    if n_rows == 0:
        return float("nan")
    true_tokens, true_rows, _ = _flatten(pc.split_pattern(actual, " "))
    pred_lists = pc.list_slice(pc.split_pattern(predicted, " "), 0, k)
    pred_tokens, pred_rows, pred_positions = _flatten(pred_lists)

    vocabulary = pc.unique(pa.chunked_array([true_tokens, pred_tokens], type=pa.string()))
    size = max(len(vocabulary), 1)
    true_keys = true_rows * size + to_numpy(pc.index_in(true_tokens, value_set=vocabulary))
    pred_keys = pred_rows * size + to_numpy(pc.index_in(pred_tokens, value_set=vocabulary))

    distinct_true = np.unique(true_keys)
    true_counts = np.bincount(distinct_true // size, minlength=n_rows)

    # A prediction counts once: its first occurrence in the row's top k.
    first = np.zeros(len(pred_keys), dtype=bool)
    first[np.unique(pred_keys, return_index=True)[1]] = True
    relevant = first & np.isin(pred_keys, distinct_true)

    # Hits so far within each row (rows are contiguous and in order).
    running = np.cumsum(relevant)
    row_start = np.searchsorted(pred_rows, np.arange(n_rows), side="left")
    before_row = np.where(row_start > 0, running[np.maximum(row_start - 1, 0)], 0)
    hits_so_far = running - before_row[pred_rows]

    contributions = np.zeros((n_rows, k))
    hit_index = np.flatnonzero(relevant)
    contributions[pred_rows[hit_index], pred_positions[hit_index]] = hits_so_far[hit_index].astype(
        np.float64
    ) / (pred_positions[hit_index] + 1.0)
    score = np.zeros(n_rows)
    for rank in range(k):  # add the k ranks in order, like the reference's running sum
        score = score + contributions[:, rank]
    average_precision = score / np.minimum(true_counts, k)
    return float(np.mean(average_precision))


def lwlrap(truth: np.ndarray, scores: np.ndarray) -> float:
    """Label-weighted label-ranking average precision (clips without labels left out).

    Uses scikit-learn's label_ranking_average_precision_score with each clip weighted by
    its number of true labels, as the competition's reference implementation does.
    """
    from sklearn.metrics import label_ranking_average_precision_score

    sample_weight = np.sum(truth > 0, axis=1)
    keep = np.flatnonzero(sample_weight > 0)
    return float(
        label_ranking_average_precision_score(
            truth[keep, :] > 0, scores[keep, :], sample_weight=sample_weight[keep]
        )
    )
