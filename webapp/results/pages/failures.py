"""Reads for why runs fail (``benchmark.failures`` counts): the failure table of an
experiment, from its runs' records (``Run.facts``: outcome, duration, time limit,
validation calls) and current reports (submission made, valid, error class)."""

from __future__ import annotations

from benchmark.failures import RunFacts, failure_table, runs_in
from webapp.results.models import Experiment, GradeReport, Run


def _facts(experiment: Experiment) -> list[RunFacts]:
    reports = {
        run_id: (exists, valid, error_class)
        for run_id, exists, valid, error_class in GradeReport.objects.filter(
            experiment=experiment, is_current=True
        ).values_list("run_id", "submission_exists", "valid_submission", "error_class")
    }
    out = []
    for pk, facts in Run.objects.filter(experiment=experiment).values_list("pk", "facts"):
        facts = facts or {}
        exists, valid, error_class = reports.get(pk, (False, False, ""))
        out.append(
            RunFacts(
                key=pk,
                outcome=facts.get("outcome"),
                duration_s=facts.get("duration_s"),
                time_limit_s=facts.get("time_limit_s"),
                validation_calls=facts.get("validation_calls"),
                submission_exists=exists,
                valid_submission=valid,
                error_class=error_class,
                graded=pk in reports,
                harness_error=facts.get("harness_error"),
            )
        )
    return out


def experiment_failures(experiment: Experiment) -> dict:
    """``benchmark.failures.failure_table`` of the experiment's runs (keys: run ids)."""
    return failure_table(_facts(experiment))


def failure_runs(experiment: Experiment, key: str) -> list[dict]:
    """The runs behind one figure of the failure table, for a page listing them."""
    from webapp.core.rendering import url_for_each

    ids = runs_in(experiment_failures(experiment), key)
    run_url = url_for_each("run-page-result")
    reports = {
        r.run_id: r
        for r in GradeReport.objects.filter(run_id__in=ids, is_current=True).only(
            "run_id", "error", "error_class", "valid_submission", "submission_exists"
        )
    }
    return [
        {
            "competition_id": slug,
            "seed": seed,
            "url": run_url(pk),
            "outcome": (facts or {}).get("outcome") or "",
            "duration_s": (facts or {}).get("duration_s"),
            "error": reports[pk].error if pk in reports else "",
        }
        for pk, slug, seed, facts in Run.objects.filter(pk__in=ids)
        .order_by("competition__slug", "seed")
        .values_list("pk", "competition__slug", "seed", "facts")
    ]
