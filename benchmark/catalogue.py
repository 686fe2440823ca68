"""The catalogue of competitions mleboard knows: MLE-bench's 75 + 7 dev, plus our 4 demos.

The facts live in ``benchmark/data/competitions.yaml`` (MLE-bench's competitions) and
``benchmark/data/demo.yaml`` (mleboard's own demo competitions built from scikit-learn
datasets). They are facts only: ids, names, metrics, directions, columns, splits, Kaggle's
final submission deadline. The descriptions are not ours to ship; they arrive with an import
of an MLE-bench checkout.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from pathlib import Path

from benchmark.splits import SPLIT_SLUGS, resolve_split

DATA_DIR = Path(__file__).resolve().parent / "data"
CATALOGUE_FILE = DATA_DIR / "competitions.yaml"
DEMO_FILE = DATA_DIR / "demo.yaml"

COMPLEXITIES = ("low", "medium", "high", "dev")
# What ``deadline_source`` says when the competition's own description states its deadline.
FROM_DESCRIPTION = "description"

_REQUIRED = (
    "id",
    "name",
    "category",
    "complexity",
    "metric",
    "lower_is_better",
    "awards_medals",
    "splits",
    "competition_type",
    "id_column",
    "target_columns",
    "answers",
    "sample_submission",
)


class CatalogueError(ValueError):
    """The catalogue data file is malformed (a bug in the shipped data, not a user error)."""


class UnknownCompetition(LookupError):
    """A competition id that is not in the catalogue."""


@dataclass(frozen=True)
class CompetitionFacts:
    """What mleboard knows about one competition, independent of any data download."""

    id: str
    name: str
    category: str
    complexity: str  # low | medium | high | dev (the demos are low)
    metric: str
    lower_is_better: bool
    awards_medals: bool
    splits: tuple[str, ...]  # subset of SPLIT_SLUGS
    competition_type: str  # MLE-bench's `simple` | `code`
    id_column: str
    target_columns: tuple[str, ...]
    answers: str  # relative to an MLE-bench data dir
    sample_submission: str  # relative to an MLE-bench data dir
    known_issues: tuple[str, ...] = ()
    # Extras beyond the shared interface, present for a few competitions only.
    metric_k: int | None = None  # the k of MAP@k-style metrics
    gold_submission: str | None = None  # MLE-bench's gold submission, when it ships one
    # Kaggle's final submission deadline (a UTC day); None for the demos, which never ran
    # on Kaggle. ``deadline_source``: FROM_DESCRIPTION, or where the date comes from.
    deadline: dt.date | None = None
    deadline_source: str = ""

    @property
    def is_demo(self) -> bool:
        """True for mleboard's own demo competitions (not MLE-bench competitions)."""
        return "demo" in self.splits


def _facts_from_entry(entry: dict, source: Path) -> CompetitionFacts:
    missing = [key for key in _REQUIRED if key not in entry]
    if missing:
        raise CatalogueError(f"{source.name}: entry {entry.get('id')!r} lacks {', '.join(missing)}")
    splits = tuple(str(s) for s in entry["splits"])
    unknown = [s for s in splits if s not in SPLIT_SLUGS]
    if unknown:
        raise CatalogueError(f"{source.name}: {entry['id']} has unknown splits {unknown}")
    if entry["complexity"] not in COMPLEXITIES:
        raise CatalogueError(f"{source.name}: {entry['id']} has complexity {entry['complexity']!r}")
    if not isinstance(entry["lower_is_better"], bool):
        raise CatalogueError(f"{source.name}: {entry['id']} lower_is_better must be true/false")
    metric_k = entry.get("metric_k")
    deadline, deadline_source = _deadline(entry, source)
    return CompetitionFacts(
        id=str(entry["id"]),
        name=str(entry["name"]),
        category=str(entry["category"]),
        complexity=str(entry["complexity"]),
        metric=str(entry["metric"]),
        lower_is_better=entry["lower_is_better"],
        awards_medals=bool(entry["awards_medals"]),
        splits=splits,
        competition_type=str(entry["competition_type"]),
        id_column=str(entry["id_column"]),
        target_columns=tuple(str(c) for c in entry["target_columns"]),
        answers=str(entry["answers"]),
        sample_submission=str(entry["sample_submission"]),
        known_issues=tuple(str(i) for i in entry.get("known_issues") or ()),
        metric_k=int(metric_k) if metric_k is not None else None,
        gold_submission=entry.get("gold_submission"),
        deadline=deadline,
        deadline_source=deadline_source,
    )


def _deadline(entry: dict, source: Path) -> tuple[dt.date | None, str]:
    """The entry's deadline (YAML reads ``2019-11-12`` as a date; a quoted ISO text is
    accepted too) and where it comes from: the description unless ``deadline_source``
    names another source."""
    raw = entry.get("deadline")
    if raw is None:
        if entry.get("deadline_source"):
            raise CatalogueError(f"{source.name}: {entry['id']} has a deadline_source, no deadline")
        return None, ""
    if isinstance(raw, dt.datetime) or not isinstance(raw, dt.date | str):
        raise CatalogueError(f"{source.name}: {entry['id']} deadline must be a date (YYYY-MM-DD)")
    try:
        deadline = raw if isinstance(raw, dt.date) else dt.date.fromisoformat(raw)
    except ValueError:
        raise CatalogueError(
            f"{source.name}: {entry['id']} deadline {raw!r} is not a date (YYYY-MM-DD)"
        ) from None
    return deadline, str(entry.get("deadline_source") or FROM_DESCRIPTION).strip()


def _read_entries(path: Path) -> list[CompetitionFacts]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open(encoding="utf-8") as handle:
        entries = yaml.load(handle, Loader=loader)
    if not isinstance(entries, list):
        raise CatalogueError(f"{path.name}: expected a list of competitions")
    return [_facts_from_entry(entry, path) for entry in entries]


@functools.lru_cache(maxsize=2)
def _cached_catalogue(include_demo: bool) -> tuple[CompetitionFacts, ...]:
    facts = _read_entries(CATALOGUE_FILE)
    if include_demo:
        facts += _read_entries(DEMO_FILE)
    ids = [f.id for f in facts]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise CatalogueError(f"duplicate competition ids: {duplicates}")
    return tuple(facts)


def load_catalogue(include_demo: bool = False) -> dict[str, CompetitionFacts]:
    """Every competition by id, in catalogue order (the files are read once, then cached).

    The 82 MLE-bench competitions (75 in split `all` + 7 in `dev`); with
    ``include_demo`` also mleboard's 4 demo competitions (split `demo`). A fresh dict is
    returned each call, so callers may modify it; the facts themselves are immutable.
    """
    return {facts.id: facts for facts in _cached_catalogue(include_demo)}


def competitions_in_split(split: str) -> list[CompetitionFacts]:
    """The competitions of ``split`` (any name ``benchmark.splits.resolve_split`` takes),
    in catalogue order. Raises UnknownSplit for any other name.
    """
    name = resolve_split(split)
    catalogue = _cached_catalogue(include_demo=True)
    return [facts for facts in catalogue if name in facts.splits]


def get_competition(competition_id: str, include_demo: bool = True) -> CompetitionFacts:
    """The facts of one competition; raises UnknownCompetition if it is not catalogued."""
    for facts in _cached_catalogue(include_demo):
        if facts.id == competition_id:
            return facts
    raise UnknownCompetition(f"{competition_id!r} is not in mleboard's catalogue")
