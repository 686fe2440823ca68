"""A finished agent run's outputs handed to grading, as a run of its launch's experiment
(its snapshots graded along)."""

import logging
from pathlib import Path

from benchmark.cost import METERED
from webapp import work
from webapp.results.models import Run
from webapp.runs.models import AgentRun, SubmissionSnapshot
from webapp.work import send_on_commit

log = logging.getLogger(__name__)


def hand_to_grading(run: AgentRun, submission: Path | None) -> None:
    """A results Run for the experiment, graded by the grading queue like an upload's."""

    record = AgentRun.objects.values(
        "status", "duration_s", "validation_counts", "llm_usage", "launch__time_limit_s"
    ).get(pk=run.pk)
    result, _ = Run.objects.update_or_create(
        experiment_id=run.launch.experiment_id,
        competition_id=run.competition_id,
        seed=run.seed,
        defaults={
            "run_group": f"launch-{run.launch_id}",
            "submission_path": str(submission) if submission else "",
            "facts": run_facts(record),
            "llm_usage": {**record["llm_usage"], "source": METERED}
            if record["llm_usage"] is not None
            else None,
        },
    )
    work.restart(work.kind_for("grading"), [result.pk])
    AgentRun.objects.filter(pk=run.pk).update(result_run=result)
    send_on_commit("grading", result.pk)


def run_facts(record: dict) -> dict:
    """What the failure table reads of an agent run (``benchmark.failures.RunFacts``)."""
    counts = record.get("validation_counts") or {}
    return {
        "outcome": record["status"],
        "duration_s": record["duration_s"],
        "time_limit_s": record["launch__time_limit_s"],
        "validation_calls": sum(v for v in counts.values() if isinstance(v, int)),
    }


def grade_snapshots(run: AgentRun, snapshots) -> None:
    """Grade the harness's snapshots of ``run`` (``webapp.runs.snapshots``) and store them
    with the run's graded run."""
    from webapp.runs.snapshots import snapshot_grades

    if not snapshots:
        return
    result_run_id = AgentRun.objects.values_list("result_run_id", flat=True).get(pk=run.pk)
    grades = snapshot_grades(run.competition, run.seed, [Path(s.path) for s in snapshots])
    SubmissionSnapshot.objects.bulk_create(
        SubmissionSnapshot(
            agent_run=run,
            run_id=result_run_id,
            elapsed_s=snap.elapsed_s,
            path=str(snap.path),
            **grade,
        )
        for snap, grade in zip(snapshots, grades, strict=True)
    )
