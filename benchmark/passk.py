"""pass@k over seeds with the unbiased estimator (Chen et al. 2021).

With n runs of a competition of which c succeeded, the chance that at least one of k
runs drawn without replacement succeeds is 1 - C(n-c, k) / C(n, k).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate (0-1) for ``c`` successes among ``n`` runs, 1 <= k <= n."""
    if not 0 <= c <= n:
        raise ValueError(f"successes must be between 0 and n={n}, got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and n={n}, got {k}")
    # Exact integers until the one division, so k = n gives exactly 0 or 1.
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_curve(successes: Sequence[int], n: int) -> list[dict]:
    """pass@k for k = 1..n, as a percentage averaged over competitions.

    ``successes`` holds, per competition, how many of its ``n`` runs succeeded. Returns
    ``[{"k": k, "percentage": p}, ...]``; an empty list when there are no competitions
    or no runs.
    """
    if n < 1 or not successes:
        return []
    curve = []
    for k in range(1, n + 1):
        mean = math.fsum(pass_at_k(n, c, k) for c in successes) / len(successes)
        curve.append({"k": k, "percentage": 100.0 * mean})
    return curve
