"""Reproductions: a built submission launched over a split × seeds with the canonical
limits, its reproduced experiment set against the experiment it reproduces, split by
split (``benchmark.reproduction``), with what it cost (tokens metered at the bridge, run
hours). Done once every run has ended and been graded; failed past its deadline."""

from __future__ import annotations

import datetime as dt
import logging
import math

from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from benchmark.catalogue import competitions_in_split
from benchmark.compare import compare_split_figures, compare_tallies
from benchmark.reproduction import SplitVerdict
from benchmark.splits import in_display_order
from webapp import work
from webapp.agentsubs.models import AgentSubmission, Reproduction
from webapp.agentsubs.services import APPROVE, SubmissionInvalid
from webapp.core import changes
from webapp.core.visibility import Perm, has_perm
from webapp.results.models import Experiment, Run
from webapp.runs.models import AgentRun, RunHost

log = logging.getLogger(__name__)

CANONICAL_TIME_LIMIT_S = 24 * 3600
DEADLINE_MARGIN = dt.timedelta(hours=1)


def _kind():
    return work.kind_for("agent_reproduction")


def may_reproduce(user, submission: AgentSubmission) -> bool:
    """Operators who approve agents, or its submitter when they may launch agent runs."""
    if has_perm(user, APPROVE):
        return True
    return submission.owner_id == getattr(user, "pk", None) and has_perm(user, Perm.LAUNCH)


def _gpus_here() -> int:
    """One GPU when a run host that is up has one (the canonical setup), else none."""
    hosts = RunHost.objects.filter(state=RunHost.State.UP).values_list("gpu_ids", flat=True)
    return 1 if any(ids for ids in hosts) else 0


def reproduction_start(
    submission: AgentSubmission,
    *,
    by,
    target_id: int | None,
    split: str,
    seeds: int,
    time_limit_s: float = CANONICAL_TIME_LIMIT_S,
    cpus: float | None = None,
    memory_bytes: int | None = None,
) -> Reproduction:
    """Launch ``submission`` over ``split`` × ``seeds`` (24 h a run, one GPU where the
    host has one, the operator's model endpoint; the host's CPUs and memory unless
    ``cpus``/``memory_bytes`` share them out) to reproduce ``target_id`` (default: the
    experiment it claims). Raises ``SubmissionInvalid`` naming the field, or
    ``PermissionError``."""
    from webapp.results.selectors import experiments_visible_to
    from webapp.runs.services.catalogue import LaunchRefused
    from webapp.runs.services.launch import launch_create

    if not may_reproduce(by, submission):
        raise PermissionError("you may not launch reproductions of this agent")
    if submission.status != AgentSubmission.Status.BUILT:
        raise SubmissionInvalid("agent", f"it is {submission.status_label.lower()}, not built")
    target_id = target_id or submission.claims_id
    if target_id is None:
        raise SubmissionInvalid("experiment", "say which experiment it reproduces")
    target = experiments_visible_to(by).filter(pk=target_id).first()
    if target is None:
        raise SubmissionInvalid("experiment", f"no experiment {target_id} that you can see")
    try:
        ids = [c.id for c in competitions_in_split(split)]
    except Exception:
        raise SubmissionInvalid("split", f"unknown split {split[:40]!r}") from None
    with transaction.atomic():
        try:
            launch = launch_create(
                owner=by,
                agent_name=submission.site_name,
                split=split,
                seeds=seeds,
                gpus=_gpus_here(),
                time_limit_s=time_limit_s,
                cpus=cpus,
                memory_bytes=memory_bytes,
            )
        except LaunchRefused as exc:
            raise SubmissionInvalid("agent", str(exc)) from None
        Experiment.objects.filter(pk=launch.experiment_id).update(
            name=f"{submission.site_name}: reproduction of {target.name}"[:200],
            source_url="",
            notes=f"Reproduction of experiment {target.pk} by this site's run hosts "
            f"(agent {submission.name} v{submission.version}, sha256 {submission.sha256[:12]}).",
        )
        runs = max(1, len(ids) * seeds)
        return Reproduction.objects.create(
            submission=submission,
            owner=by,
            launch=launch,
            target=target,
            split=split,
            seeds=seeds,
            deadline_at=timezone.now()
            + dt.timedelta(seconds=time_limit_s * runs)
            + DEADLINE_MARGIN,
        )


def _any_medal(experiment: Experiment) -> dict:
    from webapp.results.selectors import any_medal_by_split

    experiment = Experiment.objects.select_related("aggregate").get(pk=experiment.pk)
    return any_medal_by_split(experiment)


def split_verdicts(reproduced: Experiment, target: Experiment) -> list[SplitVerdict]:
    """Per split both have, in display order: the reproduction against the reported."""
    from benchmark.catalogue import load_catalogue
    from webapp.results.grading.aggregates import competition_tallies
    from webapp.results.selectors import split_parts

    mine, theirs = _any_medal(reproduced), _any_medal(target)
    out = []
    for split in in_display_order(set(mine) & set(theirs)):
        if split == "ran":
            continue
        a, b = mine[split], theirs[split]
        paired = a["source"] == b["source"] == "reports"
        try:
            if paired:
                parts = split_parts([reproduced, target], split, ("per_competition",))
                catalogue = load_catalogue(include_demo=True)
                result = compare_tallies(
                    "reproduction",
                    competition_tallies(parts[reproduced.pk].get("per_competition"), catalogue),
                    "reported",
                    competition_tallies(parts[target.pk].get("per_competition"), catalogue),
                ).to_dict()
            else:
                result = compare_split_figures("reproduction", mine, "reported", theirs, [split])[
                    "splits"
                ][0]
        except ValueError:
            continue
        out.append(
            SplitVerdict(
                split=split,
                reported=float(b["mean"]),
                reproduced=float(a["mean"]),
                reproduced_standard_error=float(a.get("standard_error") or 0.0),
                difference=float(a["mean"]) - float(b["mean"]),
                ci_lower=float(result["ci_lower"]),
                ci_upper=float(result["ci_upper"]),
                method="paired" if paired else "unpaired",
            )
        )
    return out


def _cost(reproduction: Reproduction) -> dict:
    """Tokens metered at the bridge and run hours, over its runs; wall-clock hours."""
    prompt = completion = requests = 0
    seconds = 0.0
    for usage, duration in AgentRun.objects.filter(launch=reproduction.launch_id).values_list(
        "llm_usage", "duration_s"
    ):
        seconds += duration or 0.0
        if usage:
            prompt += int(usage.get("prompt_tokens") or 0)
            completion += int(usage.get("completion_tokens") or 0)
            requests += int(usage.get("requests") or 0)
    wall = (timezone.now() - reproduction.created_at).total_seconds()
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "requests": requests,
        "run_hours": seconds / 3600,
        "wall_hours": wall / 3600,
    }


def _settled(reproduction: Reproduction) -> bool:
    """Every run has ended, every graded run is graded, and the figures are stored."""
    launch = reproduction.launch
    kind = work.kind_for("agent_run")
    statuses = list(AgentRun.objects.filter(launch=launch).values_list("status", flat=True))
    if not statuses or not all(kind.is_final(s) for s in statuses):
        return False
    pending = Run.objects.filter(experiment_id=launch.experiment_id).exclude(
        status__in=(Run.Status.GRADED, Run.Status.FAILED)
    )
    experiment = Experiment.objects.filter(pk=launch.experiment_id).first()
    return not pending.exists() and experiment is not None and experiment.figures_due_since is None


def reproduction_settle(pk: int) -> bool:
    """End a reproduction whose runs are all graded: done with its verdicts (failed when
    no run gave a result). True when it ended now."""
    reproduction = Reproduction.objects.select_related("launch", "target").filter(pk=pk).first()
    if reproduction is None or reproduction.status != Reproduction.Status.REPRODUCING:
        return False
    if not _settled(reproduction):
        return False
    experiment = Experiment.objects.get(pk=reproduction.launch.experiment_id)
    verdicts = split_verdicts(experiment, reproduction.target)
    cost = _cost(reproduction)
    if not Run.objects.filter(experiment=experiment, status=Run.Status.GRADED).exists():
        return work.fail(
            _kind(),
            pk,
            "no run of it was graded: see its launch's runs for why",
            cost=cost,
            finished_at=timezone.now(),
        )
    ended = work.finish(
        _kind(),
        pk,
        verdicts=[v.to_dict() for v in verdicts],
        verdict=_headline(verdicts, reproduction.split),
        cost=cost,
        finished_at=timezone.now(),
    )
    if ended:
        changes.experiments_changed([reproduction.target_id, experiment.pk])
    return ended


def _headline(verdicts: list[SplitVerdict], split: str) -> str:
    """The verdict on the split it was run on, else the first split both have."""
    chosen = next((v for v in verdicts if v.split == split), verdicts[0] if verdicts else None)
    return chosen.text if chosen else ""


def reproductions_sweep(batch: int) -> int:
    """Reproductions whose runs are all graded end with their verdict; those past their
    deadline fail, saying so. Returns how many ended."""
    ended = 0
    now = timezone.now()
    for pk, deadline in Reproduction.objects.filter(
        status=Reproduction.Status.REPRODUCING
    ).values_list("pk", "deadline_at")[:batch]:
        if reproduction_settle(pk):
            ended += 1
        elif deadline < now:
            ended += work.fail(
                _kind(),
                pk,
                "its runs did not all end by its deadline (each run's time limit, plus an hour)",
                finished_at=now,
            )
    return ended


def on_figures_stored(sender, experiment_id, **kwargs) -> None:
    """An experiment's figures were stored: a reproduction waiting for them may end, and a
    done one is judged again on the new figures."""
    pks = list(
        Reproduction.objects.filter(
            Q(launch__experiment_id=experiment_id) | Q(target_id=experiment_id)
        ).values_list("pk", "status")
    )
    if pks:
        transaction.on_commit(lambda: _after_figures(pks))


def _after_figures(pks: list[tuple[int, str]]) -> None:
    for pk, status in pks:
        try:
            if status == Reproduction.Status.REPRODUCING:
                reproduction_settle(pk)
            elif status == Reproduction.Status.DONE:
                reproduction_rejudge(pk)
        except Exception:  # the sweeper settles it later
            log.warning("settling reproduction %s failed", pk, exc_info=True)


def reproduction_rejudge(pk: int) -> None:
    reproduction = Reproduction.objects.select_related("launch", "target").get(pk=pk)
    experiment = Experiment.objects.get(pk=reproduction.launch.experiment_id)
    verdicts = split_verdicts(experiment, reproduction.target)
    Reproduction.objects.filter(pk=pk).update(
        verdicts=[v.to_dict() for v in verdicts],
        verdict=_headline(verdicts, reproduction.split),
    )
    changes.experiments_changed([reproduction.target_id, experiment.pk])


def reproductions_of(experiment: Experiment) -> list[Reproduction]:
    """The reproductions an experiment is part of (reproduced, or reproducing it), for
    its page; the page keeps those its viewer may see."""
    return list(
        Reproduction.objects.filter(
            Q(target=experiment) | Q(launch__experiment=experiment)
        ).select_related("launch__experiment", "target", "submission")
    )


def public_verdicts(experiment_ids: list[int]) -> dict[int, dict]:
    """The newest verdict of each published experiment among ``experiment_ids``, for the
    leaderboard (a reproduction is public with the experiment it reproduces)."""
    out: dict[int, dict] = {}
    rows = (
        Reproduction.objects.filter(
            target_id__in=experiment_ids,
            status=Reproduction.Status.DONE,
            target__is_published=True,
        )
        .exclude(verdict="")
        .order_by("-finished_at")
        .values("pk", "target_id", "verdict", "launch__experiment_id")
    )
    for row in rows:
        out.setdefault(
            row["target_id"],
            {
                "text": row["verdict"],
                "agrees": row["verdict"].endswith("agrees"),
                "reproduction_id": row["pk"],
                "url": reverse("reproduction-detail", args=[row["pk"]]),
                "experiment_id": row["launch__experiment_id"],
            },
        )
    return out


def points(value: float) -> str:
    return f"{value:+.1f}" if math.isfinite(value) else "—"
