"""Every MLE-bench split by MLE-bench's names: ``systemcard`` is a split of the catalogue
with figures wherever an experiment covers it (pages, exports, API), and ``?split=`` takes
a slug, an alias (``lite``, ``split75``) or MLE-bench's file name everywhere; any other
name is a 400 that lists the valid ones."""

import csv
import io

import pytest
from django.http import QueryDict
from django.urls import reverse

from benchmark.splits import VALID_FIGURE_SPLIT_NAMES, VALID_SPLIT_NAMES
from tests.support.factories import import_runs
from tests.support.mlebench_material import SYSTEM_CARD
from webapp.competitions.models import Competition, Split
from webapp.competitions.services import catalogue_sync
from webapp.edge.page_cache import routes
from webapp.results.grading.aggregates import experiment_aggregate_refresh
from webapp.results.models import Experiment

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


@pytest.fixture
def experiments(tmp_path):
    """One experiment on the 30 system-card competitions (6 seeds: its page folds them, one
    row a competition), one on all 75 (which covers systemcard too)."""
    import_runs(tmp_path / "card", {"card-agent": 6}, split="systemcard", seed=1)
    import_runs(tmp_path / "all", {"full-agent": 1}, split="all", seed=2)
    return Experiment.objects.get(name="card-agent"), Experiment.objects.get(name="full-agent")


def test_the_catalogue_holds_systemcard_with_its_30_competitions():
    split = Split.objects.get(slug="systemcard")
    assert split.name == "System card"
    members = Competition.objects.filter(splits=split).values_list("slug", flat=True)
    assert sorted(members) == sorted(SYSTEM_CARD)
    # Between All and Dev in the catalogue's order.
    order = list(Split.objects.values_list("slug", flat=True))
    assert order.index("all") < order.index("systemcard") < order.index("dev")


@pytest.mark.parametrize("alias, slug", [("lite", "low"), ("split75", "all"), ("LOW.txt", "low")])
def test_an_alias_lists_the_competitions_of_its_split(client, alias, slug):
    page = client.get(reverse("competition-list"), {"split": alias})
    assert page.status_code == 200
    assert page.content == client.get(reverse("competition-list"), {"split": slug}).content
    api = client.get("/api/competitions/", {"split": alias})
    assert api.json() == client.get("/api/competitions/", {"split": slug}).json()


def test_systemcard_filters_the_competitions(client):
    listed = client.get("/api/competitions/", {"split": "systemcard"}).json()
    assert sorted(c["id"] for c in listed) == sorted(SYSTEM_CARD)
    assert all("systemcard" in c["splits"] for c in listed)
    page = client.get(reverse("competition-list"), {"split": "systemcard.txt"})
    assert page.content.decode().count("<tr") == 30 + 1  # the header row


def _assert_refused(response, name: str, valid=VALID_SPLIT_NAMES):
    assert response.status_code == 400, response.content[:300]
    if response["Content-Type"].startswith("application/json"):
        body = response.json()
        assert f"unknown split '{name}'" in body["detail"]
        assert body["valid"] == list(valid)
    else:
        text = response.content.decode()
        assert f"Unknown split &#x27;{name}&#x27;" in text
        for valid_name in valid:
            assert f"<code>{valid_name}</code>" in text


def test_an_unknown_split_is_a_400_listing_the_valid_names(client, experiments):
    card, full = experiments
    pair = f"{card.pk},{full.pk}"
    _assert_refused(client.get(reverse("competition-list"), {"split": "nope"}), "nope")
    _assert_refused(client.get("/api/competitions/", {"split": "nope"}), "nope")
    for response in (
        client.get(reverse("experiment-detail", args=[card.pk]), {"split": "nope"}),
        client.get(reverse("compare"), {"experiments": pair, "split": "nope"}),
        client.get("/api/compare/", {"experiments": pair, "split": "nope"}),
    ):
        _assert_refused(response, "nope", VALID_FIGURE_SPLIT_NAMES)
    # MLE-bench's one-competition file says why it is no split here.
    refused = client.get("/api/competitions/", {"split": "spaceship-titanic"}).json()
    assert "it is a competition here, not a split" in refused["detail"]
    # An empty value asks for no split.
    assert client.get("/api/competitions/", {"split": ""}).status_code == 200


def test_a_launch_takes_a_split_by_any_name_and_refuses_others(client, django_user_model):
    from django.contrib.auth.models import Permission
    from rest_framework.authtoken.models import Token

    user = django_user_model.objects.create_user("ada", password="pw-ada-12345")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    token = Token.objects.create(user=user).key
    response = client.post(
        "/api/launches/",
        {"agent": "dummy", "split": "nope"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Token {token}",
    )
    assert response.status_code == 400
    assert "systemcard" in str(response.json()["error"]["split"])


def test_an_experiment_covering_systemcard_has_its_figures_everywhere(client, experiments):
    card, full = experiments
    assert list(card.aggregate.figures["splits"]) == ["systemcard"]
    assert {"low", "all", "systemcard"} <= set(full.aggregate.figures["splits"])
    figures = card.aggregate.figures["splits"]["systemcard"]
    assert figures["num_competitions_per_seed"] == 30
    medal = figures["metrics"]["any_medal_percentage"]

    # The experiment's page: the split chosen, by its slug or MLE-bench's file name.
    url = reverse("experiment-detail", args=[card.pk])
    page = client.get(url).content.decode()
    assert '<option value="systemcard" selected' in page and "System card" in page
    # One competition's seeds, its link back naming the split by its slug.
    seeds = {"seeds": SYSTEM_CARD[0]}
    by_file_name = client.get(url, {"split": "systemcard.txt", **seeds}).content.decode()
    assert by_file_name == client.get(url, {"split": "systemcard", **seeds}).content.decode()
    assert 'id="all-competitions"' in by_file_name and "systemcard.txt" not in by_file_name
    # The experiment's API.
    api = client.get(f"/api/experiments/{card.pk}/").json()
    assert api["figures"]["systemcard"]["metrics"]["any_medal_percentage"] == medal

    # The leaderboard, its API and its exports: a System card column, ranked on All (the
    # full run) with the card-only run unranked, as any split short of the ranking one.
    entries = {e["name"]: e for e in client.get("/api/leaderboard/").json()["entries"]}
    assert entries["card-agent"]["splits"]["systemcard"]["mean"] == medal["mean"]
    assert entries["full-agent"]["splits"]["systemcard"]["mean"] is not None
    home = client.get("/").content.decode()
    assert 'data-split="systemcard">System card</th>' in home
    assert client.get("/", {"format": "json"}).json()["entries"] == list(
        client.get("/api/leaderboard/").json()["entries"]
    )
    rows = list(csv.DictReader(io.StringIO(client.get("/", {"format": "csv"}).content.decode())))
    by_name = {row["name"]: row for row in rows}
    assert float(by_name["card-agent"]["systemcard_mean"]) == pytest.approx(medal["mean"])
    assert by_name["card-agent"]["all_mean"] == "" and by_name["full-agent"]["all_mean"]

    # Compare, page and API: the two share systemcard only among the splits card has.
    pair = f"{card.pk},{full.pk}"
    result = client.get("/api/compare/", {"experiments": pair}).json()
    assert result["split"] == "systemcard" and result["common_splits"] == ["systemcard"]
    assert result["comparisons"][0]["n_competitions"] == 30
    by_file_name = client.get("/api/compare/", {"experiments": pair, "split": "systemcard.txt"})
    assert by_file_name.json() == result
    compare = client.get(reverse("compare"), {"experiments": pair}).content.decode()
    assert "System card" in compare


def test_alias_and_slug_give_the_same_experiment_page(client, experiments):
    _, full = experiments
    url = reverse("experiment-detail", args=[full.pk])
    low = client.get(url, {"split": "low"})
    assert low.status_code == 200 and '<option value="low" selected' in low.content.decode()
    assert client.get(url, {"split": "lite"}).content == low.content
    assert (
        client.get(url, {"split": "split75"}).content == client.get(url, {"split": "all"}).content
    )


def test_the_page_cache_keys_a_split_by_its_slug():
    for path in ("/competitions/", "/experiments/1/", "/compare/", "/api/compare/"):
        route = routes.match(path).route
        for alias, slug in (("lite", "low"), ("Split75", "all"), ("systemcard.txt", "systemcard")):
            keyed = routes.canonical_query(route, QueryDict(f"split={alias}"))
            assert keyed.urlencode() == f"split={slug}"
    # An unknown name is keyed as given (its 400 is never stored).
    route = routes.match("/competitions/").route
    assert routes.canonical_query(route, QueryDict("split=nope")).urlencode() == "split=nope"


def test_a_catalogue_change_of_split_members_makes_figures_due(experiments):
    """An experiment's figures stored before the catalogue had systemcard get it: the
    catalogue's sync marks them due, and the refresh computes the new split."""
    _, full = experiments
    through = Competition.splits.through
    through.objects.filter(split_id="systemcard").delete()
    aggregate = full.aggregate
    del aggregate.figures["splits"]["systemcard"]
    aggregate.save()
    Experiment.objects.filter(pk=full.pk).update(figures_due_since=None)

    catalogue_sync()
    full.refresh_from_db()
    assert full.figures_due_since is not None
    assert through.objects.filter(split_id="systemcard").count() == 30
    experiment_aggregate_refresh(full.pk)
    full.refresh_from_db()
    assert "systemcard" in full.aggregate.figures["splits"]
    assert full.figures_due_since is None
