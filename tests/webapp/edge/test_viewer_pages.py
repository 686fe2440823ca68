"""Public pages for signed-in people (webapp/edge/viewer_pages.py): the page cache's copy for
their class of viewers around their own navigation. Each person sees exactly what a fresh
rendering would show them: their name and token, their private work the moment it
changes, another person's work only with the permission, granted or revoked at once."""

import gzip

import pytest
from django.contrib.auth.models import Permission, User
from django.middleware.csrf import _unmask_cipher_token
from django.test import Client

from tests.support.page_cache import state
from webapp.core.visibility import Perm
from webapp.edge import page_cache, viewer_pages
from webapp.results.models import Experiment
from webapp.results.services import agent_get_or_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("page_cache_on")]


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def pages() -> list[str]:
    a, b = Experiment.objects.filter(is_published=True).values_list("pk", flat=True)[:2]
    return [
        "/",
        "/?clean=1",
        "/competitions/",
        "/competitions/spaceship-titanic/",
        f"/experiments/{a}/",
        f"/compare/?experiments={a},{b}",
    ]


def fresh(client: Client, url: str, settings) -> bytes:
    """The page as a rendering without any cache gives it."""
    settings.MLEBOARD_PAGE_CACHE = False
    try:
        return client.get(url).content
    finally:
        settings.MLEBOARD_PAGE_CACHE = True


def without_token(content: bytes) -> bytes:
    """The page with the sign-out form's CSRF token blanked (a new mask each rendering)."""
    head, marker, rest = content.partition(b'name="csrfmiddlewaretoken" value="')
    if not marker:
        return content
    return head + marker + rest[rest.index(b'"') :]


def test_a_signed_in_page_is_stored_once_and_equals_a_fresh_rendering(imported, settings):
    Experiment.objects.filter(name="mlab-gpt4o").update(is_published=True)
    page_cache.changed()
    alice = User.objects.create_user("alice", password="pw-alice-123")
    client = signed_in(alice)
    for url in pages():
        first, second = client.get(url), client.get(url)
        assert first.status_code == second.status_code == 200, url
        assert (state(first), state(second)) == ("viewer-miss", "viewer-hit"), url
        assert first.headers["Cache-Control"] == "private, no-cache"
        assert b"Sign out alice" in second.content, url
        assert without_token(second.content) == without_token(fresh(client, url, settings)), url


def test_people_of_one_class_share_the_page_but_not_the_navigation(imported):
    Experiment.objects.update(is_published=True)
    page_cache.changed()
    alice = User.objects.create_user("alice", password="pw-alice-123")
    bob = User.objects.create_user("bob", password="pw-bob-123")
    as_alice, as_bob = signed_in(alice), signed_in(bob)
    assert state(as_alice.get("/")) == "viewer-miss"
    page = as_bob.get("/")
    assert state(page) == "viewer-hit"
    assert b"Sign out bob" in page.content and b"alice" not in page.content
    # The token in the page is bob's: it unmasks to the secret of bob's CSRF cookie.
    token = page.content.split(b'name="csrfmiddlewaretoken" value="')[1].split(b'"')[0]
    assert _unmask_cipher_token(token.decode()) == page.cookies["csrftoken"].value
    assert viewer_pages.viewer_class(alice) == viewer_pages.viewer_class(bob)


def test_private_work_shows_to_its_owner_at_once_and_to_nobody_else(imported):
    owner = User.objects.create_user("owner", password="pw-owner-123")
    other = User.objects.create_user("other", password="pw-other-123")
    private = Experiment.objects.create(
        name="private-of-owner", agent=agent_get_or_create("p", "q"), owner=owner
    )
    as_owner, as_other = signed_in(owner), signed_in(other)
    assert b"private-of-owner" in as_owner.get("/").content
    assert state(as_owner.get("/")) == "viewer-hit"
    assert b"private-of-owner" not in as_other.get("/").content
    # A change to the private experiment: its owner's copy renders again at once; the
    # others' stays.
    private.name = "renamed-private"
    private.save()
    again = as_owner.get("/")
    assert state(again) == "viewer-miss" and b"renamed-private" in again.content
    assert state(as_other.get("/")) == "viewer-hit"
    # Deleted: gone from its owner's page at once (who, owning nothing now, gets the
    # copy every such person shares).
    private.delete()
    gone = as_owner.get("/")
    assert state(gone) == "viewer-hit" and b"renamed-private" not in gone.content
    assert b"Sign out owner" in gone.content


def test_a_permission_counts_the_moment_it_is_granted_or_revoked(imported):
    owner = User.objects.create_user("owner", password="pw-owner-123")
    Experiment.objects.create(
        name="private-of-owner", agent=agent_get_or_create("p", "q"), owner=owner
    )
    reviewer = User.objects.create_user("reviewer", password="pw-reviewer-123")
    client = signed_in(reviewer)
    assert b"private-of-owner" not in client.get("/").content
    app_label, codename = Perm.SEE_ALL_EXPERIMENTS.split(".")
    permission = Permission.objects.get(content_type__app_label=app_label, codename=codename)
    reviewer.user_permissions.add(permission)
    assert b"private-of-owner" in client.get("/").content
    # Private work changing elsewhere reaches those who see it all.
    Experiment.objects.filter(name="private-of-owner").get().save()
    assert state(client.get("/")) == "viewer-miss"
    reviewer.user_permissions.remove(permission)
    assert b"private-of-owner" not in client.get("/").content


def test_sent_compressed_and_revalidated(imported):
    alice = User.objects.create_user("alice", password="pw-alice-123")
    client = signed_in(alice)
    plain = client.get("/")
    zipped = client.get("/", HTTP_ACCEPT_ENCODING="gzip, deflate")
    assert zipped.headers["Content-Encoding"] == "gzip" and state(zipped) == "viewer-hit"
    assert len(zipped.content) < len(plain.content) / 3
    assert without_token(gzip.decompress(zipped.content)) == without_token(plain.content)
    etag = client.get("/").headers["ETag"]
    assert client.get("/", HTTP_IF_NONE_MATCH=etag).status_code == 304


def test_not_while_messages_wait_nor_with_a_token_in_the_page(imported):
    alice = User.objects.create_user("alice", password="pw-alice-123")
    client = signed_in(alice)
    client.cookies["messages"] = "anything"
    assert state(client.get("/")) is None
    page = (
        "<nav><!--viewer:nav-->x<!--/viewer:nav--></nav>"
        '<form><input type="hidden" name="csrfmiddlewaretoken" value="t"></form>'
    )
    assert viewer_pages.split(page) is None
    assert viewer_pages.split("<p>a</p><!--viewer:nav-->x<!--/viewer:nav--><p>b</p>") == [
        "<p>a</p><!--viewer:nav-->",
        "nav",
        "<!--/viewer:nav--><p>b</p>",
    ]


# --- races and changes no signal sees --------------------------------------------------


@pytest.fixture
def creates_private_work_mid_render(monkeypatch):
    """While alice's leaderboard renders, her first private experiment is made (as by a
    request of hers beside it); ``bump_lands`` says whether its change of versions has
    reached the cache before the page is stored (it lands just after a commit)."""
    from webapp.results.pages import leaderboard, views

    made = {}

    def arm(owner: User, *, bump_lands: bool):
        original = leaderboard.leaderboard_entries

        def entries(*, user, filters):
            if user.pk == owner.pk and not made:
                held = []
                if not bump_lands:
                    monkeypatch.setattr(page_cache, "bump", lambda scopes: held.append(scopes))
                made["experiment"] = Experiment.objects.create(
                    name="made-while-rendering", agent=agent_get_or_create("p", "q"), owner=owner
                )
                monkeypatch.setattr(page_cache, "bump", bump)
                made["held"] = held
            return original(user=user, filters=filters)

        bump = page_cache.bump
        monkeypatch.setattr(views, "leaderboard_entries", entries, raising=False)
        monkeypatch.setattr(leaderboard, "leaderboard_entries", entries)
        return made

    return arm


@pytest.mark.parametrize("bump_lands", [True, False])
def test_private_work_made_while_a_page_renders_is_not_stored_for_others(
    imported, creates_private_work_mid_render, bump_lands
):
    alice = User.objects.create_user("alice", password="pw-alice-123")
    bob = User.objects.create_user("bob", password="pw-bob-123")
    made = creates_private_work_mid_render(alice, bump_lands=bump_lands)
    as_alice, as_bob = signed_in(alice), signed_in(bob)
    page = as_alice.get("/")
    assert made and b"made-while-rendering" in page.content  # hers, rendered for her
    for _ in range(2):
        assert b"made-while-rendering" not in as_bob.get("/").content
    for scopes in made["held"]:  # the change reaches the cache late
        page_cache.bump(scopes)
    made["experiment"].delete()
    assert b"made-while-rendering" not in as_bob.get("/").content
    assert b"made-while-rendering" not in as_alice.get("/").content


def test_a_bulk_deactivation_or_new_password_ends_the_cached_pages(imported):
    """Bulk updates send no signal: a deactivated person, or one whose password changed,
    is no longer served their pages (nor their private work) from the cache."""
    from django.contrib.auth.hashers import make_password

    for change in ({"is_active": False}, {"password": make_password("a-new-pw-123")}):
        owner = User.objects.create_user("owner", password="pw-owner-123")
        Experiment.objects.create(
            name="private-of-owner", agent=agent_get_or_create("p", "q"), owner=owner
        )
        client = signed_in(owner)
        assert b"private-of-owner" in client.get("/").content
        assert state(client.get("/")) == "viewer-hit"
        User.objects.filter(pk=owner.pk).update(**change)
        page = client.get("/")
        assert state(page) != "viewer-hit", change
        assert b"private-of-owner" not in page.content, change
        assert b"Sign out owner" not in page.content, change
        assert client.get(f"/api/experiments/?owner={owner.pk}").status_code in (200, 401, 403)
        Experiment.objects.filter(owner=owner).delete()
        owner.delete()
