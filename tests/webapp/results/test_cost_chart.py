"""The leaderboard's medals-against-cost chart: cost per run in tokens (stored with the
figures), dollars (at the operator's prices) or GPU-hours (from the disclosure), the
Pareto frontier marked, and the entries without a cost listed apart, never drawn at 0."""

import json
import re

import pytest

from benchmark.cost import pareto_frontier
from tests.support.factories import import_runs
from webapp.competitions.services import catalogue_sync
from webapp.results.disclosure import disclosure_update
from webapp.results.grading.aggregates import experiment_aggregate_refresh
from webapp.results.models import Experiment, Run

pytestmark = pytest.mark.django_db


def test_the_frontier_keeps_what_nothing_cheaper_beats():
    points = [(10, 50), (5, 40), (20, 45), (5, 30), (30, 70), (30, 70)]
    assert pareto_frontier(points) == [1, 0, 4]
    assert pareto_frontier([]) == []


@pytest.fixture
def board(tmp_path):
    catalogue_sync()
    import_runs(tmp_path / "runs", {"cheap": 2, "dear": 2, "silent": 2}, seed=5)
    return {e.name.split()[0]: e for e in Experiment.objects.all()}


def chart(client, **query) -> tuple[str, dict]:
    html = client.get("/", query).content.decode()
    found = re.search(r'id="cost-chart-data"[^>]*>(.*?)</script>', html, re.S)
    return html, json.loads(found.group(1)) if found else {}


def test_gpu_hours_from_the_disclosure_and_the_rest_apart(client, board):
    names = {key: e.name for key, e in board.items()}
    disclosure_update(board["cheap"], {"gpus": 1, "hours": 12.0})
    disclosure_update(board["dear"], {"gpus": 2, "hours": 24.0})
    html, figure = chart(client)
    assert "Without a cost in GPU-hours, not drawn" in html and names["silent"] in html
    entries, frontier = figure["data"]
    assert sorted(entries["x"]) == [12, 48]
    assert names["silent"] not in entries["text"] and 0 not in entries["x"]
    means = dict(zip(entries["text"], entries["y"], strict=True))
    # The dearer one is on the frontier only if it scores higher.
    expected = [12] + ([48] if means[names["dear"]] > means[names["cheap"]] else [])
    assert frontier["x"] == expected
    rows = client.get("/", {"format": "csv"}).content.decode().splitlines()
    assert "gpu_hours_per_run" in rows[0]


def test_tokens_stored_with_the_figures_and_dollars_at_the_operators_price(client, board, settings):
    from benchmark.cost import Price

    Run.objects.filter(experiment=board["dear"]).update(
        llm_usage={"prompt_tokens": 3_000_000, "completion_tokens": 1_000_000}
    )
    experiment_aggregate_refresh(board["dear"].pk)
    settings.MLEBOARD_LLM_PRICES = {board["dear"].agent.model.name: Price(2.0, 8.0)}
    _, figure = chart(client, cost="dollars")
    assert figure["data"][0]["x"] == [pytest.approx(14.0)]
    html, figure = chart(client, cost="tokens")
    assert figure["data"][0]["x"] == [4_000_000]
    assert "Cost in:" in html and "cost=dollars" in html
    entry = next(
        e for e in client.get("/api/leaderboard/").json()["entries"] if e["id"] == board["dear"].pk
    )
    assert entry["cost"] == {"tokens": 4_000_000, "dollars": pytest.approx(14.0)}


def test_no_chart_when_no_entry_has_a_cost(client, board):
    html, figure = chart(client)
    assert figure == {} and 'id="cost-chart-box"' not in html
