"""The database away (webapp/edge/outage.py): every request that needs it gets 503 with
Retry-After, pages, the API, signed-in views and uploads alike, never a 500; public pages
the cache holds are still served. The database is made unreachable for this process only
(its connection pointed at a port nothing listens on, or an SQLite file that cannot be
opened): the shared server keeps running."""

import contextlib
import socket

import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client

from webapp.edge import outage, page_cache

pytestmark = pytest.mark.django_db(transaction=True)


@contextlib.contextmanager
def unreachable_database(tmp_path):
    connection = connections["default"]
    saved = dict(connection.settings_dict)
    connection.close()
    if connection.vendor == "postgresql":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # free once closed: nothing listens on it
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(port))
    else:
        connection.settings_dict["NAME"] = str(tmp_path / "no-such-folder" / "db.sqlite3")
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


@pytest.fixture
def database_away(tmp_path):
    with unreachable_database(tmp_path):
        yield


@pytest.fixture
def database_away_later(tmp_path):
    """``database_away``, entered when the test calls it."""
    with contextlib.ExitStack() as stack:
        yield lambda: stack.enter_context(unreachable_database(tmp_path))


def client(**kwargs) -> Client:
    return Client(raise_request_exception=False, **kwargs)


def assert_unavailable(response, url):
    assert response.status_code == 503, (url, response.status_code)
    assert response["Retry-After"] == str(outage.RETRY_AFTER_S), url
    assert "no-store" in response["Cache-Control"]
    assert response.headers.get("X-Page-Cache") in (None, "miss"), url


def test_pages_and_api_answer_503_with_retry_after(imported, settings, database_away):
    settings.MLEBOARD_PAGE_CACHE = False
    anonymous = client()
    for url in ("/", "/competitions/", "/api/leaderboard/", "/api/experiments/"):
        response = anonymous.get(url)
        assert_unavailable(response, url)
        if url.startswith("/api/"):
            assert response.json() == {"error": outage.MESSAGE}
        else:
            assert b"Unavailable for a moment" in response.content


@pytest.fixture
def signed_in(imported):
    user = User.objects.create_user("during-outage", password="pw-outage-123")
    browser = client()
    browser.force_login(user)
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=user)
    return browser, client(HTTP_AUTHORIZATION=f"Token {token.key}")


def test_signed_in_views_and_uploads_answer_503(signed_in, database_away):
    browser, api = signed_in
    # The session and the token are read by a middleware or the view: 503 either way.
    for url in ("/", "/uploads/", "/runs/"):
        assert_unavailable(browser.get(url), url)
    assert_unavailable(api.get("/api/leaderboard/"), "token")
    upload = api.post(
        "/api/uploads/",
        {"archive": ("runs.zip", b"PK\x05\x06" + b"\0" * 18)},
    )
    assert_unavailable(upload, "/api/uploads/")


def test_cached_public_pages_are_still_served(imported, settings, database_away_later):
    settings.MLEBOARD_PAGE_CACHE = True
    page_cache.clear()
    anonymous = client()
    fresh = anonymous.get("/api/leaderboard/")
    stale = anonymous.get("/competitions/")
    assert fresh.status_code == stale.status_code == 200
    page_cache.changed()  # /competitions/ is stale now; /api/leaderboard/ rendered again
    assert anonymous.get("/api/leaderboard/").headers["X-Page-Cache"] == "miss"
    database_away_later()
    hit = anonymous.get("/api/leaderboard/")
    assert hit.status_code == 200 and hit.headers["X-Page-Cache"] == "hit"
    assert hit.content == fresh.content
    kept = anonymous.get("/competitions/")
    assert kept.status_code == 200 and kept.headers["X-Page-Cache"] == "stale"
    assert kept.content == stale.content
    # A page the cache never held.
    assert_unavailable(anonymous.get("/api/experiments/"), "/api/experiments/")
    page_cache.clear()
