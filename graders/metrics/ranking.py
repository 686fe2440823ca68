"""Agreement between predicted and true orderings (AI4Code's pooled Kendall tau)."""

from __future__ import annotations

import numpy as np

# Work in chunks of at most this many pair comparisons to bound memory.
_PAIRS_PER_CHUNK = 1 << 24


def count_inversions(ranks: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Inversions (pairs ``i < j`` with ``ranks[i] > ranks[j]``) of each group, as int64.

    ``ranks`` is the concatenation of the groups; ``lengths`` the size of each group.
    Groups are padded to a power-of-two length and compared all-pairs in bulk, so the cost is
    about the sum of squared group sizes, done in numpy without a loop over groups.
    """
    ranks = np.asarray(ranks, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    result = np.zeros(len(lengths), dtype=np.int64)
    padded = np.ones(len(lengths), dtype=np.int64)
    several = lengths > 1
    padded[several] = 1 << np.ceil(np.log2(lengths[several])).astype(np.int64)
    sentinel = np.iinfo(np.int64).max  # padding sits at the end and inverts with nothing
    for width in np.unique(padded[several]).tolist():
        groups = np.flatnonzero((padded == width) & several)
        upper = np.triu(np.ones((width, width), dtype=bool), k=1)
        column = np.arange(width)
        per_chunk = max(1, _PAIRS_PER_CHUNK // (width * width))
        for chunk in range(0, len(groups), per_chunk):
            chosen = groups[chunk : chunk + per_chunk]
            valid = column[None, :] < lengths[chosen, None]
            index = np.where(valid, starts[chosen, None] + column[None, :], 0)
            block = np.where(valid, ranks[index], sentinel)
            inverted = (block[:, :, None] > block[:, None, :]) & upper
            result[chosen] = inverted.sum(axis=(1, 2))
    return result


def kendall_tau_pooled(ranks: np.ndarray, lengths: np.ndarray) -> float:
    """``1 - 4 * inversions / sum(n * (n - 1))`` pooled over all groups.

    ``ranks`` holds, group after group, the true position of each predicted item (a
    permutation of ``0..n-1`` per group); 1 = every order exact, -1 = every order reversed.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    inversions = int(count_inversions(ranks, lengths).sum())
    max_pairs = int((lengths * (lengths - 1)).sum())
    return 1 - 4 * inversions / max_pairs
