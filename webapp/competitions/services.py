"""Writes for competitions and leaderboards. Each service is one transaction: an import
either lands whole or leaves what was stored untouched."""

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.db.models import Max
from django.db.models.signals import post_save

from benchmark.catalogue import CompetitionFacts, load_catalogue
from benchmark.leaderboard import LeaderboardTable, read_leaderboard
from benchmark.splits import SPLITS
from webapp.competitions.models import (
    Competition,
    KnownIssue,
    LeaderboardEntry,
    PrivateLeaderboard,
    Split,
)
from webapp.competitions.signals import split_members_changed


@dataclass
class CatalogueSyncResult:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)


def _known_issue_kind(note: str) -> str:
    text = note.lower()
    if "leak" in text:
        return KnownIssue.Kind.LEAKAGE
    if "crowded" in text:
        return KnownIssue.Kind.CROWDED
    if "split" in text:
        return KnownIssue.Kind.BROKEN_SPLIT
    return KnownIssue.Kind.DATA


@transaction.atomic
def catalogue_sync(include_demo: bool = True) -> CatalogueSyncResult:
    """Create or update a Competition for every catalogue entry (facts only; descriptions
    and admin edits such as ``retired`` are left alone), its splits, the catalogue's known
    issues and the grading quirks our grader reproduces.

    A handful of queries whatever the catalogue's size (it runs at every start and in most
    tests): rows are compared in memory and written in bulk. Bulk writes send no model
    signals, so what those would do is done here: the public pages are marked changed,
    and a known issue added sends ``post_save`` (the curation makes figures due)."""
    import graders
    from webapp.core import changes

    for order, split in enumerate(SPLITS):
        Split.objects.update_or_create(
            slug=split.slug, defaults={"name": split.label, "order": order}
        )
    splits = {s.slug: s.pk for s in Split.objects.all()}
    catalogue = load_catalogue(include_demo=include_demo)
    result = CatalogueSyncResult()

    existing = {c.slug: c for c in Competition.objects.filter(slug__in=list(catalogue))}
    to_create, to_update = [], []
    for facts in catalogue.values():
        values = _fact_fields(facts)
        competition = existing.get(facts.id)
        if competition is None:
            to_create.append(Competition(slug=facts.id, **values))
            result.created.append(facts.id)
            continue
        result.updated.append(facts.id)
        if any(getattr(competition, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(competition, name, value)
            to_update.append(competition)
    Competition.objects.bulk_create(to_create)
    if to_update:
        Competition.objects.bulk_update(to_update, list(values))  # every entry's fields
    ids = dict(Competition.objects.filter(slug__in=list(catalogue)).values_list("slug", "pk"))
    changed = bool(to_create or to_update)

    # Splits: the catalogue's, exactly (other splits are not the catalogue's to keep).
    through = Competition.splits.through
    wanted = {
        (ids[facts.id], splits[s])
        for facts in catalogue.values()
        for s in facts.splits
        if s in splits
    }
    held = set(
        through.objects.filter(competition_id__in=ids.values()).values_list(
            "competition_id", "split_id"
        )
    )
    for competition_id, split_id in held - wanted:
        through.objects.filter(competition_id=competition_id, split_id=split_id).delete()
    through.objects.bulk_create(
        [through(competition_id=c, split_id=s) for c, s in sorted(wanted - held)]
    )
    changed = changed or held != wanted
    moved = {competition_id for competition_id, _ in held ^ wanted}
    if moved:
        split_members_changed.send(None, competition_ids=sorted(moved))

    # Known issues: the catalogue's notes (added, never removed: an admin may have edited
    # them) and the grader's quirks (kept equal to the grader's list).
    issues = set(
        KnownIssue.objects.filter(
            competition_id__in=ids.values(),
            source__in=(KnownIssue.Source.CATALOGUE, KnownIssue.Source.GRADER),
        ).values_list("competition_id", "source", "note", "pk")
    )
    have = {(c, source, note) for c, source, note, _ in issues}
    wanted_issues: dict[tuple, dict] = {}  # (competition, source, note) -> other fields
    graded = set()  # competitions whose grader we have: its quirks are theirs exactly
    for facts in catalogue.values():
        competition_id = ids[facts.id]
        for note in facts.known_issues:
            wanted_issues.setdefault(
                (competition_id, KnownIssue.Source.CATALOGUE, note),
                {"kind": _known_issue_kind(note)},
            )
        try:
            quirks = graders.grader_for(facts.id).quirks
        except graders.UnknownCompetition:
            continue
        graded.add(competition_id)
        for note in quirks:
            wanted_issues.setdefault(
                (competition_id, KnownIssue.Source.GRADER, note),
                {"kind": KnownIssue.Kind.GRADER_QUIRK, "excludes_from_clean_subset": False},
            )
    stale = [
        pk
        for c, source, note, pk in issues
        if source == KnownIssue.Source.GRADER
        and c in graded
        and (c, source, note) not in wanted_issues
    ]
    new_issues = [
        KnownIssue(competition_id=c, source=source, note=note, **fields)
        for (c, source, note), fields in wanted_issues.items()
        if (c, source, note) not in have
    ]
    if stale:
        KnownIssue.objects.filter(pk__in=stale).delete()  # sends post_delete
    created = KnownIssue.objects.bulk_create(new_issues)
    for issue in {i.competition_id: i for i in created}.values():
        post_save.send(KnownIssue, instance=issue, created=True, raw=False, using="default")
    if changed or stale or created:
        changes.catalogue_changed()
        if existing:  # a load that corrects the catalogue, not its first
            changes.correction(
                "catalogue",
                detail={
                    "added": [c.slug for c in to_create],
                    "updated": [c.slug for c in to_update],
                    "issues_added": len(created),
                    "issues_removed": len(stale),
                    "splits_changed": held != wanted,
                },
            )
    return result


def _fact_fields(facts: CompetitionFacts) -> dict:
    return {
        "name": facts.name,
        "category": facts.category,
        "complexity": facts.complexity,
        "metric": facts.metric,
        "lower_is_better": facts.lower_is_better,
        "awards_medals": facts.awards_medals,
        "competition_type": facts.competition_type,
        "id_column": facts.id_column,
        "target_columns": list(facts.target_columns),
        "is_demo": "demo" in facts.splits,
        "deadline": facts.deadline,
        "deadline_source": facts.deadline_source,
    }


def competition_upsert_facts(facts: CompetitionFacts) -> tuple[Competition, bool]:
    return Competition.objects.update_or_create(slug=facts.id, defaults=_fact_fields(facts))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@transaction.atomic
def leaderboard_store(
    competition: Competition,
    data: LeaderboardTable,
    *,
    source_name: str = "",
    sha256: str = "",
    is_synthetic: bool = False,
    note: str = "",
) -> PrivateLeaderboard:
    """Store a parsed leaderboard as the competition's new current version, with its
    thresholds computed once here. The same file (same checksum) imported again is
    recognised and returns the version already stored."""
    if sha256:
        existing = competition.leaderboards.filter(sha256=sha256).first()
        if existing is not None:
            if not existing.is_current:
                competition.leaderboards.filter(is_current=True).update(is_current=False)
                existing.is_current = True
                existing.save(update_fields=["is_current"])
            return existing
    thresholds = data.thresholds()
    version = (competition.leaderboards.aggregate(v=Max("version"))["v"] or 0) + 1
    competition.leaderboards.filter(is_current=True).update(is_current=False)
    board = PrivateLeaderboard.objects.create(
        competition=competition,
        version=version,
        is_current=True,
        source_format=data.source_format,
        source_name=source_name,
        sha256=sha256,
        is_synthetic=is_synthetic,
        n_teams=thresholds.n_teams,
        lower_is_better=thresholds.lower_is_better,
        gold_threshold=_number(thresholds.gold),
        silver_threshold=_number(thresholds.silver),
        bronze_threshold=_number(thresholds.bronze),
        median_threshold=_number(thresholds.median),
        warnings=list(data.warnings),
        note=note,
    )
    entries = []
    for position, score in enumerate(data.scores, start=1):
        i = position - 1
        entries.append(
            LeaderboardEntry(
                leaderboard=board,
                position=position,
                score=None if score != score else float(score),
                team_id=_opt(data.team_ids, i),
                team_name=_opt(data.team_names, i),
                submission_date=_opt(data.submission_dates, i),
            )
        )
    LeaderboardEntry.objects.bulk_create(entries, batch_size=2000)
    return board


def _number(value: float) -> float | None:
    """None for NaN: a medal line that falls on a row without a score has no value (no
    score reaches it, as in MLE-bench where comparisons with NaN are false)."""
    return None if value != value else float(value)


def _opt(values, i: int) -> str:
    if not values or i >= len(values) or values[i] is None:
        return ""
    return str(values[i])


def leaderboard_import_file(
    competition: Competition, path: Path, *, note: str = ""
) -> PrivateLeaderboard:
    """Parse a leaderboard file (MLE-bench or Kaggle CSV) in the catalogue's direction and
    store it. Raises ``benchmark.leaderboard.LeaderboardError`` with a message a person can
    act on (for example a Git-LFS pointer instead of data)."""
    data = read_leaderboard(Path(path), lower_is_better=competition.lower_is_better)
    return leaderboard_store(
        competition, data, source_name=Path(path).name, sha256=file_sha256(path), note=note
    )


@dataclass
class ImportLine:
    competition_id: str
    status: str  # imported | partial | refused | skipped | failed
    text: str


def mlebench_import_competition(outcome) -> ImportLine:
    """Persist what was read of one MLE-bench competition folder, in one transaction:
    the competition's descriptions and its leaderboard land together or not at all."""
    from benchmark.mlebench_checkout import REFUSED, SKIPPED

    if outcome.status in (REFUSED, SKIPPED) or outcome.facts is None:
        return ImportLine(outcome.competition_id, outcome.status, outcome.summary())
    try:
        with transaction.atomic():
            competition, _ = competition_upsert_facts(outcome.facts)
            fields = []
            if outcome.description is not None:
                competition.description = outcome.description
                fields.append("description")
            if outcome.description_obfuscated is not None:
                competition.description_obfuscated = outcome.description_obfuscated
                fields.append("description_obfuscated")
            if fields:
                competition.save(update_fields=[*fields, "updated_at"])
            if outcome.leaderboard is not None:
                leaderboard_store(
                    competition,
                    outcome.leaderboard,
                    source_name="mlebench leaderboard.csv",
                    sha256=_leaderboard_digest(outcome.leaderboard),
                )
    except Exception as exc:  # the transaction rolled back: nothing of it was stored
        return ImportLine(
            outcome.competition_id,
            "failed",
            f"{outcome.competition_id}: failed, nothing stored ({exc})",
        )
    return ImportLine(outcome.competition_id, outcome.status, outcome.summary())


def _leaderboard_digest(data: LeaderboardTable) -> str:
    digest = hashlib.sha256()
    for score, team in zip(data.scores, data.team_ids, strict=False):
        digest.update(f"{score!r},{team}\n".encode())
    return digest.hexdigest()
