"""What an experiment's runs cost in tokens, read once for the stored figures (the
leaderboard's medals-against-cost chart) and for the pages that list them per run."""

from __future__ import annotations

from django.db.models import Q

from benchmark.cost import run_tokens_from_usage, token_figures
from webapp.results.models import Experiment, Run


def run_rows(experiment: Experiment, disqualified: set[int]) -> list[tuple]:
    """``(run id, competition, seed, usage, any medal)`` for each run, a ``disqualified``
    run's medal counting as none, as in every other figure."""
    any_medal = Q(reports__is_current=True) & (
        Q(reports__gold_medal=True) | Q(reports__silver_medal=True) | Q(reports__bronze_medal=True)
    )
    medalled = set(
        Run.objects.filter(experiment=experiment).filter(any_medal).values_list("pk", flat=True)
    )
    rows = Run.objects.filter(experiment=experiment).values_list(
        "pk", "competition__slug", "seed", "llm_usage"
    )
    return [
        (pk, slug, seed, usage, pk in medalled and pk not in disqualified)
        for pk, slug, seed, usage in rows.order_by("competition__slug", "seed")
    ]


def cost_summary(experiment: Experiment, disqualified: set[int]) -> dict:
    """Tokens per run (prompt, completion, total) and where they come from; {} when no
    run has a count. Dollars are not stored: the operator's prices may change."""
    tokens = [
        run_tokens_from_usage(usage, any_medal=medal)
        for *_, usage, medal in run_rows(experiment, disqualified)
    ]
    figures = token_figures(tokens, declared_total=experiment.llm_usage)
    per_run = figures.get("per_run")
    if not per_run:
        return {}
    return {
        "tokens_per_run": per_run["total"],
        "prompt_per_run": per_run["prompt"],
        "completion_per_run": per_run["completion"],
        "source": figures["source"],
    }
