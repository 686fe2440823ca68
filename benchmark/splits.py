"""The splits: which competitions a figure is computed over, declared here once with their
labels and order; every page, API, form and command takes them from here.

MLE-bench's complexity splits (``low`` = Lite, ``medium``, ``high``), ``all`` (its
``split75.txt``), ``systemcard`` (the 30 OpenAI's system cards report) and ``dev``; mleboard's
``demo``; and ``ran``, exactly the competitions an experiment ran. ``resolve_split`` reads
any name a person gives (a slug, an alias, MLE-bench's file name, with or without ``.txt``)
and raises ``UnknownSplit`` naming the valid ones. ``spaceship-titanic.txt`` is one
competition, not a split, here. docs/api.md ("Splits") lists them all.
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
    # Not a column of MLE-bench's leaderboard: shown where an experiment has figures on it.
    Split("systemcard", "System card", "the 30 competitions OpenAI's system cards report"),
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
# MLE-bench's files under experiments/splits/ (stem -> our slug). Its spaceship-titanic.txt
# (one competition, to try an agent on) is no split here: see SINGLE_COMPETITION_FILES.
MLEBENCH_SPLIT_FILES = {
    "low": "low",
    "medium": "medium",
    "high": "high",
    "split75": "all",
    "systemcard": "systemcard",
    "dev": "dev",
}
# MLE-bench's split files that list one competition: asked for as a split, the refusal
# points to the competition.
SINGLE_COMPETITION_FILES = ("spaceship-titanic",)
# The split shown when none is asked for; then the others, in display order. Leaderboard
# ties on one split are broken by the next.
DEFAULT_SPLIT = "all"
SPLIT_PREFERENCE: tuple[str, ...] = (
    DEFAULT_SPLIT,
    *(slug for slug in FIGURE_SPLITS if slug != DEFAULT_SPLIT),
)

_LABELS = {s.slug: s.label for s in (*SPLITS, RAN)}
# Every name resolve_split takes, and the slug it names.
_NAMES = {
    **{slug: slug for slug in SPLIT_SLUGS},
    **SPLIT_ALIASES,
    **MLEBENCH_SPLIT_FILES,
}
# The names to offer when one is refused: the slugs, then the other names.
VALID_SPLIT_NAMES: tuple[str, ...] = (
    *SPLIT_SLUGS,
    *(name for name in _NAMES if name not in SPLIT_SLUGS),
)
# Where figures are asked for (an experiment's page, compare), also RAN.
VALID_FIGURE_SPLIT_NAMES: tuple[str, ...] = (*VALID_SPLIT_NAMES, RAN.slug)


class UnknownSplit(ValueError):
    """A split name resolve_split does not take; the message names every one it takes
    (``valid``)."""

    def __init__(self, name: str, valid: tuple[str, ...] = VALID_SPLIT_NAMES):
        self.name = name
        self.valid = valid
        slugs = ", ".join(n for n in valid if _NAMES.get(n, n) == n)
        aliases = ", ".join(f"{n} = {_NAMES[n]}" for n in valid if _NAMES.get(n, n) != n)
        shown = name if len(name) <= 60 else name[:60] + "…"
        message = (
            f"unknown split {shown!r}: choose one of {slugs} (or {aliases}; MLE-bench's "
            "file names may end in .txt)"
        )
        stem = _stem(name)
        if stem in SINGLE_COMPETITION_FILES:
            message += (
                f". MLE-bench's {stem}.txt lists the one competition {stem}: it is a "
                "competition here, not a split"
            )
        super().__init__(message)


def split_names_text() -> str:
    """The names a ``--split`` option takes, for its help: "low (= lite), medium, ..."."""
    aliases: dict[str, list[str]] = {}
    for name, slug in _NAMES.items():
        if name != slug:
            aliases.setdefault(slug, []).append(name)
    return ", ".join(
        slug + (f" (= {', '.join(aliases[slug])})" if slug in aliases else "")
        for slug in SPLIT_SLUGS
    )


def _stem(name: str) -> str:
    return name.strip().lower().removesuffix(".txt")


def resolve_split(name: str, *, figures: bool = False) -> str:
    """The slug ``name`` names: a slug, an alias or MLE-bench's split file name (with or
    without ``.txt``), in any case, spaces around it aside; with ``figures`` also RAN
    (figures are kept under it, the catalogue has no such split). Raises UnknownSplit
    otherwise."""
    stem = _stem(name)
    if figures and stem == RAN.slug:
        return RAN.slug
    slug = _NAMES.get(stem)
    if slug is None:
        raise UnknownSplit(name, VALID_FIGURE_SPLIT_NAMES if figures else VALID_SPLIT_NAMES)
    return slug


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
