"""Text a person posts never reaches the database unchecked: an over-long field is a form
error before django-axes or a model writes it (a 256-character user name on either login
page was a 500), NUL is refused in every text stored (a NUL in a disqualification reason
was a 500 on PostgreSQL), and views read posted values only through forms and
serializers. Then every form of the site is posted with NUL, huge and odd unicode values,
anonymous and as an administrator, and none answers a 500."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from axes.models import AccessAttempt
from django.test import Client, override_settings

from tests.support import integrity_cases as cases
from tests.support.integrity_cases import COMPETITION, graded_upload
from tests.support.routes import site_routes
from webapp.competitions.services import catalogue_sync
from webapp.integrity import services
from webapp.integrity.models import RunCheck
from webapp.results.models import Upload

pytestmark = pytest.mark.django_db

LONG_NAME = "u" * 256
EVIL = ["\x00", "a\x00b", "x" * 20_000, "𝔘\u202e\ufeff\u0301🙂\u2028Ω" * 40]


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


@override_settings(AXES_ENABLED=True)
@pytest.mark.parametrize("page", ["/accounts/login/", "/admin/login/"])
def test_a_256_character_user_name_is_a_form_error(client, page):
    response = client.post(page, {"username": LONG_NAME, "password": "pw"})
    assert response.status_code == 200
    assert "at most 150 characters" in response.content.decode()
    assert not AccessAttempt.objects.filter(username=LONG_NAME).exists()


@override_settings(AXES_ENABLED=True)
def test_a_failed_login_of_a_fitting_name_is_still_counted(client):
    client.post("/accounts/login/", {"username": "mallory", "password": "pw"})
    assert AccessAttempt.objects.filter(username="mallory").exists()


@pytest.fixture
def checked_run(alice, media):
    run = graded_upload(alice, {COMPETITION: cases.LITERAL})[0]
    services.run_check(run.pk)
    return run


def test_a_nul_in_a_disqualification_reason_decides_nothing(client, reviewer, checked_run):
    client.force_login(reviewer)
    page = f"/integrity/runs/{checked_run.pk}/"
    before = RunCheck.objects.get(run=checked_run).status
    response = client.post(page, {"decision": "disqualified", "reason": "copied\x00"}, follow=True)
    assert response.status_code == 200
    assert "Nothing was decided" in response.content.decode()
    assert RunCheck.objects.get(run=checked_run).status == before
    client.post(page, {"decision": "disqualified", "reason": "copied the answers"})
    assert RunCheck.objects.get(run=checked_run).status == RunCheck.Status.DISQUALIFIED


# --- every form posted with bad text ------------------------------------------------------


class _Forms(HTMLParser):
    """The POST forms of a page: their action and fields (name, type, value)."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []
        self._form = None
        self._select = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self._form = None
            if (attrs.get("method") or "get").lower() == "post":
                self._form = {"action": attrs.get("action") or "", "fields": {}}
                self.forms.append(self._form)
        elif self._form is None:
            return
        elif tag in ("input", "textarea") and attrs.get("name"):
            kind = (attrs.get("type") or "text").lower() if tag == "input" else "textarea"
            if kind in ("checkbox", "radio") and "checked" not in attrs:
                return
            if kind in ("submit", "button", "image", "file", "reset"):
                return
            self._form["fields"][attrs["name"]] = (kind, attrs.get("value") or "")
        elif tag == "select" and attrs.get("name"):
            self._select = attrs["name"]
            self._form["fields"][self._select] = ("select", "")
        elif tag == "option" and self._select and not self._form["fields"][self._select][1]:
            self._form["fields"][self._select] = ("select", attrs.get("value") or "")

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None


TEXT_KINDS = {"text", "textarea", "email", "password", "search", "url", "number", "date", "select"}
SKIPPED_ACTIONS = ("/accounts/logout/",)  # it would sign the walker out


def _form_posts(browser: Client, pages: list[str]) -> tuple[list, set[tuple[str, str]]]:
    """Failures (page, action, field, status) and the (action, field) pairs posted."""
    failures, posted = [], set()
    for page in pages:
        response = browser.get(page)
        if response.status_code != 200 or "text/html" not in response.get("Content-Type", ""):
            continue
        # The built documentation is served as files (streamed): no form posts to the site.
        body = b"".join(response.streaming_content) if response.streaming else response.content
        parser = _Forms()
        parser.feed(body.decode("utf-8", "replace"))
        for form in parser.forms:
            action = form["action"] or page
            if action.startswith(SKIPPED_ACTIONS) or not action.startswith("/"):
                continue
            base = {name: value for name, (_, value) in form["fields"].items()}
            for name, (kind, _) in form["fields"].items():
                if kind not in TEXT_KINDS or name == "csrfmiddlewaretoken":
                    continue
                posted.add((action, name))
                for value in EVIL:
                    answer = browser.post(action, {**base, name: value})
                    if answer.status_code >= 500:
                        failures.append((page, action, name, answer.status_code))
    return failures, posted


def test_every_form_posted_with_nul_huge_and_odd_text_never_answers_a_500(
    django_user_model, checked_run
):
    admin = django_user_model.objects.create_superuser("root", password="pw-root-12345")
    signed_in = Client(raise_request_exception=False)
    signed_in.force_login(admin)
    experiment = checked_run.experiment
    pages = [
        *(r for r in site_routes() if not r.startswith("/admin/")),
        "/admin/login/",
        f"/integrity/runs/{checked_run.pk}/",
        experiment.get_absolute_url(),
        f"/runs/result/{checked_run.pk}/",
        f"/uploads/{Upload.objects.get(experiment=experiment).pk}/",
    ]
    failures, anonymous = _form_posts(Client(raise_request_exception=False), pages)
    more, administrator = _form_posts(signed_in, pages)
    assert not failures + more
    # The walk reached the forms that once answered 500, and the others.
    assert {("/accounts/login/", "username"), ("/admin/login/", "username")} <= anonymous
    assert (f"/integrity/runs/{checked_run.pk}/", "reason") in administrator
    assert {"/accounts/tokens/", "/runs/new/"} <= {action for action, _ in administrator}
