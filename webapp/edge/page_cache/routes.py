"""Which addresses the page cache serves, the query parameters each one reads, and what
its pages depend on: the one declaration ``webapp.edge.page_cache`` keys and scopes by.

A key is canonical: parameters an address does not read are dropped (from the request the
view sees too), each keeps its last value, they are sorted, and the API's ``Accept`` is
reduced to "JSON" (anything else is not cached: the API's own 406). So ``?a=1&b=2``,
``?b=2&a=1&utm_source=x`` and a browser's ``Accept`` make one entry, and a
split is keyed by its slug (``?split=lite`` is ``?split=low``). A page depends on the
catalogue and either on the *listings* (pages made of every public experiment) or on one
experiment (its page, its reports and their API twins).
"""

import re
from dataclasses import dataclass

from django.http import QueryDict

from benchmark.splits import UnknownSplit, resolve_split

# What webapp.results.pages.leaderboard.LeaderboardFilters reads (its tri-state flags included).
_LEADERBOARD = (
    "scaffold",
    "model",
    "provenance",
    "source",
    "class",
    "cost",
    "since",
    "until",
    "clean",
    "integrity",
    "descriptions",
    "split",
    "internet_access",
    "test_feedback",
    "source_available",
    "known_leakage",
)
# LeaderboardFilters' date bounds: results on or after ``since``, on or before ``until``.
_DATES = ("since", "until")
_COMPETITION_FILTERS = ("category", "complexity", "split", "q")
# Django REST framework's format override (only ``json`` renders; others are a 404).
_API = ("format",)

LISTINGS = "listings"
EXPERIMENT = "experiment"
# The corrections log: replaced with each entry (``webapp.core.changes.log_grew``); what
# it names follows the catalogue's version (publishing, names), as every page.
CHANGES = "changes"
# What signed-in pages depend on beyond a visitor's (``webapp.edge.viewer_pages``): every
# private experiment (for those who see them all), and one owner's.
PRIVATE = "private"


def owner_scope(owner_id: int) -> str:
    return f"owner:{owner_id}"


@dataclass(frozen=True)
class Route:
    pattern: re.Pattern
    parameters: frozenset[str]
    # LISTINGS, or EXPERIMENT: the pattern's group ``experiment`` names the experiment.
    scope: str  # LISTINGS, EXPERIMENT or CHANGES
    api: bool
    # Parameters that bound results by date (``since``: on or after, ``until``: on or
    # before): two values between the same two results' dates give the same page, so the
    # key holds one of them (``webapp.edge.page_cache.canonical_dates``).
    dates: frozenset[str] = frozenset()


def _route(
    pattern: str, parameters: tuple[str, ...] = (), scope: str = LISTINGS, dates=()
) -> Route:
    api = pattern.startswith("/api/")
    return Route(
        re.compile("^" + pattern + "$"),
        frozenset(parameters + (_API if api else ())),
        scope,
        api,
        frozenset(dates),
    )


_EXPERIMENT_ID = r"(?P<experiment>\d+)"

ROUTES: tuple[Route, ...] = (
    _route("/", _LEADERBOARD + ("format",), dates=_DATES),  # format: the json/csv exports
    _route("/competitions/", _COMPETITION_FILTERS),
    _route("/competitions/[^/]+/"),
    _route(
        f"/experiments/{_EXPERIMENT_ID}/",
        ("clean", "split", "seeds", "familiarity_model"),
        EXPERIMENT,
    ),
    _route(f"/experiments/{_EXPERIMENT_ID}/reports\\.(?:json|csv)", (), EXPERIMENT),
    # with: "Compare with…" from an experiment's page (the picker, that one ticked).
    _route("/compare/", ("experiments", "split", "clean", "familiarity_model", "with")),
    _route("/changes/", ("page", "kind"), CHANGES),
    _route("/api/changes/", ("page", "kind"), CHANGES),
    _route("/api/leaderboard/", _LEADERBOARD, dates=_DATES),
    _route("/api/compare/", ("experiments", "split", "clean")),
    _route("/api/competitions/", _COMPETITION_FILTERS),
    _route("/api/competitions/[^/]+/"),
    _route("/api/experiments/"),
    _route(f"/api/experiments/{_EXPERIMENT_ID}/", (), EXPERIMENT),
    _route(f"/api/experiments/{_EXPERIMENT_ID}/reports/", (), EXPERIMENT),
)

# Accept values that ask for JSON or anything: the API's one representation.
_JSON_TYPES = {"*/*", "application/*", "application/json"}


@dataclass(frozen=True)
class Match:
    route: Route
    # The scope's name beyond the catalogue: "listings" or "experiment:<id>".
    scope: str


def match(path: str) -> Match | None:
    for route in ROUTES:
        found = route.pattern.match(path)
        if found:
            if route.scope == EXPERIMENT:
                return Match(route, f"{EXPERIMENT}:{int(found['experiment'])}")
            return Match(route, route.scope)
    return None


def accepts_json(accept: str) -> bool:
    """Whether an ``Accept`` header is satisfied by JSON (no header: anything is)."""
    if not accept.strip():
        return True
    types = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    return bool(types & _JSON_TYPES)


def _split_slug(name: str) -> str:
    try:
        return resolve_split(name, figures=True)
    except UnknownSplit:
        return name  # the page's 400, never stored


# Parameters whose values have several names: keyed by the value they name, so that
# ?split=lite, ?split=Lite and ?split=low.txt are the page of ?split=low.
_ONE_NAME = {"split": _split_slug}


def canonical_query(route: Route, query: QueryDict) -> QueryDict:
    """The parameters ``route`` reads, each with its last value (by its one name, for
    those in _ONE_NAME), in name order."""
    canonical = QueryDict(mutable=True)
    for name in sorted(set(query) & route.parameters):
        value = query[name]
        canonical[name] = _ONE_NAME[name](value) if name in _ONE_NAME else value
    canonical._mutable = False
    return canonical
