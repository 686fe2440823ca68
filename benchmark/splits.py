"""The splits: which competitions a figure is computed over. Declared here once, with their
labels and their order; every page, API, form and command takes them from here.

MLE-bench groups its 75 competitions by complexity (``low``, which it also calls Lite,
``medium``, ``high``) and as a whole (``all``, its file ``split75.txt``), and keeps 7 more
for development (``dev``). mleboard adds its 4 small ``demo`` competitions. An experiment
that covers no split completely gets figures over exactly the competitions it ran,
under the name ``ran``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Split:
    slug: str
    label: str
    description: str
    published: bool = False  # a column of MLE-bench's published leaderboard


SPLITS: tuple[Split, ...] = (
    Split("low", "Low (Lite)", "the 22 competitions of low complexity (MLE-bench Lite)", True),
    Split("medium", "Medium", "the 38 competitions of medium complexity", True),
    Split("high", "High", "the 15 competitions of high complexity", True),
    Split("all", "All", "MLE-bench's 75 competitions", True),
    Split("dev", "Dev", "MLE-bench's 7 development competitions"),
    Split("demo", "Demo", "mleboard's 4 demo competitions, built from scikit-learn datasets"),
)
RAN = Split("ran", "Competitions run", "exactly the competitions the experiment ran")

# The catalogue's splits, in display order: a competition belongs to one or more of these.
SPLIT_SLUGS: tuple[str, ...] = tuple(s.slug for s in SPLITS)
# The columns of MLE-bench's leaderboard, and of ours.
PUBLISHED_SPLITS: tuple[str, ...] = tuple(s.slug for s in SPLITS if s.published)
# What an experiment's figures are keyed by.
FIGURE_SPLITS: tuple[str, ...] = (*SPLIT_SLUGS, RAN.slug)
# Other names accepted wherever a split is asked for.
SPLIT_ALIASES = {"lite": "low", "split75": "all"}
# MLE-bench's files under experiments/splits/ (stem -> our slug); its all.txt is not ours.
MLEBENCH_SPLIT_FILES = {
    "low": "low",
    "medium": "medium",
    "high": "high",
    "split75": "all",
    "dev": "dev",
}
# The split shown when none is asked for; then the others, in display order. Leaderboard
# ties on one split are broken by the next.
DEFAULT_SPLIT = "all"
SPLIT_PREFERENCE: tuple[str, ...] = (
    DEFAULT_SPLIT,
    *(slug for slug in FIGURE_SPLITS if slug != DEFAULT_SPLIT),
)

_LABELS = {s.slug: s.label for s in (*SPLITS, RAN)}


def split_label(slug: str) -> str:
    """The label people read for ``slug`` (the slug itself for a name we do not know)."""
    return _LABELS.get(slug, slug)


def split_choices(slugs: Iterable[str] = FIGURE_SPLITS) -> list[tuple[str, str]]:
    """``(slug, label)`` pairs in display order, for the known slugs among ``slugs``."""
    wanted = set(slugs)
    return [(slug, _LABELS[slug]) for slug in FIGURE_SPLITS if slug in wanted]


def in_display_order(slugs: Iterable[str]) -> list[str]:
    """The known slugs among ``slugs``, in display order."""
    return [slug for slug, _ in split_choices(slugs)]


def default_split(available: Iterable[str]) -> str:
    """The split to show when none is asked for: the first of SPLIT_PREFERENCE among
    ``available``; "" when there is none."""
    wanted = set(available)
    return next((slug for slug in SPLIT_PREFERENCE if slug in wanted), "")
