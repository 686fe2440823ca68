"""The anonymous page cache (webapp/edge/page_cache/): hits, conditional GET, and pages that
change the moment a report is graded, an experiment published or the curation edited;
never a signed-in view (webapp.edge.viewer_pages has those), a token request or a CSRF token
from the cache."""

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from django.urls import reverse

from tests.support.factories import FULL_DISCLOSURE
from tests.support.page_cache import state
from webapp.competitions.models import Competition, KnownIssue
from webapp.competitions.services import catalogue_sync
from webapp.edge import page_cache
from webapp.edge.page_cache import versions as page_cache_versions
from webapp.results.disclosure import disclosure_update
from webapp.results.models import Experiment, GradeReport
from webapp.results.services import agent_get_or_create

# Real commits: the cache is told of a change only once the change is committed.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("page_cache_on")]

PUBLIC = [
    "/",
    "/?clean=1",
    "/competitions/",
    "/competitions/spaceship-titanic/",
    "/api/leaderboard/",
    "/api/competitions/",
    "/api/competitions/spaceship-titanic/",
    "/api/experiments/",
]


def test_second_anonymous_request_is_a_hit_with_the_same_body(imported):
    client = Client()
    for url in PUBLIC + [
        f"/experiments/{Experiment.objects.first().pk}/",
        "/compare/?experiments={},{}".format(*Experiment.objects.values_list("pk", flat=True)),
    ]:
        first = client.get(url)
        second = client.get(url)
        assert first.status_code == second.status_code == 200, url
        assert (state(first), state(second)) == ("miss", "hit"), url
        assert first.content == second.content, url
        assert second["ETag"] == first["ETag"]
        assert second["Cache-Control"] == "public, max-age=0, must-revalidate"
        assert second["Content-Type"] == first["Content-Type"]
        assert "Set-Cookie" not in second.headers


def test_query_order_does_not_matter_and_values_do(imported):
    client = Client()
    assert state(client.get("/?clean=1&source=reported")) == "miss"
    assert state(client.get("/?source=reported&clean=1")) == "hit"
    assert state(client.get("/?source=verified&clean=1")) == "miss"


def test_etag_gives_304_until_something_changes(imported):
    client = Client()
    first = client.get("/api/leaderboard/")
    etag = first["ETag"]
    again = client.get("/api/leaderboard/", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b""
    assert again["ETag"] == etag
    assert client.get("/api/leaderboard/", HTTP_IF_NONE_MATCH=f'"x", W/{etag}').status_code == 304
    # A fresh rendering (a miss) answers 304 too when the body is the same.
    page_cache.changed()
    assert client.get("/api/leaderboard/", HTTP_IF_NONE_MATCH=etag).status_code == 304
    Experiment.objects.filter(name="aide-o1").update(name="aide-renamed")
    page_cache.changed()
    changed = client.get("/api/leaderboard/", HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert b"aide-renamed" in changed.content


def test_a_graded_report_shows_at_once(tmp_path, settings):
    from tests.support.demo_builds import build_demo
    from webapp.results.grading.services import run_grade
    from webapp.results.models import Run

    settings.MLEBOARD_DATA_DIR = tmp_path / "data"
    build = build_demo(settings.MLEBOARD_DATA_DIR, seeds=1, competitions=("demo-wine",))
    catalogue_sync()
    experiment = Experiment.objects.create(
        name="graded-here", agent=agent_get_or_create("s", "m"), is_published=True
    )
    run = Run.objects.create(
        experiment=experiment,
        competition=Competition.objects.get(slug="demo-wine"),
        seed=0,
        submission_path=str(build.submissions["linear"][0]["demo-wine"]),
    )
    client = Client()
    url = f"/api/experiments/{experiment.pk}/reports/"
    assert client.get(url).json() == []
    assert state(client.get(url)) == "hit"
    report = run_grade(run.pk)
    after = client.get(url)
    assert state(after) == "miss"
    assert [r["score"] for r in after.json()] == [report.score]


def test_figures_refreshed_show_at_once(imported):
    from webapp.results.grading.aggregates import experiment_aggregate_refresh

    client = Client()
    aide = Experiment.objects.get(name="aide-o1")
    before = client.get(f"/api/experiments/{aide.pk}/").json()["figures"]
    GradeReport.objects.filter(experiment=aide).update(
        any_medal=True, gold_medal=True, valid_submission=True, submission_exists=True
    )
    # A bulk update is seen by no signal: the refresh itself marks the pages changed.
    experiment_aggregate_refresh(aide.pk)
    after = client.get(f"/api/experiments/{aide.pk}/").json()["figures"]
    assert after != before
    assert after["low"]["metrics"]["any_medal_percentage"]["mean"] == 100.0


def test_publishing_and_withdrawing_show_at_once(imported):
    client = Client()
    staff = User.objects.create_superuser("admin", "a@example.org", "pw-admin-123")
    admin = Client()
    admin.force_login(staff)
    hidden = Experiment.objects.create(name="newly-published", agent=agent_get_or_create("x", "y"))
    disclosure_update(hidden, FULL_DISCLOSURE)  # publishing asks for every condition
    assert b"newly-published" not in client.get("/").content
    assert state(client.get("/")) == "hit"
    # Publishing through the admin's action (a bulk update, no signal).
    changelist = reverse("admin:results_experiment_changelist")
    response = admin.post(changelist, {"action": "publish", "_selected_action": [hidden.pk]})
    assert response.status_code == 302
    page = client.get("/")
    assert state(page) == "miss" and b"newly-published" in page.content
    assert b"newly-published" in client.get("/api/leaderboard/").content
    # Withdrawing by saving the model (a signal).
    hidden.is_published = False
    hidden.save()
    assert b"newly-published" not in client.get("/").content
    assert client.get(f"/experiments/{hidden.pk}/").status_code == 404


def test_curation_shows_at_once(imported):
    client = Client()
    url = "/competitions/spaceship-titanic/"
    note = "Test labels leaked in a public kernel (cache test)."
    assert note.encode() not in client.get(url).content
    assert state(client.get(url)) == "hit"
    issue = KnownIssue.objects.create(
        competition=Competition.objects.get(slug="spaceship-titanic"),
        kind=KnownIssue.Kind.LEAKAGE,
        note=note,
    )
    assert note.encode() in client.get(url).content
    assert note.encode() in client.get("/api/competitions/spaceship-titanic/").content
    issue.delete()
    assert note.encode() not in client.get(url).content


def test_signed_in_views_never_get_the_anonymous_copy(imported):
    """A signed-in person's page is theirs (``webapp.edge.viewer_pages``, tested in
    test_viewer_pages.py): never the anonymous copy, and it never becomes one."""
    owner = User.objects.create_user("owner", password="pw-owner-123")
    Experiment.objects.create(
        name="private-of-owner", agent=agent_get_or_create("p", "q"), owner=owner
    )
    anonymous = Client()
    assert state(anonymous.get("/")) == "miss"
    assert state(anonymous.get("/")) == "hit"
    signed_in = Client()
    signed_in.force_login(owner)
    mine = signed_in.get("/")
    assert state(mine) == "viewer-miss" and mine.headers["Cache-Control"] == "private, no-cache"
    assert b"private-of-owner" in mine.content and b"Sign out owner" in mine.content
    for response in (anonymous.get("/"), anonymous.get("/api/leaderboard/")):
        assert b"private-of-owner" not in response.content
    # A token on the API is a signed-in request too.
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=owner)
    api = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    for _ in range(2):
        response = api.get("/api/leaderboard/")
        assert state(response) is None and b"private-of-owner" in response.content


def test_a_messages_cookie_is_not_anonymous(imported):
    client = Client()
    client.get("/")
    client.cookies["messages"] = "anything"
    assert state(client.get("/")) is None


def test_no_csrf_token_in_cached_pages(imported):
    client = Client(enforce_csrf_checks=True)
    for url in PUBLIC:
        for response in (client.get(url), client.get(url)):
            assert b"csrfmiddlewaretoken" not in response.content, url
            assert "csrftoken" not in response.cookies, url
    # A page that uses the token sets its cookie: never stored, whatever its address.
    from django.middleware.csrf import get_token

    def view(request):
        from django.http import HttpResponse

        return HttpResponse(f'<input name="csrfmiddlewaretoken" value="{get_token(request)}">')

    middleware = page_cache.PageCacheMiddleware(view)
    for _ in range(2):
        request = RequestFactory().get("/competitions/uses-the-token/")
        response = middleware(request)
        assert state(response) is None and "ETag" not in response.headers
    # The login form is not a cached address.
    assert state(client.get("/accounts/login/")) is None


def test_errors_and_writes_are_not_cached(imported):
    client = Client()
    for _ in range(2):
        missing = client.get("/experiments/999999/")
        assert missing.status_code == 404 and state(missing) is None
        bad = client.get("/api/compare/?experiments=1")
        assert bad.status_code == 400 and state(bad) is None
    assert state(client.get("/api/schema/")) is None  # not a listed address


def test_head_is_served_from_the_get_entry(imported):
    client = Client()
    client.get("/competitions/")
    head = client.head("/competitions/")
    assert head.status_code == 200 and state(head) == "hit"


def test_off_with_the_setting(imported, settings):
    settings.MLEBOARD_PAGE_CACHE = False
    client = Client()
    for _ in range(2):
        response = client.get("/")
        assert state(response) is None and "ETag" not in response.headers


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_import_shows_at_once(tmp_path, jobs):
    from tests.support.factories import write_runs_folder
    from webapp.results.imports.reports import import_runs_folder

    catalogue_sync()
    client = Client()
    assert client.get("/api/leaderboard/").json()["entries"] == []
    assert state(client.get("/api/leaderboard/")) == "hit"
    runs = write_runs_folder(tmp_path / "runs", {"streamed-a": 2, "streamed-b": 3})
    result = import_runs_folder(runs, runs / "run_group_experiments.csv", publish=True, jobs=jobs)
    assert result.reports == 22 * 5 and len(result.experiments) == 2
    # Figures computed (in other processes with jobs=2) and no longer due.
    assert not Experiment.objects.filter(figures_due_since__isnull=False).exists()
    entries = client.get("/api/leaderboard/").json()["entries"]
    assert sorted(e["name"] for e in entries) == ["streamed-a", "streamed-b"]
    assert all(e["splits"]["low"]["mean"] is not None for e in entries)


def test_a_change_recorded_by_another_process_shows_at_once(imported):
    client = Client()
    client.get("/api/leaderboard/")
    assert state(client.get("/api/leaderboard/")) == "hit"
    Experiment.objects.filter(name="aide-o1").update(name="renamed-elsewhere")
    # What a grading worker's changed() leaves: a new version in the shared cache (this
    # process's copies of recent pages count only under the version they were made in).
    page_cache_versions._version_cache().set(
        page_cache_versions.VERSION_KEY, "another-process", timeout=None
    )
    response = client.get("/api/leaderboard/")
    assert state(response) == "miss" and b"renamed-elsewhere" in response.content
    assert state(client.get("/api/leaderboard/")) == "hit"


def test_gzip_for_clients_that_take_it(imported):
    import gzip

    client = Client()
    plain = client.get("/api/leaderboard/")
    for state_expected in ("hit", "hit"):
        packed = client.get("/api/leaderboard/", HTTP_ACCEPT_ENCODING="gzip, deflate, br")
        assert state(packed) == state_expected and packed["Content-Encoding"] == "gzip"
        assert gzip.decompress(packed.content) == plain.content
        assert int(packed["Content-Length"]) == len(packed.content) < len(plain.content)
    assert "Accept-Encoding" in packed["Vary"] and "Accept-Encoding" in plain["Vary"]
    assert "Content-Encoding" not in plain.headers
    # Each representation has its own ETag, and its own 304.
    assert packed["ETag"] != plain["ETag"]
    again = client.get(
        "/api/leaderboard/", HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=packed["ETag"]
    )
    assert again.status_code == 304
    assert client.get("/api/leaderboard/", HTTP_IF_NONE_MATCH=packed["ETag"]).status_code == 200


def test_a_new_release_of_the_static_files_has_pages_of_its_own(imported):
    """A page stored before a deploy links the stylesheet and scripts under hashed names
    the new release may not have: it is not served after one."""
    from django.contrib.staticfiles.storage import staticfiles_storage

    client = Client()
    assert state(client.get("/")) == "miss"
    assert state(client.get("/")) == "hit"
    released = staticfiles_storage.hashed_files
    staticfiles_storage.hashed_files = {**released, "css/site.css": "css/site.0123456789ab.css"}
    page_cache.static_release.cache_clear()
    try:
        assert state(client.get("/")) == "miss"
    finally:
        staticfiles_storage.hashed_files = released
        page_cache.static_release.cache_clear()
