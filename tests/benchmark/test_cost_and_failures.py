"""Token figures (per run, per experiment, per medal, a cost estimate) and the failure
table, from plain data."""

from __future__ import annotations

import pytest

from benchmark.cost import (
    Price,
    RunTokens,
    parse_prices,
    parse_usage_declaration,
    pass_at_k_against_tokens,
    run_tokens_from_usage,
    token_figures,
)
from benchmark.failures import RunFacts, failure_table, runs_in


def test_token_figures_per_run_per_medal_and_cost():
    runs = [
        run_tokens_from_usage({"prompt_tokens": 1000, "completion_tokens": 200}, any_medal=True),
        run_tokens_from_usage(
            {"prompt_tokens": 3000, "completion_tokens": 600, "estimated_requests": 2}
        ),
        run_tokens_from_usage({}, any_medal=True),  # nothing known: not counted as free
    ]
    figures = token_figures(runs, price=Price(prompt=2.5, completion=10.0))
    assert figures["runs"] == 3 and figures["runs_with_tokens"] == 2
    assert figures["source"] == "metered" and figures["estimated_runs"] == 1
    assert figures["total_tokens"] == 4800
    assert figures["per_run"]["total"] == 2400
    assert figures["medals"] == 1 and figures["per_medal"] == 4800
    assert figures["cost"] == pytest.approx((4000 * 2.5 + 800 * 10) / 1e6)
    assert token_figures(runs)["cost"] is None


def test_a_total_declared_for_the_experiment_is_spread_over_its_runs():
    runs = [RunTokens(None, None, any_medal=m) for m in (True, False, False, True)]
    figures = token_figures(runs, declared_total={"prompt_tokens": 800, "completion_tokens": 200})
    assert figures["source"] == "declared" and figures["declared_for_experiment"]
    assert figures["per_run"]["total"] == 250 and figures["per_medal"] == 500
    assert token_figures(runs)["total_tokens"] is None


def test_declarations_and_prices_are_checked():
    assert parse_usage_declaration({"prompt_tokens": 5, "completion_tokens": 1}, "x") == {
        "prompt_tokens": 5,
        "completion_tokens": 1,
        "source": "declared",
    }
    for bad in (
        [],
        {"prompt_tokens": -1},
        {"prompt_tokens": 1.5},
        {"tokens": 3},
        {"prompt_tokens": True},
    ):
        with pytest.raises(ValueError):
            parse_usage_declaration(bad, "usage")
    assert parse_prices("gpt-4o=2.5/10, o1-preview=15/60") == {
        "gpt-4o": Price(2.5, 10.0),
        "o1-preview": Price(15.0, 60.0),
    }
    assert parse_prices("") == {}
    for bad in ("gpt-4o", "gpt-4o=2.5", "=1/2", "m=a/b", "m=-1/2", "m=inf/1"):
        with pytest.raises(ValueError, match="MODEL=PROMPT/COMPLETION"):
            parse_prices(bad)
    points = pass_at_k_against_tokens([{"k": 1, "percentage": 10}, {"k": 3, "percentage": 20}], 500)
    assert [p["tokens"] for p in points] == [500, 1500]


def test_the_failure_table_counts_each_mode_over_the_runs_it_can_be_known_for():
    runs = [
        RunFacts(1, "completed", 50, 3600, 0, True, False, "columns"),  # early, never validated
        RunFacts(2, "completed", 3000, 3600, 3, True, False, "ids"),  # validated, still invalid
        RunFacts(3, "timed_out", 3600, 3600, 1, True, True),
        RunFacts(4, "out_of_memory", 100, 3600, 0, False, False, "missing"),
        RunFacts(5, "harness_error", 0, 3600, 0, False, False, "missing"),
        RunFacts(6, None, None, None, None, True, False, "nan"),  # an upload that says little
    ]
    table = failure_table(runs)
    modes = {row["key"]: row for row in table["modes"]}
    assert modes["never_validated"]["runs"] == [1, 4] and modes["never_validated"]["of"] == 4
    assert (
        modes["validated_still_invalid"]["runs"] == [2]
        and modes["validated_still_invalid"]["of"] == 2
    )
    assert modes["stopped_early"]["runs"] == [1, 4] and modes["stopped_early"]["of"] == 4
    assert modes["out_of_memory"]["runs"] == [4] and modes["timed_out"]["runs"] == [3]
    assert modes["harness_error"]["runs"] == [5] and modes["harness_error"]["of"] == 5
    assert modes["no_submission"]["runs"] == [4, 5]
    assert modes["invalid"]["runs"] == [1, 2, 6] and modes["invalid"]["of"] == 6
    classes = {row["key"]: row["runs"] for row in table["invalid_by_class"]}
    assert classes["columns"] == [1] and classes["ids"] == [2] and classes["nan"] == [6]
    assert runs_in(table, "invalid_ids") == [2] and runs_in(table, "nonsense") == []
