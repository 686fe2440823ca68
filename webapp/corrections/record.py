"""What goes into the corrections log, and when: one entry per event, appended in the
event's own transaction, with the subject's published Any Medal % (per split) before it.

Events come from ``webapp.core.changes.corrected`` (re-grade, disqualification and its
reversal, a catalogue change) and from the rows the curation writes (known issues,
retired competitions, leaderboard versions, published figures). "After" is never guessed:
it stays pending until a refresh stores the figures with nothing more due
(``webapp.core.changes.figures_stored``); published figures are filled at once."""

from __future__ import annotations

import logging

from django.db import DEFAULT_DB_ALIAS
from django.db.models import QuerySet
from django.db.models.signals import post_delete, post_save, pre_save
from django.utils import timezone

from webapp.competitions.models import Competition, KnownIssue, PrivateLeaderboard
from webapp.core import changes
from webapp.core.visibility import Perm, has_perm
from webapp.corrections.models import Correction, CorrectionFigures, Kind, Role, Subject
from webapp.results.models import Experiment, GradeReport, Run
from webapp.results.selectors import any_medal_by_split

log = logging.getLogger(__name__)

# Runs still to be graded: an experiment with any is not settled, its figures will move.
_GRADING = (Run.Status.QUEUED, Run.Status.RUNNING)


# ---------------------------------------------------------------- figures and roles


def any_medal(experiment: Experiment, *, clean: bool = False) -> dict:
    """split -> {"mean", "standard_error"}: the Any Medal % the site publishes for the
    experiment now (from its stored figures, else as published)."""
    return {
        split: {"mean": value["mean"], "standard_error": value["standard_error"]}
        for split, value in any_medal_by_split(experiment, clean=clean).items()
    }


def _published(figures: dict | None) -> dict:
    """Published figures (``Experiment.published_figures``) as the log stores figures."""
    return {
        split: {"mean": value["mean"], "standard_error": value.get("standard_error") or 0.0}
        for split, value in (figures or {}).items()
        if isinstance(value, dict) and value.get("mean") is not None
    }


def role_of(user, experiment: Experiment | None = None, *, reviewing: bool = False) -> str:
    """The role someone acted in, as the log shows it to those who may not see names."""
    if user is None or not getattr(user, "is_authenticated", False):
        return Role.SYSTEM
    if reviewing and has_perm(user, Perm.REVIEW):
        return Role.REVIEWER
    if experiment is not None and experiment.owner_id == user.pk:
        return Role.SUBMITTER
    return Role.OPERATOR


# ---------------------------------------------------------------- appending


def append(
    kind: str,
    *,
    reason: str,
    role: str,
    experiment: Experiment | None = None,
    competition: Competition | None = None,
    subject_name: str = "",
    by=None,
    figures=(),
    public_when_gone: bool = False,
    using: str = DEFAULT_DB_ALIAS,
) -> Correction:
    """Append one entry. ``figures``: (experiment, clean, before, after) for each
    experiment whose figures the event moves; ``after`` None: filled by the refresh."""
    if experiment is not None:
        subject = Subject.EXPERIMENT
        subject_name = subject_name or experiment.name
    elif competition is not None:
        subject = Subject.COMPETITION
        subject_name = subject_name or competition.slug
    elif public_when_gone:
        subject = Subject.EXPERIMENT
    else:
        subject = Subject.CATALOGUE
        subject_name = subject_name or "the catalogue"
    entry = Correction.objects.using(using).create(
        kind=kind,
        subject_type=subject,
        experiment=experiment,
        competition=competition,
        subject_name=subject_name[:300],
        reason=reason,
        role=role,
        by=by if role != Role.SYSTEM else None,
        public_when_gone=public_when_gone,
    )
    now = timezone.now()
    CorrectionFigures.objects.using(using).bulk_create(
        CorrectionFigures(
            correction=entry,
            experiment=moved if moved.pk else None,
            experiment_name=moved.name[:300],
            clean=clean,
            before=before,
            after=after,
            filled_at=None if after is None else now,
        )
        for moved, clean, before, after in figures
    )
    changes.log_changed(using)
    return entry


def _experiments_on(competition_id: int, using: str) -> list[Experiment]:
    """The experiments whose figures count ``competition_id`` (current reports on it)."""
    ids = (
        GradeReport.objects.using(using)
        .filter(competition_id=competition_id, is_current=True)
        .values("experiment_id")
    )
    return list(Experiment.objects.using(using).filter(pk__in=ids).select_related("aggregate"))


def _moved(experiments, *, clean: bool) -> list[tuple]:
    return [(e, clean, any_medal(e, clean=clean), None) for e in experiments]


# ---------------------------------------------------------------- what the apps send


def _corrected(sender, kind, experiment_id, competition_id, reason, by, detail, using, **kw):
    experiment = (
        Experiment.objects.using(using).select_related("aggregate").filter(pk=experiment_id).first()
        if experiment_id
        else None
    )
    if kind == Kind.CATALOGUE:
        append(kind, reason=_catalogue_reason(detail), role=Role.SYSTEM, using=using)
        return
    if experiment is None:
        log.warning("corrections: %s of experiment %s, which is gone", kind, experiment_id)
        return
    reviewing = kind in (Kind.DISQUALIFIED, Kind.REINSTATED)
    if reviewing and detail.get("run_id"):
        run = Run.objects.using(using).select_related("competition").get(pk=detail["run_id"])
        said = reason or "the decision was withdrawn; the run is back in review"
        reason = f"{run.competition.slug}, seed {run.seed}: {said}"
    append(
        kind,
        reason=reason,
        role=role_of(by, experiment, reviewing=reviewing),
        by=by,
        experiment=experiment,
        figures=_moved([experiment], clean=False),
        using=using,
    )


def _catalogue_reason(detail: dict) -> str:
    parts = []
    for key, words in (
        ("added", "competitions added"),
        ("updated", "competitions' facts changed"),
    ):
        names = detail.get(key) or []
        if names:
            shown = ", ".join(names[:10]) + (
                f" and {len(names) - 10} more" if len(names) > 10 else ""
            )
            parts.append(f"{words}: {shown}")
    for key, words in (
        ("issues_added", "known issues added"),
        ("issues_removed", "grader quirks removed"),
    ):
        if detail.get(key):
            parts.append(f"{words}: {detail[key]}")
    if detail.get("splits_changed"):
        parts.append("split membership changed")
    return "The catalogue was loaded again. " + ("; ".join(parts) or "Nothing listed changed") + "."


def _figures_stored(sender, experiment_id, using=DEFAULT_DB_ALIAS, **kw) -> None:
    """Fill in the pending "after" of this experiment's entries, once it is settled."""
    pending = CorrectionFigures._base_manager.using(using).filter(
        experiment_id=experiment_id, filled_at__isnull=True
    )
    if not pending.exists():
        return
    experiment = (
        Experiment.objects.using(using).select_related("aggregate").filter(pk=experiment_id).first()
    )
    if experiment is None or experiment.figures_due_since is not None:
        return  # due again meanwhile: the next refresh fills them
    if Run.objects.using(using).filter(experiment_id=experiment_id, status__in=_GRADING).exists():
        return  # a re-grade still under way
    now = timezone.now()
    for clean in (False, True):
        pending.filter(clean=clean).update(after=any_medal(experiment, clean=clean), filled_at=now)
    changes.log_changed(using)


# ---------------------------------------------------------------- rows the curation writes


def _using(kwargs) -> str:
    return kwargs.get("using") or DEFAULT_DB_ALIAS


def _issue_reason(issue: KnownIssue, verb: str) -> str:
    note = issue.note.strip()
    if note and note[-1] not in ".!?)":
        note += "."
    said = f"Known issue {verb} ({issue.get_kind_display().lower()}): {note}"
    if not issue.excludes_from_clean_subset:
        return said
    if verb == "added":
        return f"{said} The competition is left out of the clean subset."
    return f"{said} The competition counts in the clean subset again, unless another issue leaves it out."


def _issue_saved(sender, instance: KnownIssue, created=False, raw=False, **kwargs) -> None:
    # The catalogue's and the grader's issues come with a catalogue load (logged as one).
    if raw or not created or instance.source != KnownIssue.Source.ADMIN:
        return
    using = _using(kwargs)
    moved = (
        _experiments_on(instance.competition_id, using)
        if instance.excludes_from_clean_subset
        else []
    )
    append(
        Kind.ISSUE_ADDED,
        reason=_issue_reason(instance, "added"),
        role=Role.OPERATOR,
        competition=instance.competition,
        figures=_moved(moved, clean=True),
        using=using,
    )


def _issue_deleted(sender, instance: KnownIssue, origin=None, **kwargs) -> None:
    # Deleted for itself (not with its competition), and not a grader quirk the grader
    # dropped (a catalogue load's).
    if not (
        isinstance(origin, KnownIssue)
        or (isinstance(origin, QuerySet) and origin.model is KnownIssue)
    ):
        return
    if instance.source == KnownIssue.Source.GRADER:
        return
    using = _using(kwargs)
    competition = Competition.objects.using(using).filter(pk=instance.competition_id).first()
    if competition is None:
        return
    moved = _experiments_on(competition.pk, using) if instance.excludes_from_clean_subset else []
    append(
        Kind.ISSUE_REMOVED,
        reason=_issue_reason(instance, "removed"),
        role=Role.OPERATOR,
        competition=competition,
        figures=_moved(moved, clean=True),
        using=using,
    )


def _leaderboard_saved(sender, instance: PrivateLeaderboard, created=False, raw=False, **kwargs):
    if raw or not instance.is_current:
        return
    fields = kwargs.get("update_fields")
    if created:
        if instance.version <= 1:
            return  # a competition's first leaderboard: nothing is corrected
        what = f"Version {instance.version} of the private leaderboard is current"
    elif fields is not None and "is_current" in fields:
        what = f"Version {instance.version} of the private leaderboard is current again"
    else:
        return
    teams = f" ({instance.n_teams} teams{', synthetic' if instance.is_synthetic else ''})"
    source = f", from {instance.source_name}" if instance.source_name else ""
    append(
        Kind.LEADERBOARD,
        reason=f"{what}{teams}{source}. Runs graded from now on are ranked on it; reports "
        "graded before keep their medals until re-graded.",
        role=Role.SYSTEM if instance.is_synthetic else Role.OPERATOR,
        competition=instance.competition,
        using=_using(kwargs),
    )


def _competition_before(sender, instance: Competition, raw=False, **kwargs) -> None:
    instance._corrections_retired = (
        None
        if raw or instance.pk is None
        else Competition.objects.using(_using(kwargs))
        .filter(pk=instance.pk)
        .values_list("retired", flat=True)
        .first()
    )


def _competition_saved(sender, instance: Competition, created=False, raw=False, **kwargs) -> None:
    before = getattr(instance, "_corrections_retired", None)
    if raw or created or before is None or before == instance.retired:
        return
    using = _using(kwargs)
    reason = (
        "Retired: its runs no longer count in the figures."
        if instance.retired
        else "Restored: its runs count in the figures again."
    )
    append(
        Kind.CATALOGUE,
        reason=reason,
        role=Role.OPERATOR,
        competition=instance,
        figures=_moved(_experiments_on(instance.pk, using), clean=False),
        using=using,
    )


def _experiment_before(sender, instance: Experiment, raw=False, **kwargs) -> None:
    instance._corrections_published = None
    if raw or instance.pk is None or instance.source != Experiment.Source.REPORTED:
        return
    instance._corrections_published = (
        Experiment.objects.using(_using(kwargs))
        .filter(pk=instance.pk)
        .values_list("published_figures", flat=True)
        .first()
    )


def _experiment_saved(sender, instance: Experiment, created=False, raw=False, **kwargs) -> None:
    before = _published(getattr(instance, "_corrections_published", None))
    after = _published(instance.published_figures)
    if raw or created or not before or before == after:
        return
    append(
        Kind.PUBLISHED,
        reason="The figures MLE-bench publishes for this entry changed; they replace the "
        "figures shown before.",
        role=Role.OPERATOR,
        experiment=instance,
        figures=[(instance, False, before, after)],
        using=_using(kwargs),
    )


def _experiment_deleted(sender, instance: Experiment, **kwargs) -> None:
    before = _published(instance.published_figures)
    if not before or instance.source != Experiment.Source.REPORTED:
        return
    gone = Experiment(name=instance.name)  # no row to link to any more
    append(
        Kind.PUBLISHED,
        reason="No longer in MLE-bench's published leaderboard: its published figures "
        "are withdrawn.",
        role=Role.OPERATOR,
        subject_name=instance.name,
        figures=[(gone, False, before, {})],
        public_when_gone=instance.is_published,
        using=_using(kwargs),
    )


def connect() -> None:
    changes.corrected.connect(_corrected, dispatch_uid="corrections-corrected")
    changes.figures_stored.connect(_figures_stored, dispatch_uid="corrections-figures-stored")
    for signal, handler, model in (
        (post_save, _issue_saved, KnownIssue),
        (post_delete, _issue_deleted, KnownIssue),
        (post_save, _leaderboard_saved, PrivateLeaderboard),
        (pre_save, _competition_before, Competition),
        (post_save, _competition_saved, Competition),
        (pre_save, _experiment_before, Experiment),
        (post_save, _experiment_saved, Experiment),
        (post_delete, _experiment_deleted, Experiment),
    ):
        signal.connect(handler, sender=model, dispatch_uid=f"corrections-{handler.__name__}")
