""" "My work" (Codabench's "My submissions"): a signed-in person's uploads, launches and
experiments in one place, each with its status, its Any Medal % per split and the next
thing to do. Reads only the person's own rows (``webapp.core.visibility``'s owner rule: a
curator who sees everyone's still gets only their own here). It lists launches as well as
uploads, hence runs' rather than accounts' or results'."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.shortcuts import render
from django.urls import reverse

from webapp.core.visibility import Perm, has_perm
from webapp.results.models import Experiment, PartialUpload, Upload
from webapp.results.pages import experiment as experiment_page
from webapp.runs.models import AgentRun, Launch

# The badge colour of each status (the site's existing badge classes).
BADGE = {
    "failed": "warn",
    "graded": "verified",
    "published": "verified",
    "processing": "reported",
    "receiving": "reported",
}


@dataclass(frozen=True)
class NextStep:
    """What to do next about one row: a short imperative and where it is done."""

    text: str
    url: str


def _scores(experiment: Experiment | None) -> list[str]:
    return [] if experiment is None else experiment_page.any_medal_texts(experiment)


def _experiment_step(user, experiment: Experiment) -> NextStep:
    url = experiment.get_absolute_url()
    if experiment.is_published:
        return NextStep("see where it ranks", reverse("home"))
    if has_perm(user, Perm.PUBLISH):
        return NextStep("publish", reverse("admin:results_experiment_change", args=[experiment.pk]))
    return NextStep("read the results; an admin publishes it", url)


def _upload_row(user, upload: Upload) -> dict:
    url = upload.get_absolute_url()
    if upload.status == Upload.Status.FAILED:
        step = NextStep("see why it failed", url)
    elif upload.status in (Upload.Status.QUEUED, Upload.Status.PROCESSING):
        step = NextStep("follow its progress", url)
    elif upload.experiment is not None:
        step = _experiment_step(user, upload.experiment)
    else:
        step = NextStep("see what was found", url)
    return {
        "name": upload.original_name,
        "url": url,
        "status": upload.get_status_display(),
        "status_key": upload.status,
        "experiment": upload.experiment,
        "scores": _scores(upload.experiment),
        "created_at": upload.created_at,
        "next": step,
    }


def _partial_row(partial: PartialUpload) -> dict:
    return {
        "name": partial.filename,
        "url": reverse("upload-new"),
        "status": f"{partial.offset * 100 // max(partial.length, 1)}% received",
        "status_key": "receiving",
        "experiment": None,
        "scores": [],
        "created_at": partial.created_at,
        "next": NextStep("continue the upload (choose the same file again)", reverse("upload-new")),
    }


def _launch_status(counts: dict[str, int]) -> tuple[str, str]:
    """(text, badge key) of a launch from its runs' counts by status."""
    total = sum(counts.values())
    unfinished = counts.get(AgentRun.Status.QUEUED, 0) + counts.get(AgentRun.Status.RUNNING, 0)
    failed = total - unfinished - counts.get(AgentRun.Status.COMPLETED, 0)
    if not total:
        return "no runs", "queued"
    if unfinished:
        return f"{total - unfinished} of {total} runs finished", "processing"
    if failed:
        return f"{failed} of {total} runs did not complete", "failed"
    return f"all {total} runs completed", "graded"


def _launch_row(user, launch: Launch) -> dict:
    counts = {
        "queued": launch.n_queued,
        "running": launch.n_running,
        "completed": launch.n_completed,
        "other": launch.n_total - launch.n_queued - launch.n_running - launch.n_completed,
    }
    status, key = _launch_status({k: v for k, v in counts.items() if v})
    url = launch.get_absolute_url()
    if key == "processing":
        step = NextStep("follow the runs", url)
    elif key == "failed":
        step = NextStep("see why runs failed", url)
    elif launch.experiment is not None:
        step = _experiment_step(user, launch.experiment)
    else:
        step = NextStep("open the launch", url)
    return {
        "name": f"{launch.agent_name} on {len(launch.competitions)} competition"
        f"{'' if len(launch.competitions) == 1 else 's'} × {launch.seeds} seed"
        f"{'' if launch.seeds == 1 else 's'}",
        "url": url,
        "status": status,
        "status_key": key,
        "experiment": launch.experiment,
        "scores": _scores(launch.experiment),
        "created_at": launch.created_at,
        "next": step,
    }


def _experiment_row(user, experiment: Experiment) -> dict:
    return {
        "name": experiment.name,
        "url": experiment.get_absolute_url(),
        "status": "published" if experiment.is_published else "private",
        "status_key": "published" if experiment.is_published else "private",
        "experiment": experiment,
        "scores": _scores(experiment),
        "created_at": experiment.created_at,
        "next": _experiment_step(user, experiment),
    }


def my_work(user) -> dict:
    """``uploads`` (with archives still arriving first), ``launches`` and ``experiments``
    of ``user``: rows with name, url, status, scores (Any Medal % per split) and ``next``
    (a ``NextStep``); ``empty`` when there is nothing at all."""
    uploads = Upload.objects.filter(owner=user).select_related("experiment__aggregate")
    partials = PartialUpload.objects.filter(
        owner=user, state=PartialUpload.State.RECEIVING, upload__isnull=True
    )
    launches = (
        Launch.objects.filter(owner=user)
        .select_related("experiment__aggregate")
        .annotate(
            n_total=Count("runs"),
            n_queued=Count("runs", filter=Q(runs__status=AgentRun.Status.QUEUED)),
            n_running=Count("runs", filter=Q(runs__status=AgentRun.Status.RUNNING)),
            n_completed=Count("runs", filter=Q(runs__status=AgentRun.Status.COMPLETED)),
        )
    )
    experiments = Experiment.objects.filter(owner=user).select_related("aggregate")
    out = {
        "uploads": [_partial_row(p) for p in partials] + [_upload_row(user, u) for u in uploads],
        "launches": [_launch_row(user, launch) for launch in launches],
        "experiments": [_experiment_row(user, e) for e in experiments],
    }
    for rows in out.values():
        for row in rows:
            row["badge"] = BADGE.get(row["status_key"], "")
    out["empty"] = not any(out.values())
    return out


@login_required
def my_work_page(request):
    """The person's uploads, launches and experiments, with what to do next."""
    return render(request, "accounts/my_work.html", {"work": my_work(request.user)})
