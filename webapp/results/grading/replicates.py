"""The bootstrap behind the headline figures, made when the figures are stored: each
split's Any Medal %, Above Median % and Valid % get a 95% interval from the hierarchical
bootstrap of ``benchmark.intervals`` (competitions, then seeds within each), written into
the figures; Any Medal %'s replicates are stored (``FigureReplicates``) so that the
leaderboard's rank ranges and compare's P(A > B) only read and rank vectors. The rule:
docs/statistics.md.
"""

import numpy as np

from benchmark.aggregate import OUTCOMES
from benchmark.intervals import (
    LEVEL,
    REPLICATES,
    any_medal_replicates,
    competition_resamples,
    from_bytes,
    interval,
    normal_replicates,
    to_bytes,
)
from webapp.results.models import FigureReplicates

# The figures given an interval (MLE-bench's names) -> the count per competition they
# are rates of, in ``benchmark.aggregate``'s ``per_competition`` rows.
HEADLINE = {
    metric: outcome
    for outcome, metric in OUTCOMES
    if outcome in ("any_medal", "above_median", "valid_submission")
}
# The figure ranked and compared, whose replicates are stored.
RANKED = "any_medal_percentage"
METHOD = "hierarchical bootstrap over competitions, then seeds"
# Figures known only as mean ± SEM (published ones): the seeds' variance and a draw of
# competitions' added, independently of the other entries.
NORMAL_METHOD = "normal, from the mean ± SEM and the number of competitions"


def draws_key(split: str, clean: bool) -> str:
    """What the competition draws are keyed by: the split, and whether the clean subset
    (fewer competitions) is drawn from."""
    return f"{split}:clean" if clean else split


def split_replicates(
    result: dict, *, split: str, clean: bool, experiment_id: int
) -> dict[str, np.ndarray]:
    """figure -> replicates for one split's stored figures (``benchmark.aggregate``'s
    result); {} when they have no per-competition counts. Competitions are taken in
    order of id, so every experiment of the split lines up with the same draws."""
    rows = sorted(result.get("per_competition") or (), key=lambda row: row["competition_id"])
    if not rows:
        return {}
    resamples = competition_resamples(len(rows), split=draws_key(split, clean))
    runs = [row["runs"] for row in rows]
    # The seeds are drawn again per experiment, split and subset (the same each time).
    key = f"{experiment_id}:{draws_key(split, clean)}"
    return {
        figure: any_medal_replicates([row[count] for row in rows], runs, resamples, key=key)
        for figure, count in HEADLINE.items()
        if all(count in row for row in rows)
    }


def bootstrap_figures(figures: dict, *, clean: bool, experiment_id: int) -> dict[str, bytes]:
    """Adds to each split of ``figures`` (``figures_for``'s) its ``bootstrap``: the
    interval of each headline figure. Returns split -> Any Medal %'s replicates, as
    stored."""
    stored = {}
    for split, result in figures.get("splits", {}).items():
        replicates = split_replicates(result, split=split, clean=clean, experiment_id=experiment_id)
        if not replicates:
            continue
        result["bootstrap"] = {
            "method": METHOD,
            "replicates": REPLICATES,
            "level": LEVEL,
            "intervals": {
                figure: dict(zip(("lower", "upper"), interval(values), strict=True))
                for figure, values in replicates.items()
            },
        }
        if RANKED in replicates:
            stored[split] = to_bytes(replicates[RANKED])
    return stored


def replicates_store(experiment_id: int, by_subset: dict[bool, dict[str, bytes]]) -> None:
    """Replace the experiment's stored replicates: ``by_subset`` is clean -> split ->
    Any Medal %'s replicates."""
    FigureReplicates.objects.filter(experiment_id=experiment_id).delete()
    FigureReplicates.objects.bulk_create(
        FigureReplicates(
            experiment_id=experiment_id, split=split, clean=clean, metric=RANKED, values=values
        )
        for clean, by_split in by_subset.items()
        for split, values in by_split.items()
    )


def split_size(split: str) -> int:
    """How many competitions a catalogue split has (what a published figure is over)."""
    from benchmark.catalogue import competitions_in_split

    return len(competitions_in_split(split))


def figure_replicates(
    experiment_id: int, split: str, value: dict, stored: bytes | None
) -> tuple[np.ndarray, str]:
    """An experiment's Any Medal % replicates on ``split`` and how they were made: the
    stored bootstrap's (``"bootstrap"``), else drawn from its mean ± SEM (``"normal"``:
    published figures, which have no per-competition counts, and figures whose
    replicates are being recomputed)."""
    if stored is not None:
        return from_bytes(bytes(stored)), "bootstrap"
    n_competitions = value.get("n_competitions") or split_size(split)
    drawn = normal_replicates(
        value["mean"],
        value.get("standard_error") or 0.0,
        n_competitions,
        key=f"{experiment_id}:{split}",
    )
    return drawn, "normal"


def interval_of(replicates: np.ndarray, how: str) -> dict:
    """What a page and the API say of an interval: its ends, level, replicates, method."""
    lower, upper = interval(replicates)
    return {
        "lower": lower,
        "upper": upper,
        "level": LEVEL,
        "replicates": len(replicates),
        "method": METHOD if how == "bootstrap" else NORMAL_METHOD,
    }
