"""Messages meant for someone else: operator instructions only for
operators, a refusal that names the permission it wants (403, not "not found"), an admin
that says whose it is and sends people who are not its staff to the site's own sign-in,
and a sign-in page that says how to get an account. Client tests for each, then the same
pages in the browser, screenshotted."""

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from tests.support.browser import shot, sign_in_to
from tests.support.users import member_of

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_empty_filter_result_speaks_to_visitors_and_operators_apart(django_user_model):
    visitor = Client().get("/?scaffold=no-such-scaffold").content.decode()
    assert "No experiment matches these filters" in visitor
    assert 'href="/"' in visitor  # the way back to every experiment
    assert "make run" not in visitor and "import_grading_reports" not in visitor
    assert "No experiment is published yet" in Client().get("/").content.decode()

    someone = django_user_model.objects.create_user("sam", password="pw-sam-123", is_staff=True)
    assert "make run" not in signed_in(someone).get("/?scaffold=x").content.decode()
    operator = member_of(django_user_model, "operators", "otto")
    page = signed_in(operator).get("/?scaffold=x").content.decode()
    assert 'id="operator-hint"' in page and "make run" in page


def test_the_launch_form_refused_names_the_permission(django_user_model):
    user = django_user_model.objects.create_user("nola", password="pw-nola-123")
    response = signed_in(user).get("/runs/new/")
    assert response.status_code == 403
    body = response.content.decode()
    assert "Can launch agent runs" in body and "runs.launch_agent_runs" in body
    assert "Not found" not in body and "may have moved" not in body

    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    assert signed_in(user).get("/runs/new/").status_code == 200


def test_the_admin_is_branded_and_points_others_to_the_site(django_user_model):
    login = Client().get("/admin/login/").content.decode()
    assert "mleboard administration" in login and "Django administration" not in login
    assert 'id="admin-is-for-staff"' in login and 'href="/accounts/login/"' in login

    # Someone signed in without the staff flag is sent to the admin's sign-in, which
    # says it is for staff and links the site's.
    user = django_user_model.objects.create_user("nate", password="pw-nate-123")
    response = signed_in(user).get("/admin/", follow=True)
    body = response.content.decode()
    assert response.redirect_chain[-1][0].startswith("/admin/login/")
    assert "mleboard administration" in body and "sign in on the site" in body


@pytest.mark.parametrize(
    "mode,says",
    [
        ("open", "Sign up"),
        ("invite", "for an invite link"),
        ("closed", "Accounts are made by the"),
    ],
)
def test_the_sign_in_page_says_how_to_get_an_account(settings, mode, says):
    settings.MLEBOARD_SIGNUP = mode
    body = Client().get("/accounts/login/").content.decode()
    assert 'id="get-an-account"' in body and says in body


def test_the_site_serves_its_docs_and_says_when_they_are_not_built(settings, tmp_path):
    settings.DOCS_ROOT = tmp_path / "docs"
    missing = Client().get("/docs/")
    assert missing.status_code == 404 and 'id="docs-not-built"' in missing.content.decode()

    settings.DOCS_ROOT.mkdir()
    (settings.DOCS_ROOT / "index.html").write_text("<h1>mleboard docs</h1>")
    (settings.DOCS_ROOT / "submit.html").write_text("<h1>Submit</h1>")
    (tmp_path / "secret.txt").write_text("outside")
    assert b"mleboard docs" in b"".join(Client().get("/docs/").streaming_content)
    assert b"Submit" in b"".join(Client().get("/docs/submit.html").streaming_content)
    assert Client().get("/docs/../secret.txt").status_code == 404
    assert Client().get("/docs/%2e%2e/secret.txt").status_code == 404
    # Names the file system refuses (over 255 bytes) are pages that do not exist.
    assert Client().get("/docs/" + "a" * 300).status_code == 404
    assert Client().get("/docs/" + "é" * 200 + ".html").status_code == 404
    assert Client().get("/docs/x/" + "a" * 4200).status_code == 404
    # Every page links them: the navigation and the footer.
    home = Client().get("/").content.decode()
    assert 'href="/docs/" id="nav-docs"' in home
    assert 'id="footer-docs"' in home


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_messages_in_the_browser(page, live_server, django_user_model, settings):
    settings.MLEBOARD_SIGNUP = "closed"
    page.goto(live_server.url + "/?scaffold=no-such-scaffold")
    assert "No experiment matches these filters" in page.locator("#leaderboard-empty").inner_text()
    shot(page, "wrong-person-empty-filter-visitor")

    page.goto(live_server.url + "/accounts/login/")
    assert "made by the site's operator" in page.locator("#get-an-account").inner_text()
    shot(page, "wrong-person-sign-in-closed")

    django_user_model.objects.create_user("nola", password="pw-nola-123")
    sign_in_to(page, live_server, "nola", "pw-nola-123")
    response = page.goto(live_server.url + "/runs/new/")
    assert response.status == 403
    assert "Can launch agent runs" in page.locator("#forbidden").inner_text()
    shot(page, "wrong-person-launch-refused")

    page.goto(live_server.url + "/admin/")
    assert "mleboard administration" in page.content()
    page.click("#admin-is-for-staff a")
    page.wait_for_url(live_server.url + "/accounts/login/")
    page.goto(live_server.url + "/admin/login/")
    shot(page, "wrong-person-admin-login")
