"""The corrections log (``/changes/``, ``GET /api/changes/``, ``/changes/feed.atom``): each
kind of event appends one entry with the figures before it, filled in after it by the
refresh that stores them; the log is append-only; a person sees only what they may (a
private experiment's entries, figures and counts stay hidden); the API pages and refuses
bad queries with a 400; the feed is Atom."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET

import pytest
from django.db import DatabaseError, connection, transaction

from benchmark.catalogue import competitions_in_split
from benchmark.leaderboard import LeaderboardTable
from benchmark.published import PublishedEntry, PublishedFigure
from tests.support.corrections import SPLIT, medalled_run
from webapp.competitions.models import Competition, KnownIssue
from webapp.competitions.services import catalogue_sync, leaderboard_store
from webapp.corrections import record
from webapp.corrections.models import AppendOnly, Correction, CorrectionFigures, Kind
from webapp.corrections.selectors import PAGE_SIZE
from webapp.integrity import services as integrity
from webapp.results.grading.aggregates import experiment_aggregate_refresh
from webapp.results.models import Experiment
from webapp.results.services import published_entries_store

pytestmark = pytest.mark.django_db

ATOM = "{http://www.w3.org/2005/Atom}"


def only(kind: str) -> Correction:
    entries = list(Correction.objects.filter(kind=kind))
    assert len(entries) == 1, [str(e) for e in entries]
    return entries[0]


def figures_of(entry: Correction) -> list[CorrectionFigures]:
    return list(CorrectionFigures.objects.filter(correction=entry).order_by("pk"))


def api(client, **query):
    response = client.get("/api/changes/", query)
    assert response.status_code == 200, response.content
    return response.json()


# ---------------------------------------------------------------- each kind of event


def test_a_disqualification_and_its_reversal_fill_their_figures_on_the_refresh(
    client, imported, reviewer
):
    a, _ = imported
    shown_before = record.any_medal(Experiment.objects.get(pk=a.pk))
    check = integrity.run_check_of(medalled_run(a))
    integrity.run_check_decide(check.pk, decision="disqualified", reason="copied", user=reviewer)

    entry = only(Kind.DISQUALIFIED)
    assert (entry.experiment_id, entry.role, entry.by) == (a.pk, "reviewer", reviewer)
    assert "copied" in entry.reason and "seed" in entry.reason
    (moved,) = figures_of(entry)
    assert moved.before == shown_before and moved.pending and moved.after is None
    assert SPLIT in shown_before
    # The page says pending: the figures after are not computed yet.
    html = client.get("/changes/").content.decode()
    assert "pending" in html and "Disqualification" in html

    experiment_aggregate_refresh(a.pk)
    moved.refresh_from_db()
    after = record.any_medal(Experiment.objects.get(pk=a.pk))
    assert not moved.pending and moved.after == after
    assert after[SPLIT]["mean"] < shown_before[SPLIT]["mean"]
    row = api(client)["results"][0]
    assert row["kind"] == "disqualified" and row["who"] == "reviewer"
    assert row["before"] == shown_before and row["after"] == after and not row["pending"]
    assert row["subject"]["type"] == "experiment" and row["subject"]["id"] == str(a.pk)

    integrity.run_check_decide(check.pk, decision="reopen", reason="", user=reviewer)
    reversal = only(Kind.REINSTATED)
    (back,) = figures_of(reversal)
    assert back.before == after and back.pending
    experiment_aggregate_refresh(a.pk)
    back.refresh_from_db()
    assert back.after == shown_before
    # Deciding again without changing whether it counts is not an event.
    integrity.run_check_decide(check.pk, decision="reviewed_ok", reason="fine", user=reviewer)
    assert Correction.objects.filter(kind=Kind.REINSTATED).count() == 1


def test_a_regrade_is_filled_only_once_every_run_is_graded_again(tmp_path, settings):
    from tests.support.demo_builds import build_demo
    from webapp.results.grading.services import run_grade
    from webapp.results.models import Run
    from webapp.results.services import agent_get_or_create
    from webapp.results.uploads.services import experiment_regrade

    settings.MLEBOARD_DATA_DIR = tmp_path / "data"
    build = build_demo(settings.MLEBOARD_DATA_DIR, seeds=1, competitions=("demo-wine",))
    catalogue_sync()
    from django.contrib.auth import get_user_model

    owner = get_user_model().objects.create_user("olga", password="pw-olga-123")
    experiment = Experiment.objects.create(
        name="e",
        agent=agent_get_or_create("s", "m"),
        source=Experiment.Source.GRADED,
        owner=owner,
        is_published=True,
    )
    submissions = build.submissions["linear"]
    run = Run.objects.create(
        experiment=experiment,
        competition=Competition.objects.get(slug="demo-wine"),
        seed=0,
        submission_path=str(submissions[0]["demo-wine"]),
    )
    run_grade(run.pk)
    experiment_aggregate_refresh(experiment.pk)
    first = record.any_medal(Experiment.objects.get(pk=experiment.pk))
    assert first, "the graded run gives figures"

    # Graded again with no submission: the run is invalid now, its figures drop to 0.
    Run.objects.filter(pk=run.pk).update(submission_path="")
    assert experiment_regrade(experiment, by=owner) == 1
    entry = only(Kind.REGRADE)
    assert entry.role == "submitter" and "1 run graded again" in entry.reason
    (moved,) = figures_of(entry)
    assert moved.before == first
    # A refresh while the run waits for grading does not fill it: not settled yet.
    experiment_aggregate_refresh(experiment.pk)
    moved.refresh_from_db()
    assert moved.pending

    run_grade(run.pk)
    experiment_aggregate_refresh(experiment.pk)
    moved.refresh_from_db()
    assert not moved.pending
    assert moved.after == record.any_medal(Experiment.objects.get(pk=experiment.pk))
    assert all(value["mean"] == 0 for value in moved.after.values())


def test_a_known_issue_added_and_removed_moves_the_clean_subset(client, imported):
    a, b = imported
    slug = competitions_in_split(SPLIT)[0].id
    competition = Competition.objects.get(slug=slug)
    clean_before = {e.pk: record.any_medal(e, clean=True) for e in (a, b)}
    issue = KnownIssue.objects.create(
        competition=competition, kind=KnownIssue.Kind.LEAKAGE, note="the test labels leak"
    )
    added = only(Kind.ISSUE_ADDED)
    assert added.competition == competition and added.role == "operator"
    assert "the test labels leak" in added.reason
    moved = figures_of(added)
    assert {m.experiment_id for m in moved} == {a.pk, b.pk}
    assert all(m.clean and m.pending for m in moved)
    assert {m.experiment_id: m.before for m in moved} == clean_before

    for e in (a, b):
        experiment_aggregate_refresh(e.pk)
    for m in moved:
        m.refresh_from_db()
        assert m.after == record.any_medal(Experiment.objects.get(pk=m.experiment_id), clean=True)
        assert m.after != m.before  # one competition fewer in the clean subset

    issue.delete()
    removed = only(Kind.ISSUE_REMOVED)
    assert {m.experiment_id for m in figures_of(removed)} == {a.pk, b.pk}
    row = api(client, kind="known_issue_removed")["results"][0]
    assert row["subject"] == {
        "type": "competition",
        "id": slug,
        "name": slug,
        "url": f"http://testserver/competitions/{slug}/",
    }
    assert row["before"] is None and len(row["figures"]) == 2 and row["pending"]


def test_a_new_leaderboard_version_is_logged_not_the_first(client):
    catalogue_sync()
    competition = Competition.objects.get(slug="spaceship-titanic")

    def table(n: int) -> LeaderboardTable:
        scores = tuple(round(0.85 - i * 0.002, 5) for i in range(n))
        return LeaderboardTable(scores, (None,) * n, (None,) * n, (None,) * n, "mlebench", False)

    leaderboard_store(competition, table(150), source_name="first")
    assert not Correction.objects.filter(kind=Kind.LEADERBOARD).exists()
    leaderboard_store(competition, table(120), source_name="kaggle export")
    entry = only(Kind.LEADERBOARD)
    assert entry.competition == competition and entry.role == "operator"
    assert "Version 2" in entry.reason and "120 teams" in entry.reason
    assert "kaggle export" in entry.reason
    assert not figures_of(entry)


def test_published_figures_replaced_and_withdrawn(client):
    def entry(mean: float, agent: str = "aide") -> PublishedEntry:
        return PublishedEntry(
            agent=agent,
            llm="o1",
            figures={
                "all": PublishedFigure(mean, 1.1),
                "low": PublishedFigure(mean * 2, 2.0),
            },
            runtime_hours=24,
            date=dt.date(2024, 10, 1),
        )

    published_entries_store([entry(16.9), entry(4.4, "mlab")])
    assert not Correction.objects.exists()  # a first import corrects nothing
    published_entries_store([entry(17.2), entry(4.4, "mlab")])
    replaced = only(Kind.PUBLISHED)
    (moved,) = figures_of(replaced)
    assert moved.before["all"] == {"mean": 16.9, "standard_error": 1.1}
    assert moved.after["all"] == {"mean": 17.2, "standard_error": 1.1}
    assert not moved.pending  # published figures are stored as given: filled at once
    html = client.get("/changes/").content.decode()
    assert "All 16.9% → 17.2%" in html and "Low (Lite) 33.8% → 34.4%" in html

    published_entries_store([entry(17.2)])
    gone = Correction.objects.filter(kind=Kind.PUBLISHED).exclude(pk=replaced.pk).get()
    assert gone.experiment is None and gone.public_when_gone
    assert gone.subject_name == entry(4.4, "mlab").name
    # Public: the entry was; its subject is no longer linked.
    row = next(r for r in api(client)["results"] if r["id"] == gone.pk)
    assert row["subject"] == {
        "type": "experiment",
        "id": None,
        "name": entry(4.4, "mlab").name,
        "url": None,
    }
    assert row["before"]["all"]["mean"] == 4.4 and row["after"] == {}


def test_catalogue_changes_and_a_retired_competition(imported):
    a, b = imported
    slug = competitions_in_split(SPLIT)[1].id
    Competition.objects.filter(slug=slug).update(name="a stale name")
    catalogue_sync()
    entry = only(Kind.CATALOGUE)
    assert entry.subject_type == "catalogue" and entry.role == "system"
    assert slug in entry.reason and "facts changed" in entry.reason
    catalogue_sync()  # nothing changes: nothing logged
    assert Correction.objects.filter(kind=Kind.CATALOGUE).count() == 1

    competition = Competition.objects.get(slug=slug)
    competition.retired = True
    competition.save()
    retired = Correction.objects.filter(kind=Kind.CATALOGUE, competition=competition).get()
    assert "Retired" in retired.reason
    assert {m.experiment_id for m in figures_of(retired)} == {a.pk, b.pk}


# ---------------------------------------------------------------- append-only


def test_the_log_refuses_changes_and_deletions(imported, reviewer):
    a, _ = imported
    check = integrity.run_check_of(medalled_run(a))
    integrity.run_check_decide(check.pk, decision="disqualified", reason="copied", user=reviewer)
    entry = only(Kind.DISQUALIFIED)
    (moved,) = figures_of(entry)

    entry.reason = "nothing happened"
    with pytest.raises(AppendOnly):
        entry.save()
    with pytest.raises(AppendOnly):
        entry.delete()
    with pytest.raises(AppendOnly):
        Correction.objects.filter(pk=entry.pk).update(reason="rewritten")
    with pytest.raises(AppendOnly):
        Correction.objects.all().delete()
    with pytest.raises(AppendOnly):
        CorrectionFigures.objects.filter(pk=moved.pk).update(before={})
    assert Correction.objects.get(pk=entry.pk).reason != "nothing happened"

    if connection.vendor == "postgresql":
        # Below the model too: the database refuses what the model does not send.
        for sql in (
            "UPDATE corrections_correction SET reason = 'x' WHERE id = %s",
            "DELETE FROM corrections_correction WHERE id = %s",
            "UPDATE corrections_correctionfigures SET before = '{}' WHERE correction_id = %s",
        ):
            with pytest.raises(DatabaseError), transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute(sql, [entry.pk])
        # The figures after are filled once, never again.
        experiment_aggregate_refresh(a.pk)
        with pytest.raises(DatabaseError), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(
                    "UPDATE corrections_correctionfigures SET after = '{}' WHERE id = %s",
                    [moved.pk],
                )

    # What an entry names may be deleted: the entry stays, with the name it had.
    name = a.name
    Experiment.objects.filter(pk=a.pk).delete()
    entry = Correction.objects.get(pk=entry.pk)
    assert entry.experiment is None and entry.subject_name == name


# ---------------------------------------------------------------- who sees what


def test_a_private_experiments_entries_figures_and_counts_stay_hidden(
    client, imported, reviewer, django_user_model
):
    a, b = imported
    owner = django_user_model.objects.create_user("pia", password="pw-pia-123")
    Experiment.objects.filter(pk=b.pk).update(is_published=False, owner=owner, name="secret-b")
    b = Experiment.objects.get(pk=b.pk)
    check = integrity.run_check_of(medalled_run(b))
    integrity.run_check_decide(check.pk, decision="disqualified", reason="copied", user=reviewer)
    KnownIssue.objects.create(
        competition=Competition.objects.get(slug=competitions_in_split(SPLIT)[0].id),
        kind=KnownIssue.Kind.LEAKAGE,
        note="labels leak",
    )

    # A visitor: the known issue (public) with A's figures only; nothing of B.
    page = api(client)
    assert page["count"] == 1 and [r["kind"] for r in page["results"]] == ["known_issue_added"]
    assert [f["experiment"]["id"] for f in page["results"][0]["figures"]] == [a.pk]
    html = client.get("/changes/").content.decode()
    assert "secret-b" not in html and "kind-disqualified" not in html
    assert "1 entry" in html
    feed = client.get("/changes/feed.atom").content.decode()
    assert "secret-b" not in feed and "copied" not in feed
    assert api(client, kind="disqualified") == {
        "count": 0,
        "page": 1,
        "pages": 1,
        "next": None,
        "previous": None,
        "results": [],
    }

    # Its owner sees both, and B's figures in the known issue's entry.
    client.force_login(owner)
    page = api(client)
    assert page["count"] == 2
    issue = next(r for r in page["results"] if r["kind"] == "known_issue_added")
    assert {f["experiment"]["id"] for f in issue["figures"]} == {a.pk, b.pk}
    dq = next(r for r in page["results"] if r["kind"] == "disqualified")
    # A reviewer acted: the owner is told the role, not the name.
    assert dq["who"] == "reviewer" and "rita" not in client.get("/changes/").content.decode()

    # Publishing it lists it for everyone.
    client.logout()
    Experiment.objects.filter(pk=b.pk).update(is_published=True)
    assert api(client)["count"] == 2


def test_names_only_for_those_who_may_see_them(client, imported, reviewer, django_user_model):
    a, _ = imported
    check = integrity.run_check_of(medalled_run(a))
    integrity.run_check_decide(check.pk, decision="disqualified", reason="copied", user=reviewer)
    assert api(client)["results"][0]["who"] == "reviewer"
    client.force_login(reviewer)
    assert api(client)["results"][0]["who"] == "reviewer"
    admin = django_user_model.objects.create_superuser("ada", password="pw-ada-123")
    client.force_login(admin)
    assert api(client)["results"][0]["who"] == "rita (reviewer)"


# ---------------------------------------------------------------- paging, 400s, the feed


def many_entries(n: int) -> None:
    for i in range(n):
        record.append(Kind.CATALOGUE, reason=f"change {i}", role="system")


def test_the_api_and_the_page_are_paged_newest_first(client):
    many_entries(PAGE_SIZE + 5)
    first = api(client)
    assert first["count"] == PAGE_SIZE + 5 and first["pages"] == 2
    assert len(first["results"]) == PAGE_SIZE
    assert first["results"][0]["reason"] == f"change {PAGE_SIZE + 4}"
    assert first["previous"] is None and first["next"].endswith("?page=2")
    second = api(client, page=2)
    assert [r["reason"] for r in second["results"]] == [f"change {i}" for i in range(4, -1, -1)]
    assert second["next"] is None
    html = client.get("/changes/", {"page": 2}).content.decode()
    assert "page 2 of 2" in html and "change 0" in html and f"change {PAGE_SIZE}" not in html
    assert api(client, kind="catalogue", page=2)["next"] is None
    assert api(client, kind="regrade")["count"] == 0


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ({"page": "abc"}, "page must be a whole number from 1"),
        ({"page": "0"}, "page must be a whole number from 1"),
        ({"page": "-1"}, "page must be a whole number from 1"),
        ({"page": "9" * 40}, "page must be a whole number from 1"),
        ({"kind": "rumour"}, "kind must be one of regrade, disqualified"),
    ],
)
def test_bad_page_or_kind_is_a_400_that_says_why(client, query, says):
    many_entries(2)
    response = client.get("/api/changes/", query)
    assert response.status_code == 400
    assert says in response.json()["error"]
    page = client.get("/changes/", query)
    assert page.status_code == 400
    assert says in page.content.decode()


def test_a_page_past_the_last_is_a_404_that_says_the_last(client):
    many_entries(2)
    for query in ({"page": "3"}, {"page": "9" * 19}, {"page": "2", "kind": "regrade"}):
        response = client.get("/api/changes/", query)
        assert response.status_code == 404
        assert "is past the last page (1)" in response.json()["error"]
        page = client.get("/changes/", query)
        assert page.status_code == 404 and "is past the last page (1)" in page.content.decode()


def test_the_feed_is_atom(client, imported, reviewer):
    a, _ = imported
    check = integrity.run_check_of(medalled_run(a))
    integrity.run_check_decide(check.pk, decision="disqualified", reason="copied", user=reviewer)
    experiment_aggregate_refresh(a.pk)
    response = client.get("/changes/feed.atom")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    root = ET.fromstring(response.content)
    assert root.tag == f"{ATOM}feed"
    (item,) = root.findall(f"{ATOM}entry")
    assert item.find(f"{ATOM}title").text == f"Disqualification: {a.name}"
    summary = item.find(f"{ATOM}summary").text
    assert "copied" in summary and "By: reviewer." in summary and "→" in summary
    assert (
        item.find(f"{ATOM}link").get("href").endswith(f"/changes/#change-{only('disqualified').pk}")
    )


# ---------------------------------------------------------------- the page cache


@pytest.mark.django_db(transaction=True)
def test_a_new_entry_shows_at_once_on_cached_pages(settings):
    """The log's pages are cached for visitors and render again with each new entry (and
    each figure filled in), not at the next unrelated change."""
    from django.test import Client

    from webapp.edge import page_cache

    settings.MLEBOARD_PAGE_CACHE = True
    page_cache.clear()
    page_cache.changed()
    try:
        client = Client()
        many_entries(1)
        for url in ("/changes/", "/api/changes/"):
            first, second = client.get(url), client.get(url)
            assert (first["X-Page-Cache"], second["X-Page-Cache"]) == ("miss", "hit"), url
        record.append(Kind.CATALOGUE, reason="a second change", role="system")
        assert "a second change" in client.get("/changes/").content.decode()
        assert api(client)["count"] == 2
    finally:
        page_cache.clear()
