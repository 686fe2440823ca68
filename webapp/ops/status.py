"""The status page (``/status/``) and ``GET /api/status/``, for those holding
``liveness.view_processbeat`` (operators): each worker and beat with its last heartbeat
(``webapp.liveness``), each queue's depth and its oldest waiting item (read from the
database's waiting work, not from the broker), and the media folder's free space.

It reads every app, so it sits above them; the apps' pages ask ``webapp.liveness``."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Min, Q
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from config.variables import RUN_QUEUE_NAMES
from webapp.competitions.models import Familiarity
from webapp.core.media_space import media_space
from webapp.core.visibility import Perm
from webapp.integrity.models import RunCheck
from webapp.liveness.models import ProcessBeat
from webapp.liveness.services import GRADING_QUEUE, is_alive, no_worker_note, worker_label
from webapp.results.models import Experiment, Run, Upload
from webapp.runs.models import AgentRun, RunHost
from webapp.work import heartbeat_interval, stale_before

RUN_QUEUE_CPU, RUN_QUEUE_GPU = RUN_QUEUE_NAMES


def can_see_status(user) -> bool:
    return user.is_authenticated and user.has_perm(Perm.SEE_STATUS)


def _waiting() -> list[tuple[str, str, object, str]]:
    """Each kind of waiting work: (queue, what, queryset, the field saying since when)."""
    cpu = Q(launch__gpus=0) | Q(launch__isnull=True)
    return [
        (GRADING_QUEUE, "uploads to read", Upload.objects.filter(status=Upload.Status.QUEUED),
         "created_at"),
        (GRADING_QUEUE, "runs to grade", Run.objects.filter(status=Run.Status.QUEUED),
         "updated_at"),
        (GRADING_QUEUE, "integrity checks", RunCheck.objects.filter(due_since__isnull=False),
         "due_since"),
        (GRADING_QUEUE, "figure refreshes",
         Experiment.objects.filter(figures_due_since__isnull=False), "figures_due_since"),
        (GRADING_QUEUE, "familiarity measurements",
         Familiarity.objects.filter(status=Familiarity.Status.QUEUED), "created_at"),
        (RUN_QUEUE_CPU, "agent runs",
         AgentRun.objects.filter(cpu, status=AgentRun.Status.QUEUED), "created_at"),
        (RUN_QUEUE_GPU, "agent runs",
         AgentRun.objects.filter(~cpu, status=AgentRun.Status.QUEUED), "created_at"),
    ]  # fmt: skip


def _iso(moment: dt.datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def queues(now: dt.datetime | None = None) -> list[dict]:
    """Each queue: the work waiting on it (by kind), its depth, its oldest waiting item and
    whether a worker answers it."""
    now = now or timezone.now()
    by_queue: dict[str, dict] = {}
    for queue, what, rows, since in _waiting():
        got = rows.aggregate(depth=Count("pk"), oldest=Min(since))
        entry = by_queue.setdefault(
            queue, {"queue": queue, "depth": 0, "oldest_waiting_at": None, "kinds": []}
        )
        entry["kinds"].append({"what": what, "depth": got["depth"], "oldest_at": got["oldest"]})
        entry["depth"] += got["depth"]
        if got["oldest"] and (
            entry["oldest_waiting_at"] is None or got["oldest"] < entry["oldest_waiting_at"]
        ):
            entry["oldest_waiting_at"] = got["oldest"]
    result = []
    for entry in by_queue.values():
        oldest = entry["oldest_waiting_at"]
        entry["oldest_waiting_s"] = (now - oldest).total_seconds() if oldest else None
        entry["oldest_waiting_at"] = _iso(oldest)
        for kind in entry["kinds"]:
            kind["oldest_at"] = _iso(kind["oldest_at"])
        entry["worker"] = worker_label(entry["queue"])
        entry["no_worker"] = no_worker_note(entry["queue"], now)
        result.append(entry)
    return result


def processes(now: dt.datetime | None = None) -> list[dict]:
    """Each worker and beat that has beaten: alive (beat within ``MLEBOARD_STALE_AFTER_S``),
    stopped (a clean stop; a run host marked down) or silent (died, or cut off). Runs
    workers are their run hosts."""
    now = now or timezone.now()
    since = now - (timezone.now() - stale_before())
    rows = []
    for row in ProcessBeat.objects.all():
        state = "stopped" if row.stopped_at else ("alive" if is_alive(row, since) else "silent")
        rows.append(
            {
                "name": row.name,
                "kind": row.kind,
                "hostname": row.hostname,
                "pid": row.pid,
                "queues": row.queues,
                "state": state,
                "started_at": _iso(row.started_at),
                "last_heartbeat_at": _iso(row.beat_at),
                "seconds_since_heartbeat": max(0.0, (now - row.beat_at).total_seconds()),
                "stopped_at": _iso(row.stopped_at),
            }
        )
    # A runs worker says it is alive through its run host's heartbeat (/hosts/ has more).
    for host in RunHost.objects.exclude(heartbeat_at=None):
        alive = host.state == RunHost.State.UP and host.heartbeat_at >= since
        rows.append(
            {
                "name": f"runs@{host.name}",
                "kind": "worker",
                "hostname": host.name,
                "pid": None,
                "queues": host.queues or [],
                "state": "alive" if alive else ("silent" if host.state == "up" else "stopped"),
                "started_at": _iso(host.started_at),
                "last_heartbeat_at": _iso(host.heartbeat_at),
                "seconds_since_heartbeat": max(0.0, (now - host.heartbeat_at).total_seconds()),
                "stopped_at": _iso(host.down_since),
            }
        )
    return rows


def status(now: dt.datetime | None = None) -> dict:
    now = now or timezone.now()
    return {
        "now": now.isoformat(),
        "stale_after_s": settings.MLEBOARD_STALE_AFTER_S,
        "heartbeat_every_s": heartbeat_interval(),
        "processes": processes(now),
        "queues": queues(now),
        "media": media_space().as_dict(),
    }


def status_page(request):
    """The status page: signed in without the permission, 403; anonymous, the login page."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not can_see_status(request.user):
        raise PermissionDenied("You do not have the permission to see the site's status.")
    return render(
        request,
        "status.html",
        {"status": status(), "api_url": reverse("api-status")},
    )


class SeesStatus(BasePermission):
    """Holds ``liveness.view_processbeat`` (the operators' group does); the staff flag
    alone does not."""

    message = "you do not have the permission to see the site's status"

    def has_permission(self, request, view) -> bool:
        return can_see_status(request.user)


class _Process(serializers.Serializer):
    name = serializers.CharField(help_text="the worker's node name (grading@host) or beat@host")
    kind = serializers.ChoiceField(choices=ProcessBeat.Kind.choices)
    hostname = serializers.CharField()
    pid = serializers.IntegerField(allow_null=True, help_text="null for a run host's worker")
    queues = serializers.ListField(child=serializers.CharField())
    state = serializers.ChoiceField(
        choices=["alive", "silent", "stopped"],
        help_text="alive: beat within stale_after_s; silent: died or cut off; stopped: "
        "a clean stop",
    )
    started_at = serializers.DateTimeField()
    last_heartbeat_at = serializers.DateTimeField()
    seconds_since_heartbeat = serializers.FloatField()
    stopped_at = serializers.DateTimeField(allow_null=True)


class _Kind(serializers.Serializer):
    what = serializers.CharField()
    depth = serializers.IntegerField()
    oldest_at = serializers.DateTimeField(allow_null=True)


class _Queue(serializers.Serializer):
    queue = serializers.CharField()
    depth = serializers.IntegerField(help_text="items waiting for a worker of this queue")
    oldest_waiting_at = serializers.DateTimeField(allow_null=True)
    oldest_waiting_s = serializers.FloatField(allow_null=True)
    kinds = _Kind(many=True)
    worker = serializers.CharField()
    no_worker = serializers.CharField(
        help_text='"no grading worker has answered for N s" when that is so; empty while '
        "one answers"
    )


class _Media(serializers.Serializer):
    total_bytes = serializers.IntegerField()
    free_bytes = serializers.IntegerField()
    min_free_bytes = serializers.IntegerField(help_text="MLEBOARD_MEDIA_MIN_FREE_BYTES")
    low = serializers.BooleanField(help_text="below the margin: uploads are refused (507)")


class StatusOutput(serializers.Serializer):
    now = serializers.DateTimeField()
    stale_after_s = serializers.IntegerField()
    heartbeat_every_s = serializers.FloatField()
    processes = _Process(many=True)
    queues = _Queue(many=True)
    media = _Media()


class StatusApi(APIView):
    """Who is alive (each worker and beat, by its own heartbeat), each queue's depth and
    oldest waiting item, and the media folder's free space (``liveness.view_processbeat``)."""

    permission_classes = [SeesStatus]

    @extend_schema(responses=StatusOutput, operation_id="status_retrieve")
    def get(self, request):
        return Response(status())
