"""The synthetic references (the demo's models mleboard trains itself) are never ranked
with the agents: the exports and the API list them after every agent, unranked, saying
they are synthetic, as the page lists them apart."""

import csv
import io

import pytest
from django.core.management import call_command

from webapp.results.models import Experiment

pytestmark = pytest.mark.django_db


@pytest.fixture
def board(demo_leaderboards, monkeypatch, settings):
    from tests.support.demo_builds import build_demo
    from webapp.results.management.commands import load_demo

    monkeypatch.setattr(load_demo, "build_demo", build_demo)
    call_command("load_demo", data_dir=settings.MLEBOARD_DATA_DIR, seeds=1)
    call_command("load_published_results")


def test_the_api_lists_references_after_the_agents_unranked(client, board):
    entries = client.get("/api/leaderboard/").json()["entries"]
    synthetic = [e["synthetic"] for e in entries]
    assert synthetic == sorted(synthetic) and synthetic.count(True) == 3
    assert [e["rank"] for e in entries if e["synthetic"]] == [None] * 3
    agents = [e["rank"] for e in entries if not e["synthetic"]]
    assert agents == list(range(1, len(agents) + 1))
    assert {e["source"] for e in entries if e["synthetic"]} == {"reference"}
    assert client.get("/", {"format": "json"}).json()["entries"] == entries


def test_only_references_are_still_unranked(client, board):
    entries = client.get("/api/leaderboard/", {"source": "reference"}).json()["entries"]
    assert len(entries) == 3 and {e["rank"] for e in entries} == {None}
    page = client.get("/", {"source": "reference"}).content.decode()
    assert "No agent matches these filters" in page and 'id="references-table"' in page


def test_the_csv_ranks_only_the_agents(client, board):
    rows = list(csv.DictReader(io.StringIO(client.get("/", {"format": "csv"}).content.decode())))
    references = [r for r in rows if r["provenance"] == "reference"]
    assert len(references) == 3 and rows[-3:] == references
    assert {r["rank"] for r in references} == {""}
    assert Experiment.objects.count() == len(rows)


def test_compare_of_a_mixed_selection_pairs_those_sharing_a_split(client, board):
    published = Experiment.objects.exclude(published_figures={}).order_by("pk").first()
    first, second = Experiment.objects.filter(source="reference").order_by("pk")[:2]
    ids = f"{published.pk},{first.pk},{second.pk}"
    answer = client.get("/api/compare/", {"experiments": ids}).json()
    assert answer["common_splits"] == [] and answer["split"] == ""
    compared = [c for c in answer["comparisons"] if "error" not in c]
    assert [(c["a"], c["b"], c["split"], c["kind"]) for c in compared] == [
        (first.name, second.name, "demo", "paired")
    ]
    unshared = [(c["a"], c["b"]) for c in answer["comparisons"] if c.get("error")]
    assert unshared == [(published.name, first.name), (published.name, second.name)]
    # A split all share is compared as before: the first against each other one.
    answer = client.get("/api/compare/", {"experiments": f"{first.pk},{second.pk}"}).json()
    assert answer["common_splits"] == ["demo"]
    assert [(c["a"], c["b"], c["split"]) for c in answer["comparisons"]] == [
        (first.name, second.name, "demo")
    ]
