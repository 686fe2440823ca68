"""Intervals that hold at MLE-bench's small n: a hierarchical bootstrap over competitions
and seeds, rank ranges over the same resamples, and P(A > B).

Mean ± SEM over seeds says how much seeds vary, not how much the figure would move on
another draw of competitions; with 15 to 75 competitions and often 3 seeds a normal
interval from it is too narrow (Miller 2024, arXiv:2411.00640; Bowyer et al. 2025,
arXiv:2503.01747). Every experiment of a split is resampled with the same draws (common
random numbers), so differences and ranks reflect the experiments; an entry known only by
its published mean ± SEM gets wider ``normal_replicates``. Each function's rule:
docs/architecture.md.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

REPLICATES = 1000
LEVEL = 0.95


def _seed(*parts: object) -> int:
    return zlib.crc32("\x1f".join(str(part) for part in parts).encode())


def competition_resamples(
    n_competitions: int, *, split: str, replicates: int = REPLICATES
) -> np.ndarray:
    """``replicates`` × ``n_competitions`` indices of competitions drawn with replacement,
    the same for every experiment of ``split`` (with that many competitions)."""
    rng = np.random.default_rng(_seed("competitions", split, n_competitions, replicates))
    return rng.integers(0, max(n_competitions, 1), size=(replicates, n_competitions))


def any_medal_replicates(
    medals: Sequence[int], runs: Sequence[int], resamples: np.ndarray, *, key: object
) -> np.ndarray:
    """Any Medal % in each replicate. ``medals[c]`` of ``runs[c]`` runs of competition ``c``
    won a medal (a competition without runs counts as none); ``resamples`` is
    ``competition_resamples``' draw for these competitions, in this order; ``key`` names
    the experiment, so its seeds are drawn again the same way each time."""
    medals_array = np.asarray(medals, dtype=np.int64)
    runs_array = np.asarray(runs, dtype=np.int64)
    if resamples.shape[1] != len(medals_array) or len(medals_array) != len(runs_array):
        raise ValueError("one count of medals and runs per competition of the draw")
    if not len(medals_array):
        return np.zeros(resamples.shape[0], dtype=np.float32)
    rng = np.random.default_rng(_seed("seeds", key))
    n = runs_array[resamples]
    rate = np.divide(
        medals_array, runs_array, out=np.zeros(len(medals_array)), where=runs_array > 0
    )[resamples]
    drawn = rng.binomial(n, rate)
    per_competition = np.divide(drawn, n, out=np.zeros(drawn.shape), where=n > 0)
    return (per_competition.mean(axis=1) * 100).astype(np.float32)


def normal_replicates(
    mean: float,
    standard_error: float,
    n_competitions: int,
    *,
    key: object,
    replicates: int = REPLICATES,
) -> np.ndarray:
    """Replicates for a figure known only as mean ± SEM (in %), over ``n_competitions``."""
    rate = min(max(mean / 100, 0.0), 1.0)
    spread = (standard_error / 100) ** 2 + rate * (1 - rate) / max(n_competitions, 1)
    rng = np.random.default_rng(_seed("published", key))
    drawn = rng.normal(rate, np.sqrt(spread), size=replicates)
    return (np.clip(drawn, 0.0, 1.0) * 100).astype(np.float32)


def interval(replicates: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The percentile interval holding ``level`` of the replicates."""
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(replicates, [tail, 100 - tail])
    return float(low), float(high)


def rank_ranges(replicates: np.ndarray, level: float = LEVEL) -> list[tuple[int, int]]:
    """For entries × replicates, each entry's range of ranks (1 = best) over the
    replicates holding ``level`` of them; a rank is 1 + the entries strictly ahead."""
    if replicates.ndim != 2 or not replicates.shape[0]:
        return []
    entries, draws = replicates.shape
    # Per replicate (a row here), the entries best first; equal figures share the rank
    # of the first of them (1 + those strictly ahead).
    behind = np.ascontiguousarray(-replicates.T)
    order = np.argsort(behind, axis=1)
    ordered = np.take_along_axis(behind, order, axis=1)
    first = np.ones(ordered.shape, dtype=bool)
    np.not_equal(ordered[:, 1:], ordered[:, :-1], out=first[:, 1:])
    ranks = np.where(first, np.arange(entries), 0)
    np.maximum.accumulate(ranks, axis=1, out=ranks)
    # How often each entry took each rank, then the ranks at the two tails' positions.
    counts = np.bincount((order * entries + ranks).ravel(), minlength=entries * entries)
    taken = counts.reshape(entries, entries).cumsum(axis=1)
    tail = (1 - level) / 2
    low = (taken <= int(np.floor(tail * (draws - 1)))).sum(axis=1) + 1
    high = (taken <= int(np.ceil((1 - tail) * (draws - 1)))).sum(axis=1) + 1
    return [(int(a), int(b)) for a, b in zip(low, high, strict=True)]


def probability_greater(a: np.ndarray, b: np.ndarray) -> float:
    """P(A > B) over paired replicates, ties counting half."""
    if not len(a) or len(a) != len(b):
        raise ValueError("paired replicates of the same length")
    return float(((a > b).sum() + 0.5 * (a == b).sum()) / len(a))


def overlapping(ranges: Sequence[tuple[int, int]], i: int, j: int) -> bool:
    """Whether entries ``i`` and ``j`` have rank ranges that overlap (a tie)."""
    (a_low, a_high), (b_low, b_high) = ranges[i], ranges[j]
    return a_low <= b_high and b_low <= a_high


def to_bytes(replicates: np.ndarray) -> bytes:
    return np.asarray(replicates, dtype="<f4").tobytes()


def from_bytes(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype="<f4")
