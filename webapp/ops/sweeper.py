"""The sweeper: the database is the source of truth, and this drives it to an end.

Every ``MLEBOARD_REAPER_INTERVAL_S`` seconds (Celery beat), for each kind of work declared
in ``webapp.work.declarations``, in this order: run hosts silent for
``MLEBOARD_STALE_AFTER_S`` are marked down and their runs handed over
(``webapp.runs.hosts``), and claims left by dead processes released; claims silent that
long are taken back (waiting again, or failed once ``MLEBOARD_MAX_ATTEMPTS`` are spent; an
agent run on a living host is ended, never started twice there); work never sent or never
picked up is sent again, with backoff; finished uploads end and each kind's own sweep runs
(``Kind.sweep``); spool files of uploads cut off mid-request are removed. It never fails
work that merely waits: pages say "waiting for a worker" (docs/operate.md).
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from webapp.results.models import Experiment, Upload
from webapp.work import Kind, kind_for, kinds, resend_due, retry_or_fail, send, stale_before
from webapp.work.lifecycle import dotted

log = logging.getLogger(__name__)

BATCH = 1000  # rows of one kind handled per sweep


@dataclass
class SweepReport:
    taken_back: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    uploads_finished: int = 0
    # What each kind's own sweep did (figures and checks sent, partial uploads ended).
    swept: dict[str, int | dict] = field(default_factory=dict)
    spool_removed: int = 0
    hosts_down: list[str] = field(default_factory=list)
    runs_requeued: int = 0
    claims_released: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def sweep() -> SweepReport:
    report = SweepReport()
    _hosts_down(report)
    declared = kinds().values()
    for kind in declared:
        if kind.running and kind.task:
            _silent_claims(kind, report)
    for kind in declared:
        if kind.waiting and kind.task and kind.claims:
            _send_due(kind, report)
    _finish_uploads(report)
    for kind in declared:
        if kind.sweep:
            report.swept[kind.name] = _swept(dotted(kind.sweep)(BATCH))
    _remove_spool(report)
    if any(
        (
            report.taken_back,
            report.failed,
            report.sent,
            report.hosts_down,
            report.claims_released,
            any(report.swept.values()),
        )
    ):
        log.info("sweep: %s", report.as_dict())
    return report


def _swept(result) -> int | dict:
    return result if isinstance(result, int) else asdict(result)


def _count(counts: dict[str, int], kind: Kind, n: int = 1) -> None:
    if n:
        counts[kind.name] = counts.get(kind.name, 0) + n


def _silent() -> Q:
    cutoff = stale_before()
    return Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, claimed_at__lt=cutoff)


def _silent_claims(kind: Kind, report: SweepReport) -> None:
    """Claims of ``kind`` whose heartbeat went silent: ended by the kind's ``on_silent``,
    or taken back to waiting, and past the budget failed (``retry_or_fail``). Each move is
    conditional on the claim seen, so a worker that comes back to life at the same moment
    either finishes first or finds its claim gone."""
    scope = kind.silent_scope() if callable(kind.silent_scope) else kind.silent_scope
    rows = kind.model.objects.filter(
        scope, _silent(), **{f"{kind.field}__in": list(kind.running)}
    ).values_list("pk", "claimed_by")[:BATCH]
    if kind.on_silent:
        end = dotted(kind.on_silent)
        _count(report.failed, kind, sum(end(pk, stale_before()) for pk, _ in rows))
        return
    for pk, token in rows:
        outcome = retry_or_fail(kind, pk, token, "silent", where=_silent())
        if outcome == "released":
            _count(report.taken_back, kind)
        elif outcome == "failed":
            _count(report.failed, kind)


def _hosts_down(report: SweepReport) -> None:
    from webapp.runs.hosts import mark_silent_hosts_down, release_orphan_claims

    result = mark_silent_hosts_down()
    report.hosts_down = result.hosts_down
    report.runs_requeued = result.requeued
    report.claims_released = result.released + release_orphan_claims()
    _count(report.failed, kind_for("agent_run"), result.ended)


def _send_due(kind: Kind, report: SweepReport) -> None:
    """Waiting rows never sent, or sent and never picked up, sent again with backoff."""
    now = timezone.now()
    earliest = stale_before()
    rows = (
        kind.model.objects.filter(kind.send_scope, **{f"{kind.field}__in": list(kind.waiting)})
        .filter(Q(dispatched_at__isnull=True) | Q(dispatched_at__lt=earliest))
        .order_by("pk")
        .values_list("pk", "dispatched_at", "dispatch_count")[:BATCH]
    )
    for pk, dispatched_at, count in rows:
        if dispatched_at is not None and now - dispatched_at < resend_due(count):
            continue
        if not send(kind, pk):
            break  # the broker is down: the next sweep tries again
        _count(report.sent, kind)


def _finish_uploads(report: SweepReport) -> None:
    from webapp.results.uploads.services import upload_finish_if_done

    for experiment_id in Upload.objects.filter(
        status=Upload.Status.PROCESSING, experiment__isnull=False
    ).values_list("experiment_id", flat=True)[:BATCH]:
        report.uploads_finished += upload_finish_if_done(experiment_id)


def resend_figures(batch: int = BATCH) -> int:
    """Figures that stayed due past ``MLEBOARD_STALE_AFTER_S`` (their task was lost) are
    sent again; the refresh is idempotent."""

    sent = 0
    for pk in Experiment.objects.filter(figures_due_since__lt=stale_before()).values_list(
        "pk", flat=True
    )[:batch]:
        if not send("figures", pk):
            break
        sent += 1
    return sent


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
