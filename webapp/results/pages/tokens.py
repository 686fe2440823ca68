"""Reads for what runs cost in tokens (``benchmark.cost`` computes): per run, per
experiment, per medal, and against Any Medal % and pass@k for compare. A disqualified
run's medal counts as none, as in every other figure."""

from __future__ import annotations

from django.conf import settings

from benchmark.cost import (
    RunTokens,
    pass_at_k_against_tokens,
    run_tokens_from_usage,
    token_figures,
)
from webapp.results.grading.aggregates import disqualified_run_ids
from webapp.results.grading.tokens import run_rows
from webapp.results.models import Experiment

# The most runs listed in an experiment's table of tokens.
RUNS_LISTED = 500


def price_for(experiment: Experiment):
    """The operator's price for the experiment's model (``MLEBOARD_LLM_PRICES``), or None."""
    return settings.MLEBOARD_LLM_PRICES.get(experiment.agent.model.name)


def experiment_tokens(experiment: Experiment, *, with_runs: bool = True) -> dict:
    """``benchmark.cost.token_figures`` of the experiment's runs, with its model's price;
    and (``with_runs``) the first ``RUNS_LISTED`` runs' own counts as ``run_rows``."""
    from webapp.core.rendering import url_for_each

    rows = run_rows(experiment, disqualified_run_ids(experiment.pk))
    tokens = [run_tokens_from_usage(usage, any_medal=medal) for _, _, _, usage, medal in rows]
    price = price_for(experiment)
    figures = token_figures(tokens, declared_total=experiment.llm_usage, price=price)
    figures["price"] = (
        None if price is None else {"prompt": price.prompt, "completion": price.completion}
    )
    figures["model"] = experiment.agent.model.name
    if with_runs:
        run_url = url_for_each("run-page-result")
        figures["run_rows"] = [
            {
                "competition_id": slug,
                "seed": seed,
                "url": run_url(pk),
                "any_medal": medal,
                "requests": t.requests,
                "prompt_tokens": t.prompt_tokens,
                "completion_tokens": t.completion_tokens,
                "total_tokens": t.total,
                "source": t.source,
                "estimated": t.estimated,
                "wait_s": (usage or {}).get("wait_s"),
                "errors": sum(((usage or {}).get("errors") or {}).values()),
            }
            for (pk, slug, seed, usage, medal), t in zip(rows, tokens, strict=True)
            if t.known
        ][:RUNS_LISTED]
    return figures


def compare_tokens(experiments: list[Experiment], by_split: dict, split: str, parts: dict) -> dict:
    """Compare's cost-effectiveness: for each experiment with tokens, Any Medal % on
    ``split`` against its tokens per run; and pass@k against k × tokens per run."""
    points, curves, rows = [], [], []
    for experiment in experiments:
        figures = experiment_tokens(experiment, with_runs=False)
        rows.append((experiment, figures))
        per_run = (figures.get("per_run") or {}).get("total")
        if per_run is None:
            continue
        medal = by_split[experiment.pk].get(split)
        if medal:
            points.append(
                {
                    "label": experiment.name,
                    "tokens_per_run": per_run,
                    "mean": medal["mean"],
                    "standard_error": medal["standard_error"],
                    "source": figures["source"],
                }
            )
        values = (parts.get(experiment.pk, {}).get("pass_at_k") or {}).get("values") or []
        if values:
            curves.append((experiment.name, pass_at_k_against_tokens(values, per_run)))
    return {"rows": rows, "points": points, "curves": curves}


__all__ = ["RunTokens", "compare_tokens", "experiment_tokens", "price_for"]
