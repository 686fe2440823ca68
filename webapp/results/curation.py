"""Figures follow the curation: when an admin adds, changes or removes a known issue,
retires or restores a competition, a new leaderboard version becomes current, or the
catalogue moves a competition into or out of a split (a new split such as
``systemcard``), every experiment with reports on that competition has its figures (the
clean subset's included) recomputed."""

from django.db.models.signals import post_delete, post_save, pre_save

from webapp.competitions.models import Competition, KnownIssue, PrivateLeaderboard
from webapp.competitions.signals import split_members_changed
from webapp.results.grading.aggregates import figures_due
from webapp.results.models import GradeReport


def _experiments_on(*competition_ids: int) -> list[int]:
    return list(
        GradeReport.objects.filter(competition_id__in=competition_ids, is_current=True)
        .values_list("experiment_id", flat=True)
        .distinct()
    )


def _split_members_changed(sender, competition_ids, **kwargs) -> None:
    figures_due(_experiments_on(*competition_ids))


def _known_issue_changed(sender, instance: KnownIssue, **kwargs) -> None:
    figures_due(_experiments_on(instance.competition_id))


def _remember_retired(sender, instance: Competition, **kwargs) -> None:
    instance._retired_before = (
        Competition.objects.filter(pk=instance.pk).values_list("retired", flat=True).first()
        if instance.pk
        else None
    )


def _competition_saved(sender, instance: Competition, created: bool, **kwargs) -> None:
    if not created and getattr(instance, "_retired_before", instance.retired) != instance.retired:
        figures_due(_experiments_on(instance.pk))


def _leaderboard_saved(sender, instance: PrivateLeaderboard, **kwargs) -> None:
    if instance.is_current:
        figures_due(_experiments_on(instance.competition_id))


def connect() -> None:
    post_save.connect(_known_issue_changed, sender=KnownIssue, dispatch_uid="curation-issue-save")
    post_delete.connect(
        _known_issue_changed, sender=KnownIssue, dispatch_uid="curation-issue-delete"
    )
    pre_save.connect(_remember_retired, sender=Competition, dispatch_uid="curation-retired")
    post_save.connect(_competition_saved, sender=Competition, dispatch_uid="curation-competition")
    post_save.connect(
        _leaderboard_saved, sender=PrivateLeaderboard, dispatch_uid="curation-leaderboard"
    )
    split_members_changed.connect(_split_members_changed, dispatch_uid="curation-splits")
