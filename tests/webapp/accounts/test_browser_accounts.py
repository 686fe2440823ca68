"""Accounts in the browser: sign-up with email verification (open), by invitation, closed;
password reset; the API tokens page (made, shown once, used, revoked at once)."""

import re

import pytest
from django.core import mail
from django.test import Client

from tests.support.browser import shot, sign_in_to
from webapp.accounts.models import ApiToken
from webapp.accounts.signup import invite_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def no_mail_rate_limits(settings):
    """allauth's limits (one confirmation mail per address every few minutes) count in the
    shared cache, across test runs: off here."""
    settings.ACCOUNT_RATE_LIMITS = False


def link_in_last_mail(pattern: str) -> str:
    return re.search(pattern, mail.outbox[-1].body).group(0)


def test_sign_up_verify_then_sign_in(page, live_server, settings):
    settings.MLEBOARD_SIGNUP = "open"
    page.goto(live_server.url + "/accounts/login/")
    assert "Sign up" in page.locator("#get-an-account").inner_text()
    page.click("#get-an-account a")
    page.fill("input[name=email]", "nia@example.org")
    page.fill("input[name=username]", "nia")
    page.fill("input[name=password1]", "a-long-pass-phrase-9")
    page.fill("input[name=password2]", "a-long-pass-phrase-9")
    shot(page, "accounts-signup")
    page.click("form button[type=submit]")
    page.wait_for_url("**/confirm-email/")
    shot(page, "accounts-verification-sent")
    # Not confirmed yet: the sign-in says what to do.
    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=username]", "nia")
    page.fill("input[name=password]", "a-long-pass-phrase-9")
    page.click("form button[type=submit]")
    assert "Confirm your email address first" in page.content()
    shot(page, "accounts-unverified-sign-in")
    page.goto(link_in_last_mail(r"http://\S+/accounts/confirm-email/\S+/"))
    shot(page, "accounts-confirm-email")
    page.click("form button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    assert "Sign out nia" in page.content()
    # A new account may upload (the page opens), and may not launch agent runs.
    assert page.goto(live_server.url + "/uploads/new/").status == 200
    assert page.goto(live_server.url + "/runs/new/").status == 403  # names the permission


def test_closed_and_invite_only_sign_up(page, live_server, settings, django_user_model):
    settings.MLEBOARD_SIGNUP = "closed"
    page.goto(live_server.url + "/accounts/login/")
    assert "made by the site's operator" in page.locator("#get-an-account").inner_text()
    page.goto(live_server.url + "/accounts/signup/")
    assert "Sign-up is closed" in page.content()
    shot(page, "accounts-signup-closed")

    settings.MLEBOARD_SIGNUP = "invite"
    staff = django_user_model.objects.create_user("sta", is_staff=True)
    invite_create("ola@example.org", by=staff)
    link = link_in_last_mail(r"/accounts/invite/\S+/")
    page.goto(live_server.url + link)
    assert page.input_value("input[name=email]") in ("", "ola@example.org")
    page.fill("input[name=email]", "ola@example.org")
    page.fill("input[name=username]", "ola")
    page.fill("input[name=password1]", "a-long-pass-phrase-9")
    page.fill("input[name=password2]", "a-long-pass-phrase-9")
    page.click("form button[type=submit]")
    # The invited address counts as verified: signed in at once.
    page.wait_for_url(live_server.url + "/")
    assert "Sign out ola" in page.content()
    # The invite works once.
    other = page.context.browser.new_context()
    again = other.new_page()
    assert again.goto(live_server.url + link).status == 404
    other.close()


def test_password_reset(page, live_server, django_user_model):
    django_user_model.objects.create_user(
        "pia", email="pia@example.org", password="old-pass-123456"
    )
    page.goto(live_server.url + "/accounts/login/")
    page.click("text=Forgot your password?")
    page.fill("input[name=email]", "pia@example.org")
    shot(page, "accounts-password-reset")
    page.click("form button[type=submit]")
    page.wait_for_url("**/password/reset/done/")
    page.goto(link_in_last_mail(r"http://\S+/accounts/password/reset/key/\S+/"))
    page.fill("input[name=password1]", "new-pass-9876543")
    page.fill("input[name=password2]", "new-pass-9876543")
    shot(page, "accounts-password-reset-key")
    page.click("form button[type=submit]")
    page.wait_for_url("**/password/reset/key/done/")
    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=username]", "pia")
    page.fill("input[name=password]", "new-pass-9876543")
    page.click("form button[type=submit]")
    page.wait_for_load_state()
    assert "Sign out pia" in page.content(), page.locator("main").inner_text()


def test_api_tokens_page(page, live_server, django_user_model):
    django_user_model.objects.create_user("ray", password="pw-ray-123456")
    sign_in_to(page, live_server, "ray", "pw-ray-123456")
    page.goto(live_server.url + "/accounts/tokens/")
    assert "No tokens yet" in page.content()
    shot(page, "accounts-tokens-empty")
    for name in ("laptop", "cluster submit job"):
        page.fill("input[name=name]", name)
        page.click("#token-create button[type=submit]")
    token = page.locator("#new-token-value").inner_text()
    assert token.startswith("mlb_")
    shot(page, "accounts-tokens-new")
    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get("/api/uploads/tus/").status_code == 200
    page.goto(live_server.url + "/accounts/tokens/")
    assert token not in page.content()  # shown once
    rows = page.locator("#token-table tbody tr")
    assert rows.count() == 2
    assert "just now" in rows.first.inner_text()  # last used a moment ago
    shot(page, "accounts-tokens-list")
    rows.first.locator("button").click()
    page.wait_for_selector("text=Token revoked")
    assert api.get("/api/uploads/tus/").status_code == 401
    assert ApiToken.objects.filter(name="laptop").exists()
