"""The sweeper: the database is the source of truth, and this drives it to an end.

Every ``MLEBOARD_REAPER_INTERVAL_S`` seconds (Celery beat), for uploads being read, runs
being graded, agent runs and familiarity measurements (the ``webapp.work`` rows):

0. a run host whose heartbeat went silent for ``MLEBOARD_STALE_AFTER_S`` is marked down
   and its claims on CPUs, memory and GPUs are released; its runs are handed over
   (``webapp.runs.hosts``): queued again for another host while they have attempts left
   (``MLEBOARD_MAX_ATTEMPTS``), ended after that; claims left by dead processes on living
   hosts are released;
1. a claim whose heartbeat went silent for ``MLEBOARD_STALE_AFTER_S`` is taken back: the
   work waits again, or, once ``MLEBOARD_MAX_ATTEMPTS`` claims are spent, fails with a
   reason; an agent run on a host that is alive is ended (its process died: a day-long
   run is not started twice on its own host);
2. work never sent, or sent and never picked up, is sent again (with backoff, so a long
   queue is not flooded; a duplicate is harmless, the claim lets one task through);
3. uploads whose runs have all ended are finished, figures and integrity checks that
   stayed due are sent again, and spool files of uploads cut off mid-request are removed;
4. resumable uploads past their deadline end (``resumable.partial_uploads_sweep``): those
   with no bytes for ``MLEBOARD_UPLOAD_PARTIAL_TTL_S`` expire, those whose assembly went
   silent are assembled again.

It never fails work that merely waits: with no worker running, work waits, and pages say
"waiting for a worker".
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from webapp.competitions.models import Familiarity
from webapp.results.models import Experiment, Run, Upload
from webapp.runs.models import AgentRun
from webapp.work import resend_due, send, stale_before

log = logging.getLogger(__name__)

BATCH = 1000  # rows of one kind handled per sweep


@dataclass
class SweepReport:
    taken_back: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    uploads_finished: int = 0
    figures_sent: int = 0
    checks_sent: int = 0
    spool_removed: int = 0
    partial_uploads: dict[str, int] = field(default_factory=dict)
    hosts_down: list[str] = field(default_factory=list)
    runs_requeued: int = 0
    claims_released: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def sweep() -> SweepReport:
    report = SweepReport()
    _hosts_down(report)
    _take_back_uploads(report)
    _take_back_runs(report)
    _take_back_familiarity(report)
    _end_silent_agent_runs(report)
    _send_due(report)
    _finish_uploads(report)
    _resend_figures(report)
    _resend_checks(report)
    _remove_spool(report)
    _sweep_partial_uploads(report)
    if any(
        (
            report.taken_back,
            report.failed,
            report.sent,
            report.figures_sent,
            report.hosts_down,
            report.claims_released,
            any(report.partial_uploads.values()),
        )
    ):
        log.info("sweep: %s", report.as_dict())
    return report


def _silent() -> Q:
    cutoff = stale_before()
    return Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, claimed_at__lt=cutoff)


def _take_back(model, running: str, waiting: str, scope: Q, why_failed: str, report) -> list:
    """Silent claims of ``model`` back to ``waiting``; past the budget, failed. Returns the
    ids failed. Each update is conditional on the claim seen, so a worker that comes back
    to life at the same moment either finishes first or finds its claim gone."""
    name = model.__name__.lower()
    failed = []
    rows = model.objects.filter(scope, _silent(), status=running).values_list(
        "pk", "claimed_by", "attempts"
    )[:BATCH]
    for pk, token, attempts in rows:
        same_claim = model.objects.filter(pk=pk, status=running, claimed_by=token).filter(_silent())
        if attempts >= settings.MLEBOARD_MAX_ATTEMPTS:
            reason = why_failed.format(attempts=attempts)
            if same_claim.update(status=model.Status.FAILED, error=reason, claimed_by=""):
                failed.append(pk)
        elif same_claim.update(status=waiting, claimed_by="", dispatched_at=None):
            report.taken_back[name] = report.taken_back.get(name, 0) + 1
    if failed:
        report.failed[name] = report.failed.get(name, 0) + len(failed)
    return failed


def _take_back_uploads(report: SweepReport) -> None:
    _take_back(
        Upload,
        Upload.Status.PROCESSING,
        Upload.Status.QUEUED,
        Q(experiment__isnull=True),
        "reading the upload was interrupted {attempts} times (its worker stopped answering); "
        "send the archive again to retry",
        report,
    )


def _take_back_runs(report: SweepReport) -> None:
    from webapp.results.grading import run_ended

    for run_id in _take_back(
        Run,
        Run.Status.RUNNING,
        Run.Status.QUEUED,
        Q(),
        "grading was interrupted {attempts} times (its worker stopped answering); re-grade "
        "to try again",
        report,
    ):
        run_ended(run_id)


def _take_back_familiarity(report: SweepReport) -> None:
    _take_back(
        Familiarity,
        Familiarity.Status.RUNNING,
        Familiarity.Status.QUEUED,
        Q(),
        "measuring familiarity was interrupted {attempts} times (its worker stopped "
        "answering); ask again with manage.py compute_familiarity",
        report,
    )


def _hosts_down(report: SweepReport) -> None:
    from webapp.runs.hosts import mark_silent_hosts_down, release_orphan_claims

    result = mark_silent_hosts_down()
    report.hosts_down = result.hosts_down
    report.runs_requeued = result.requeued
    report.claims_released = result.released + release_orphan_claims()
    if result.ended:
        report.failed["agentrun"] = report.failed.get("agentrun", 0) + result.ended


def _end_silent_agent_runs(report: SweepReport) -> None:
    from webapp.runs.hosts import suspect_before
    from webapp.runs.services import agent_run_end_silent

    cutoff = stale_before()
    ended = sum(
        agent_run_end_silent(pk, cutoff)
        for pk in AgentRun.objects.filter(status=AgentRun.Status.RUNNING, heartbeat_at__lt=cutoff)
        # A run on a host that has itself gone quiet is the host-down hand-over's.
        .exclude(host_claim__host__heartbeat_at__lt=suspect_before())
        .values_list("pk", flat=True)[:BATCH]
    )
    if ended:
        report.failed["agentrun"] = report.failed.get("agentrun", 0) + ended


def _send_due(report: SweepReport) -> None:
    from webapp.competitions.tasks import measure_familiarity_task
    from webapp.results.tasks import grade_run_task, process_upload_task
    from webapp.runs.tasks import execute_agent_run_task

    now = timezone.now()
    earliest = stale_before()
    for model, waiting, task, scope in (
        (Upload, Upload.Status.QUEUED, process_upload_task, Q()),
        (Run, Run.Status.QUEUED, grade_run_task, Q()),
        (AgentRun, AgentRun.Status.QUEUED, execute_agent_run_task, Q(cancel_requested=False)),
        (Familiarity, Familiarity.Status.QUEUED, measure_familiarity_task, Q()),
    ):
        rows = (
            model.objects.filter(scope, status=waiting)
            .filter(Q(dispatched_at__isnull=True) | Q(dispatched_at__lt=earliest))
            .order_by("pk")
            .values_list("pk", "dispatched_at", "dispatch_count")[:BATCH]
        )
        sent = 0
        for pk, dispatched_at, count in rows:
            if dispatched_at is not None and now - dispatched_at < resend_due(count):
                continue
            if not send(task, pk, model):
                break  # the broker is down: the next sweep tries again
            sent += 1
        if sent:
            report.sent[model.__name__.lower()] = sent


def _finish_uploads(report: SweepReport) -> None:
    from webapp.results.uploads import upload_finish_if_done

    for experiment_id in Upload.objects.filter(
        status=Upload.Status.PROCESSING, experiment__isnull=False
    ).values_list("experiment_id", flat=True)[:BATCH]:
        report.uploads_finished += upload_finish_if_done(experiment_id)


def _resend_figures(report: SweepReport) -> None:
    from webapp.results.tasks import refresh_experiment_aggregate_task

    for pk in Experiment.objects.filter(figures_due_since__lt=stale_before()).values_list(
        "pk", flat=True
    )[:BATCH]:
        if not send(refresh_experiment_aggregate_task, pk):
            break
        report.figures_sent += 1


def _resend_checks(report: SweepReport) -> None:
    from webapp.integrity.services import sweep_checks

    report.checks_sent = sweep_checks()


def _remove_spool(report: SweepReport) -> None:
    """Partial copies of archives whose request died before they were stored: Django's
    (``FILE_UPLOAD_TEMP_DIR``) and our own checksumming spool (``upload-*``), once idle."""
    older = time.time() - max(settings.MLEBOARD_STALE_AFTER_S, 300)
    candidates = [
        *Path(settings.MEDIA_ROOT).glob("upload-*"),
        *Path(settings.FILE_UPLOAD_TEMP_DIR).glob("*.upload*"),
    ]
    for path in candidates:
        try:
            if path.is_file() and path.stat().st_mtime < older:
                path.unlink()
                report.spool_removed += 1
        except OSError:  # gone meanwhile
            continue


def _sweep_partial_uploads(report: SweepReport) -> None:
    from webapp.results.resumable import partial_uploads_sweep

    report.partial_uploads = asdict(partial_uploads_sweep(BATCH))
