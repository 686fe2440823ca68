"""The leaderboard's rank ranges: each ranked entry's range of ranks over the bootstrap's
replicates of Any Medal % on the ranking split (the same competition draws for every
entry of a split), entries whose ranges overlap shown as tied. A request reads the stored
vectors and ranks them; nothing is resampled here. The rule: docs/statistics.md.
"""

import numpy as np

from benchmark.intervals import LEVEL, REPLICATES, from_bytes, rank_ranges, to_bytes
from webapp.results.grading.replicates import METHOD, figure_replicates, interval_of
from webapp.results.selectors import stored_replicates


def add_rank_ranges(entries: list[dict], split: str, *, clean: bool) -> None:
    """Set on every entry ``rank_low`` and ``rank_high`` (the 95% range of its rank, None
    when unranked), ``tied`` (its range overlaps another ranked entry's) and ``interval``
    (the 95% interval of its Any Medal % on ``split``, None without a figure there)."""
    for entry in entries:
        entry.update(rank_low=None, rank_high=None, tied=False, interval=None)
    ranked = [e for e in entries if e["rank"] is not None and e["splits"].get(split)]
    if not ranked:
        return
    stored = stored_replicates(
        (e["id"] for e in ranked if e["figures_source"] == "reports"), split, clean=clean
    )
    vectors = []
    for entry in ranked:
        value = entry["splits"][split]
        own = stored.get(entry["id"]) if entry["figures_source"] == "reports" else None
        if own is not None and value.get("interval_lower") is not None:
            # Stored with the figures, from these replicates: not computed again.
            vectors.append(own)
            entry["interval"] = {
                "split": split,
                "lower": value["interval_lower"],
                "upper": value["interval_upper"],
                "level": LEVEL,
                "replicates": REPLICATES,
                "method": METHOD,
            }
            continue
        replicates, how = figure_replicates(entry["id"], split, value, own)
        vectors.append(to_bytes(replicates))
        entry["interval"] = {"split": split, **interval_of(replicates, how)}
    # One buffer for every entry's replicates: decoded at once, not row by row.
    matrix = from_bytes(b"".join(bytes(v) for v in vectors)).reshape(len(ranked), -1)
    ranges = np.array(rank_ranges(matrix))
    low, high = ranges[:, 0], ranges[:, 1]
    overlaps = (low[:, None] <= high[None, :]) & (low[None, :] <= high[:, None])
    tied = overlaps.sum(axis=1) > 1
    for i, entry in enumerate(ranked):
        entry["rank_low"], entry["rank_high"] = int(low[i]), int(high[i])
        entry["tied"] = bool(tied[i])


def rank_text(entry: dict) -> str:
    """The rank as the table shows it: the range ("1–3") when the resamples do not tell
    the entry apart from others, the one rank when they do; "—" when unranked."""
    if entry["rank"] is None:
        return "—"
    low, high = entry.get("rank_low"), entry.get("rank_high")
    if low is None:
        return str(entry["rank"])
    return str(low) if low == high else f"{low}–{high}"


def rank_title(entry: dict) -> str:
    """The rank cell's tooltip: what the range means for this entry."""
    if entry["rank"] is None:
        return "not ranked: no figure on the ranking split"
    low, high = entry.get("rank_low"), entry.get("rank_high")
    if low is None:
        return f"rank {entry['rank']} by the mean"
    said = f"rank {entry['rank']} by the mean; in 95% of the bootstrap's resamples ranked "
    said += f"{low}" if low == high else f"{low} to {high}"
    if entry.get("tied"):
        said += ": tied with the entries whose ranges overlap"
    return said
