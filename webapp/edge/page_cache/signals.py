"""What changes the pages: saved or deleted rows they show replace the versions (after
commit), each as narrowly as it can."""

import logging

from django.db import DEFAULT_DB_ALIAS

from webapp.edge.page_cache.versions import changed, experiments_changed, private_changed

log = logging.getLogger(__name__)


def _using(kwargs) -> str:
    return kwargs.get("using") or DEFAULT_DB_ALIAS


def _catalogue_change(sender, **kwargs) -> None:
    changed(using=_using(kwargs))


def _named_change(sender, instance, created=False, **kwargs) -> None:
    """An agent, scaffold or model: a new one is on no public page yet."""
    if not created:
        changed(using=_using(kwargs))


def _experiment_before_save(sender, instance, raw=False, **kwargs) -> None:
    if instance.pk is None or raw:
        instance._page_cache_was_public = False
        return
    instance._page_cache_was_public = (
        sender.objects.using(_using(kwargs)).filter(pk=instance.pk, is_published=True).exists()
    )


def _experiment_change(sender, instance, **kwargs) -> None:
    """An experiment's own row (its name, its twin, publishing): it shows on the listings
    and, through its twin, on another experiment's page; rare, so every page. A private
    experiment that stays private changes no public page, only its owner's."""
    if instance.is_published or getattr(instance, "_page_cache_was_public", False):
        changed(using=_using(kwargs))
    else:
        private_changed([instance.owner_id], using=_using(kwargs))


def _report_change(sender, instance, **kwargs) -> None:
    experiments_changed([instance.experiment_id], using=_using(kwargs))


def _snapshot_change(sender, instance, **kwargs) -> None:
    from webapp.results.models import Run

    if instance.run_id is not None:
        experiments_changed(
            Run.objects.using(_using(kwargs))
            .filter(pk=instance.run_id)
            .values_list("experiment_id", flat=True),
            using=_using(kwargs),
        )


def connect() -> None:
    """Saved or deleted rows the public pages show mark them changed (after commit), each
    as narrowly as it can: a report, figures or a snapshot only its experiment's pages and
    the listings (nothing when the experiment is private)."""
    from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save

    from webapp.competitions.models import Competition, KnownIssue, PrivateLeaderboard, Split
    from webapp.results.models import (
        Agent,
        Experiment,
        ExperimentAggregate,
        GradeReport,
        LanguageModel,
        Scaffold,
    )
    from webapp.runs.models import SubmissionSnapshot

    handlers = [
        (Experiment, _experiment_change),
        (ExperimentAggregate, _report_change),
        (GradeReport, _report_change),
        # The experiment page's Any Medal % against time.
        (SubmissionSnapshot, _snapshot_change),
        (Agent, _named_change),
        (Scaffold, _named_change),
        (LanguageModel, _named_change),
    ] + [
        (model, _catalogue_change) for model in (Competition, Split, KnownIssue, PrivateLeaderboard)
    ]
    for model, handler in handlers:
        for signal in (post_save, post_delete):
            signal.connect(
                handler,
                sender=model,
                dispatch_uid=f"page-cache-{signal is post_save}-{model._meta.label}",
            )
    pre_save.connect(
        _experiment_before_save, sender=Experiment, dispatch_uid="page-cache-experiment-pre"
    )
    m2m_changed.connect(
        _catalogue_change, sender=Competition.splits.through, dispatch_uid="page-cache-splits"
    )
