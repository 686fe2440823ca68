from django.db.models import QuerySet

from webapp.runs.models import AgentRun, Launch


def launches_visible_to(user) -> QuerySet:
    qs = Launch.objects.select_related("experiment", "owner")
    if getattr(user, "is_staff", False):
        return qs
    if getattr(user, "is_authenticated", False):
        return qs.filter(owner=user)
    return qs.none()


def agent_runs_visible_to(user) -> QuerySet:
    return AgentRun.objects.filter(launch__in=launches_visible_to(user)).select_related(
        "competition", "launch"
    )


def can_launch(user) -> bool:
    return bool(
        getattr(user, "is_authenticated", False) and user.has_perm("runs.launch_agent_runs")
    )


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
        "message": run.message,
        "detail": run.detail,
        "exit_code": run.exit_code,
        "duration_s": run.duration_s,
        "egress_granted": run.egress_granted,
        "cancel_requested": run.cancel_requested,
        "overhead": run.overhead,
        "validation_counts": run.validation_counts,
        "grading": run.result_run.status if run.result_run_id else None,
        "heartbeat_at": run.heartbeat_at.isoformat() if run.heartbeat_at else None,
    }
