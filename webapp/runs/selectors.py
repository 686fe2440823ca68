"""Reads for launches and agent runs: who sees them, their status, their logs, and the
time-scaling curve of their snapshots."""

import os
from pathlib import Path

from django.db.models import Count, Q, QuerySet

from benchmark.file_seek import seek_clamped
from runner.spec import RUN_LOG
from webapp import work
from webapp.core.visibility import Perm, actionable, has_perm, visible_to
from webapp.liveness.services import GRADING_QUEUE, no_worker_note
from webapp.runs.models import AgentRun, Launch, SubmissionSnapshot


def launches_visible_to(user) -> QuerySet:
    """A person's own launches; with ``runs.view_launch``, everyone's. Launches are never
    public."""
    return visible_to(user, Launch.objects.select_related("experiment", "owner"))


def launches_with_progress(user) -> list[Launch]:
    """``launches_visible_to`` with each launch's ``progress``: how many of its runs are
    queued, running, finished (and how), graded, and its overall status."""
    launches = list(
        launches_visible_to(user).annotate(
            n_runs=Count("runs"),
            n_queued=Count("runs", filter=Q(runs__status=AgentRun.Status.QUEUED)),
            n_running=Count("runs", filter=Q(runs__status=AgentRun.Status.RUNNING)),
            n_graded=Count("runs", filter=Q(runs__result_run__status="graded")),
        )
    )
    finals = (
        AgentRun.objects.filter(launch__in=launches, status__in=work.kind_for("agent_run").final)
        .values_list("launch_id", "status")
        .annotate(n=Count("id"))
    )
    ended: dict[int, dict[str, int]] = {}
    for launch_id, status, n in finals:
        ended.setdefault(launch_id, {})[AgentRun.Status(status).label.lower()] = n
    for launch in launches:
        finished = launch.n_runs - launch.n_queued - launch.n_running
        status = "running" if launch.n_running else "queued" if launch.n_queued else "finished"
        launch.progress = {
            "status": status,
            "total": launch.n_runs,
            "finished": finished,
            "graded": launch.n_graded,
            "ended": ended.get(launch.pk, {}),
            "percent": round(100 * finished / launch.n_runs) if launch.n_runs else 100,
        }
    return launches


def agent_runs_visible_to(user) -> QuerySet:
    return visible_to(user, AgentRun.objects.select_related("competition", "launch"))


def agent_runs_cancellable_by(user) -> QuerySet:
    """Agent runs of the person's own launches; with ``runs.cancel_agentrun``, every one
    they may see."""
    return actionable(user, "cancel", AgentRun.objects.select_related("competition", "launch"))


def can_launch(user) -> bool:
    return has_perm(user, Perm.LAUNCH)


def can_manage_hosts(user) -> bool:
    return has_perm(user, Perm.MANAGE_HOSTS)


def launch_status(launch: Launch) -> dict:
    runs = list(
        launch.runs.select_related("competition", "result_run").order_by(
            "competition__slug", "seed"
        )
    )
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.status] = counts.get(run.status, 0) + 1
    return {
        "id": launch.pk,
        "agent": launch.agent_name,
        "backend": launch.backend,
        "experiment": launch.experiment_id,
        "counts": counts,
        "runs": [agent_run_status(r) for r in runs],
    }


def agent_run_status(run: AgentRun) -> dict:
    return {
        "id": run.pk,
        "competition_id": run.competition.slug,
        "seed": run.seed,
        "status": run.status,
        "status_label": run.status_label,
        "is_final": run.is_final,
        "is_cancellable": run.is_cancellable,
        "message": run.message,
        "detail": run.detail,
        "confinement": run.confinement,
        "exit_code": run.exit_code,
        "duration_s": run.duration_s,
        "egress_granted": run.egress_granted,
        "cancel_requested": run.cancel_requested,
        "overhead": run.overhead,
        "validation_counts": run.validation_counts,
        "llm_usage": run.llm_usage,
        "grading": run.result_run.status if run.result_run_id else None,
        "grading_is_final": run.result_run.is_final if run.result_run_id else None,
        "no_worker": agent_run_no_worker(run),
        "heartbeat_at": run.heartbeat_at.isoformat() if run.heartbeat_at else None,
        "log_note": run_log_note(run),
    }


def agent_run_no_worker(run: AgentRun) -> str:
    """ "no run worker (runs.cpu) has answered for N s" while the run waits for one and
    none answers; the same of grading while its outputs wait to be graded; "" otherwise
    (``webapp.liveness``)."""
    from webapp.results.models import Run
    from webapp.runs.queues import queue_for

    if run.status == AgentRun.Status.QUEUED:
        return no_worker_note(queue_for(run.launch.gpus if run.launch_id else 0))
    if run.result_run_id and run.result_run.status == Run.Status.QUEUED:
        return no_worker_note(GRADING_QUEUE)
    return ""


def run_log_note(run: AgentRun) -> str:
    """What to show instead of a log that is empty: why there is none."""
    if run.status == AgentRun.Status.QUEUED:
        return "Not started yet: waiting for a worker with room for this run."
    if run.status == AgentRun.Status.RUNNING:
        return "(no output yet)"
    if run.started_at is None or not run.output_dir:
        reason = run.message or run.get_status_display()
        return f"This run never started, so it has no log. {reason}".strip()
    return "The run finished without writing any output."


def time_scaling(experiment_id: int) -> list[dict]:
    """Any Medal % against elapsed hours from graded snapshots (an agent run's, or an
    upload's): at each snapshot time, the share of the experiment's (competition, seed)
    runs whose latest snapshot so far medals."""
    from webapp.results.models import Run

    rows = list(
        SubmissionSnapshot.objects.filter(run__experiment_id=experiment_id)
        .values_list("run_id", "elapsed_s", "any_medal")
        .order_by("elapsed_s", "run_id")
    )
    total = Run.objects.filter(experiment_id=experiment_id).count()
    if not rows or not total:
        return []
    latest: dict[int, bool] = {}
    points: list[dict] = []
    for run_id, elapsed, medal in rows:
        latest[run_id] = medal
        point = {
            "elapsed_hours": elapsed / 3600,
            "any_medal_percentage": 100 * sum(latest.values()) / total,
        }
        if points and points[-1]["elapsed_hours"] == point["elapsed_hours"]:
            points[-1] = point  # snapshots of several runs at one time: one point
        else:
            points.append(point)
    return points


def run_log_tail(run: AgentRun, max_bytes: int = 20_000) -> str:
    """The end of the run's captured log (already capped and masked by the harness)."""
    if not run.output_dir:
        return ""
    path = Path(run.output_dir) / RUN_LOG
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            seek_clamped(handle, size - max_bytes)
            return handle.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""
