"""The page cache's bounds (webapp/edge/page_cache/, webapp/edge/page_cache/routes.py): canonical
keys (unknown parameters, parameter order and Accept variants make no new entries, and
every parameter a public view reads is declared), scoped invalidation (private work
re-renders no public page; a public experiment's change re-renders the listings and its own
pages, not the other experiments'), and the Redis of its own with its bound set by the
site."""

import shutil
import socket
import subprocess

import pytest
from django.contrib.auth.models import User
from django.core.handlers.wsgi import WSGIRequest
from django.http import QueryDict
from django.test import Client

from tests.support.deployment import bare_env, manage_check
from tests.support.polling import wait_until
from webapp.edge import page_cache
from webapp.edge.page_cache import routes as page_cache_routes
from webapp.edge.page_cache import store as page_cache_store
from webapp.edge.page_cache import versions as page_cache_versions
from webapp.results.grading.aggregates import experiment_aggregate_refresh
from webapp.results.models import Experiment
from webapp.results.services import agent_get_or_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def page_cache_on(settings):
    settings.MLEBOARD_PAGE_CACHE = True
    page_cache.clear()
    page_cache.changed()
    yield
    page_cache.clear()


def state(response) -> str | None:
    return response.headers.get("X-Page-Cache")


# --- canonical keys --------------------------------------------------------------------------


def test_unknown_parameters_order_and_repeats_make_no_new_entry(imported):
    client = Client()
    assert state(client.get("/?clean=1&source=reported")) == "miss"
    first = client.get("/?clean=1&source=reported")
    for same in (
        "/?source=reported&clean=1",
        "/?source=reported&clean=1&utm_source=mail&_=1733",
        "/?clean=0&source=reported&clean=1",  # the last value is the one a view reads
        "/?zzz=%ff%fe&source=reported&clean=1",
    ):
        again = client.get(same)
        assert state(again) == "hit", same
        assert again.content == first.content, same
    # Values of parameters the page reads still make their own page.
    assert state(client.get("/?clean=1&source=verified")) == "miss"


def test_the_view_sees_only_the_declared_parameters(imported):
    """An unknown parameter is dropped from the request the view sees, so a page echoing
    its query (the leaderboard's filter links) is the page of its key."""
    page = Client().get("/?clean=1&planted_parameter=xyz")
    assert state(page) == "miss"
    assert b"planted_parameter" not in page.content


def test_accept_variants_make_no_new_entry_on_the_api(imported):
    client = Client()
    assert state(client.get("/api/leaderboard/")) == "miss"
    for accept in (
        "application/json",
        "application/json, text/plain, */*",
        "*/*;q=0.8",
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "application/*",
    ):
        response = client.get("/api/leaderboard/", HTTP_ACCEPT=accept)
        assert response.status_code == 200 and state(response) == "hit", accept
    # What JSON does not satisfy is the API's own answer, never stored.
    for _ in range(2):
        refused = client.get("/api/leaderboard/", HTTP_ACCEPT="text/csv")
        assert refused.status_code == 406 and state(refused) is None


def test_distinct_junk_addresses_store_one_page(imported):
    client = Client()
    client.get("/competitions/")
    for i in range(200):
        assert state(client.get(f"/competitions/?utm_campaign={i}&ref={i * 7}")) == "hit"
    assert len(page_cache_store._recent.entries) == 1


class _Recording(QueryDict):
    """A query that notes every parameter read from it, by name."""

    names: set[str] = set()
    multiple: set[str] = set()

    def get(self, key, default=None):
        self.names.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.names.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.names.add(key)
        return super().__contains__(key)

    def getlist(self, key, default=None):
        self.names.add(key)
        self.multiple.add(key)
        return super().getlist(key, default)


def test_date_bounds_that_keep_the_same_results_are_one_address(imported):
    """?since= of any day before the first result (or a value the view cannot read) is the
    page without it; two days between the same two results' dates are one page."""
    import datetime as dt

    early, late = dt.date(2024, 3, 1), dt.date(2024, 9, 1)
    first, second = Experiment.objects.order_by("pk")
    Experiment.objects.filter(pk=first.pk).update(date=early)
    Experiment.objects.filter(pk=second.pk).update(date=late)
    page_cache.changed()
    client = Client()
    plain = client.get("/")
    assert state(plain) == "miss"
    for since in ["1990-01-01", "2024-02-29", "2024-03-01", "not-a-date", "20240101", "²"]:
        again = client.get(f"/?since={since}")
        assert state(again) == "hit", since
        assert again.content == plain.content, since
    for path in ("/", "/api/leaderboard/"):
        between = [f"{path}?since=2024-0{month}-15" for month in range(3, 9)]
        assert state(client.get(between[0])) == "miss"
        assert {state(client.get(address)) for address in between[1:]} == {"hit"}, path
    kept = client.get("/api/leaderboard/?since=2024-04-02").json()["entries"]
    assert [row["name"] for row in kept] == [second.name]
    # Past the last result: every such day is one (empty) page.
    assert state(client.get("/?until=2030-01-01")) == "hit"  # keeps every result: plain
    assert state(client.get("/?since=2030-01-01")) == "miss"
    assert state(client.get("/?since=2031-06-30")) == "hit"
    assert state(client.get("/?until=2000-01-01")) == "miss"
    assert state(client.get("/?until=2001-01-01")) == "hit"


def test_an_address_keeps_a_bounded_number_of_variants(imported):
    client = Client()
    for i in range(page_cache.VARIANTS_MAX + 40):
        assert client.get(f"/competitions/?q=search-{i}").status_code == 200
    variants = page_cache_store._recent.groups["/competitions/"]
    assert len(variants) == page_cache.VARIANTS_MAX
    # The most recent are kept, the oldest went.
    assert state(client.get(f"/competitions/?q=search-{page_cache.VARIANTS_MAX + 39}")) == "hit"
    assert state(client.get("/competitions/?q=search-0")) == "miss"


def test_every_parameter_a_public_view_reads_is_declared(imported, settings, monkeypatch):
    """A view that reads a parameter its route does not declare would lose it for
    anonymous visitors (the cache drops it): declare it in page_cache_routes.ROUTES."""
    settings.MLEBOARD_PAGE_CACHE = False  # the views see the query as sent
    monkeypatch.setattr(
        WSGIRequest,
        "GET",
        property(lambda request: _Recording(request.META.get("QUERY_STRING", ""))),
    )
    a, b = Experiment.objects.values_list("pk", flat=True)[:2]
    samples = [
        "/",
        "/?format=json",
        "/competitions/",
        "/competitions/spaceship-titanic/",
        f"/experiments/{a}/",
        f"/experiments/{a}/reports.json",
        f"/experiments/{a}/reports.csv",
        f"/compare/?experiments={a},{b}",
        "/api/leaderboard/",
        f"/api/compare/?experiments={a},{b}",
        "/api/competitions/",
        "/api/competitions/spaceship-titanic/",
        "/api/experiments/",
        f"/api/experiments/{a}/",
        f"/api/experiments/{a}/reports/",
        "/changes/",
        "/api/changes/",
    ]
    covered = {page_cache_routes.match(url.split("?")[0]).route for url in samples}
    assert covered == set(page_cache_routes.ROUTES), "a route without a sample address"
    client = Client()
    for url in samples:
        _Recording.names, _Recording.multiple = set(), set()
        assert client.get(url).status_code == 200, url
        route = page_cache_routes.match(url.split("?")[0]).route
        assert _Recording.names <= route.parameters, (url, _Recording.names - route.parameters)
        # The key keeps one value per parameter: a view reading several needs more.
        assert not _Recording.multiple, (url, _Recording.multiple)


# --- scoped invalidation -----------------------------------------------------------------------


def _public_pages(experiments) -> list[str]:
    return ["/", "/api/leaderboard/", "/competitions/spaceship-titanic/"] + [
        f"/experiments/{pk}/" for pk in experiments
    ]


def test_private_work_renders_no_public_page_again(imported):
    client = Client()
    public = list(Experiment.objects.values_list("pk", flat=True))
    pages = _public_pages(public)
    for url in pages:
        client.get(url)
    owner = User.objects.create_user("private-owner", password="pw-owner-123")
    # What a private upload does: a new experiment (and its agent), its reports, its
    # figures refreshed; none of it public.
    private = Experiment.objects.create(
        name="private-work", agent=agent_get_or_create("private-s", "private-m"), owner=owner
    )
    experiment_aggregate_refresh(private.pk)
    page_cache.experiments_changed([private.pk])
    for url in pages:
        assert state(client.get(url)) == "hit", url


def test_a_public_experiment_renders_the_listings_and_its_pages_only(imported):
    client = Client()
    aide, other = Experiment.objects.order_by("pk")[:2]
    pages = _public_pages([aide.pk, other.pk]) + [f"/api/experiments/{other.pk}/"]
    for url in pages:
        client.get(url)
    experiment_aggregate_refresh(aide.pk)  # what grading one of its runs ends with
    assert state(client.get(f"/experiments/{aide.pk}/")) == "miss"
    for url in ("/", "/api/leaderboard/", "/competitions/spaceship-titanic/"):
        assert state(client.get(url)) == "miss", url
    assert state(client.get(f"/experiments/{other.pk}/")) == "hit"
    assert state(client.get(f"/api/experiments/{other.pk}/")) == "hit"


def test_publishing_and_withdrawing_render_every_page(imported):
    client = Client()
    aide, other = Experiment.objects.order_by("pk")[:2]
    hidden = Experiment.objects.create(name="to-publish", agent=agent_get_or_create("p", "q"))
    client.get(f"/experiments/{other.pk}/")
    hidden.is_published = True
    hidden.save()
    assert state(client.get(f"/experiments/{other.pk}/")) == "miss"
    assert state(client.get(f"/experiments/{other.pk}/")) == "hit"
    hidden.is_published = False
    hidden.save()
    assert state(client.get(f"/experiments/{other.pk}/")) == "miss"
    # A private experiment saved again, still private: nothing.
    hidden.name = "still-private"
    hidden.save()
    assert state(client.get(f"/experiments/{other.pk}/")) == "hit"


# --- the Redis of its own ----------------------------------------------------------------------


@pytest.fixture
def private_redis(tmp_path):
    """A redis-server of this test's own, with no bound of its own."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.fail("redis-server is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", tmp_path],
        stdout=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(port=port)

    def listening() -> bool:
        try:
            return bool(client.ping())
        except redis.ConnectionError:
            return False

    wait_until(listening, 30, 0.05)
    yield f"redis://127.0.0.1:{port}/0", client
    process.terminate()
    process.wait(10)


def test_the_site_bounds_the_pages_redis(imported, settings, private_redis, monkeypatch):
    url, client = private_redis
    assert client.config_get("maxmemory")["maxmemory"] == "0"
    without = dict(settings.CACHES)
    settings.CACHES = {
        **without,
        "pages": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "pages",
        },
    }
    settings.MLEBOARD_CACHE_MAX_BYTES = 32 * 1024**2
    monkeypatch.setattr(page_cache_versions, "_bounded_checked", False)
    page_cache.clear()
    browser = Client()
    assert state(browser.get("/api/leaderboard/")) == "miss"
    assert client.config_get("maxmemory")["maxmemory"] == str(32 * 1024**2)
    assert client.config_get("maxmemory-policy")["maxmemory-policy"] == "allkeys-lru"
    # Pages and versions are in it, and served from it to another process (no copies).
    assert client.dbsize() >= 3
    page_cache_store._recent.clear()
    assert state(browser.get("/api/leaderboard/?utm=1")) == "hit"
    # One address keeps at most VARIANTS_MAX copies there too.
    before = client.dbsize()
    for i in range(page_cache.VARIANTS_MAX + 30):
        browser.get(f"/api/competitions/?q=search-{i}")
    pages = [key for key in client.keys("*mleboard:page:*")]
    assert len(pages) <= page_cache.VARIANTS_MAX + before
    page_cache_store._recent.clear()
    newest = f"/api/competitions/?q=search-{page_cache.VARIANTS_MAX + 29}"
    assert state(browser.get(newest)) == "hit"
    assert state(browser.get("/api/competitions/?q=search-0")) == "miss"
    settings.CACHES = without  # before this test's Redis stops


@pytest.mark.parametrize("shared", ["CELERY_BROKER_URL", "CACHE_URL"])
@pytest.mark.parametrize(
    ("pages", "other"),
    [
        ("redis://127.0.0.1:6379/7", "redis://127.0.0.1:6379/3"),
        # Spelt differently, the same server: compared where they lead.
        ("redis://localhost:6379/13", "redis://127.0.0.1:6379/11"),
        ("redis://localhost/13", "redis://[::1]:6379/11"),
        ("rediss://LOCALHOST.:6379/2", "redis://127.0.0.1/1"),
    ],
)
def test_the_pages_redis_may_not_be_the_brokers_or_the_throttles(tmp_path, shared, pages, other):
    done = manage_check(
        bare_env(tmp_path, SECRET_KEY="k" * 60, MLEBOARD_CACHE_URL=pages, **{shared: other})
    )
    assert done.returncode != 0
    assert f"MLEBOARD_CACHE_URL is the same Redis as {shared}" in done.stderr
