"""What the experiment and compare pages show of cost, failures and condition twins: the
selectors' figures (``token_costs``, ``failure_modes``, ``compare_page.twins_table``) made
into context for their partials (``templates/results/_cost*.html``, ``_failures*.html``,
``_twins.html``), numbers formatted once here."""

from __future__ import annotations

from django.shortcuts import render

from webapp.figures import cost as cost_figures
from webapp.results import selectors
from webapp.results.pages import compare as compare_page
from webapp.results.pages.failures import experiment_failures, failure_runs
from webapp.results.pages.tokens import compare_tokens, experiment_tokens

SOURCE_TEXT = {
    "metered": "metered at mleboard's model bridge",
    "declared": "declared by the upload, not checked",
    "mixed": "metered for some runs, declared for others",
}


def tokens_text(value) -> str:
    """A token count as people read it: 1,234 below a million, 12.3M above; "—" for None."""
    if value is None:
        return "—"
    if value >= 10_000_000:
        return f"{value / 1e6:,.1f}M"
    return f"{round(value):,}"


def dollars_text(value) -> str:
    if value is None:
        return ""
    return f"${value:,.2f}" if value >= 1 else f"${value:,.4f}"


def _shown_tokens(figures: dict) -> dict:
    """The experiment's token figures with their text."""
    per_run = figures.get("per_run") or {}
    return {
        **figures,
        "total_text": tokens_text(figures.get("total_tokens")),
        "prompt_text": tokens_text(figures.get("prompt_tokens")),
        "completion_text": tokens_text(figures.get("completion_tokens")),
        "per_run_text": tokens_text(per_run.get("total")),
        "per_medal_text": tokens_text(figures.get("per_medal")),
        "source_text": SOURCE_TEXT.get(figures.get("source"), ""),
        "cost_text": dollars_text(figures.get("cost")),
        "cost_per_run_text": dollars_text(figures.get("cost_per_run")),
        "cost_per_medal_text": dollars_text(figures.get("cost_per_medal")),
    }


def _shown_run_rows(rows: list[dict]) -> list[dict]:
    return [
        {
            **r,
            "prompt_text": tokens_text(r["prompt_tokens"]),
            "completion_text": tokens_text(r["completion_tokens"]),
            "total_text": tokens_text(r["total_tokens"]),
            "wait_text": "" if r["wait_s"] is None else f"{r['wait_s']:,.1f} s",
        }
        for r in rows
    ]


def _shown_failures(table: dict) -> dict:
    def share(row):
        return None if not row["of"] else 100 * row["count"] / row["of"]

    return {
        "runs": table["runs"],
        "modes": [{**row, "share": share(row)} for row in table["modes"]],
        "invalid_by_class": [
            {**row, "key": f"invalid_{row['key']}", "share": share(row)}
            for row in table["invalid_by_class"]
        ],
    }


def experiment_analyses(experiment) -> dict:
    """Context for the experiment page's cost and failure sections."""
    tokens = experiment_tokens(experiment)
    tokens["run_rows"] = _shown_run_rows(tokens.get("run_rows", []))
    return {
        "tokens": _shown_tokens(tokens),
        "failures": _shown_failures(experiment_failures(experiment)),
    }


def compare_failures(experiments) -> dict:
    """Context for compare's failure section: a row per failure mode, a cell per
    experiment; and the experiments with runs here (published figures have none)."""
    failures = [(e, _shown_failures(experiment_failures(e))) for e in experiments]
    modes = [
        {
            "label": row["label"],
            "key": row["key"],
            "cells": [(e, table["modes"][i]) for e, table in failures],
        }
        for i, row in enumerate(failures[0][1]["modes"])
    ] + [
        {
            "label": f"invalid: {row['label']}",
            "key": row["key"],
            "cells": [(e, table["invalid_by_class"][i]) for e, table in failures],
        }
        for i, row in enumerate(failures[0][1]["invalid_by_class"])
    ]
    return {
        "failure_rows": modes,
        "failures_with_runs": [e for e, table in failures if table["runs"]],
    }


def compare_analyses(experiments, by_split: dict, split: str, parts: dict) -> dict:
    """Context for compare's cost, failure and twins sections."""
    cost = compare_tokens(experiments, by_split, split, parts)
    return {
        "cost_rows": [(e, _shown_tokens(f)) for e, f in cost["rows"]],
        "cost_figure": cost_figures.medal_against_tokens(cost["points"])
        if cost["points"]
        else None,
        "cost_pass_at_k_figure": cost_figures.pass_at_k_against_tokens(cost["curves"])
        if cost["curves"]
        else None,
        **compare_failures(experiments),
        "twins": compare_page.twins_table(experiments, by_split),
    }


def experiment_failure_runs(request, pk: int, key: str):
    """The runs behind one figure of an experiment's failure table."""
    from django.http import Http404

    from benchmark.failures import FAILURE_KEYS

    experiment = selectors.experiment_visible_to(request.user, pk)
    if key not in FAILURE_KEYS:
        raise Http404("No such failure mode.")
    table = _shown_failures(experiment_failures(experiment))
    row = next(r for r in [*table["modes"], *table["invalid_by_class"]] if r["key"] == key)
    return render(
        request,
        "results/failure_runs.html",
        {"experiment": experiment, "row": row, "runs": failure_runs(experiment, key)},
    )
