"""What the apps above results add to its work and pages, registered in their
``AppConfig.ready``, so that results imports none of them (``tests/test_import_arrows.py``).
``webapp.runs`` registers here the snapshots an upload's run folders carry (stored with the
upload, graded with each run's final submission) and the experiment page's score-over-hours
curve."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GradedAlong:
    """Something graded with a run's final submission: ``grade(run)`` while the run is
    graded (outside the transaction), ``store(grades)`` in the transaction that stores
    the run's report."""

    grade: Callable[[Any], Any]
    store: Callable[[Any], None]


_GRADED_ALONG: list[GradedAlong] = []
# Called as ``hook(experiment, runs, created)`` when an upload's runs are created: the run
# folders' contents (``benchmark`` ``ExperimentContents.runs``) and the ``results.Run`` rows.
_RUNS_UPLOADED: list[Callable[[Any, list, list], None]] = []
# The experiment page's figures from other apps, by context name: ``make(experiment)``,
# None when there is nothing to draw.
_EXPERIMENT_FIGURES: dict[str, Callable[[Any], Any]] = {}
# What the leaderboard shows beside an entry's provenance: ``verdicts(ids)`` gives, per
# experiment id, ``{"text", "agrees", "reproduction_id"}`` (a reproduction's verdict).
_ENTRY_VERDICTS: list[Callable[[list[int]], dict[int, dict]]] = []


def graded_along(item: GradedAlong) -> None:
    if item not in _GRADED_ALONG:
        _GRADED_ALONG.append(item)


def on_runs_uploaded(hook: Callable[[Any, list, list], None]) -> None:
    if hook not in _RUNS_UPLOADED:
        _RUNS_UPLOADED.append(hook)


def experiment_figure(name: str, make: Callable[[Any], Any]) -> None:
    _EXPERIMENT_FIGURES[name] = make


def entry_verdicts(source: Callable[[list[int]], dict[int, dict]]) -> None:
    if source not in _ENTRY_VERDICTS:
        _ENTRY_VERDICTS.append(source)


def verdicts_for(ids: list[int]) -> dict[int, dict]:
    """The registered verdicts of the leaderboard's entries ``ids``, by id."""
    out: dict[int, dict] = {}
    for source in _ENTRY_VERDICTS:
        out.update(source(ids))
    return out


def grade_along(run) -> list[tuple[GradedAlong, Any]]:
    """Each registered item's grades of ``run``, to be stored with ``store_along``."""
    return [(item, item.grade(run)) for item in _GRADED_ALONG]


def store_along(graded: list[tuple[GradedAlong, Any]]) -> None:
    for item, grades in graded:
        item.store(grades)


def runs_uploaded(experiment, runs: list, created: list) -> None:
    for hook in _RUNS_UPLOADED:
        hook(experiment, runs, created)


def experiment_figures(experiment) -> dict[str, Any]:
    """The registered figures of the experiment page (each name in the context)."""
    return {name: make(experiment) for name, make in _EXPERIMENT_FIGURES.items()}
