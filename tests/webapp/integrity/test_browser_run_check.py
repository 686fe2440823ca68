"""A flagged run's check page in the browser, as its owner and as a reviewer: bob's
published run copies alice's unpublished run and a reference notebook. bob reads the
figures, "a run you cannot see" and that reference code is reviewers' material; the
reviewer reads both side by side, whose they are, and decides."""

import pytest

from tests.support.browser import shot, sign_in_to
from tests.support.planted import OWNER

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def no_horizontal_overflow(page) -> bool:
    return page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )


def test_the_check_page_as_the_owner_and_as_a_reviewer(browser, live_server, planted):
    bob_run, alice_run = planted["bob_run"], planted["alice_run"]
    url = f"/integrity/runs/{bob_run.pk}/"
    owner = browser.new_context(viewport={"width": 1300, "height": 900}).new_page()
    errors = []
    owner.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_in_to(owner, live_server, "bob", "pw-bob-123", url)
    reasons = owner.locator("#reasons li").all_inner_texts()
    assert any("similar to a run you cannot see, another owner's" in r for r in reasons)
    assert any("similar to the reference code" in r for r in reasons)
    assert owner.locator("#references-private").is_visible()
    assert owner.locator("#peer-private").is_visible()
    assert owner.locator(".side-by-side").count() == 0
    assert owner.locator("#decide").count() == 0
    body = owner.locator("body").inner_text()
    for secret in ("PRIVMARK", "privmark", "REFMARK", f"run {alice_run.pk}"):
        assert secret not in body, secret
    assert no_horizontal_overflow(owner)
    shot(owner, "integrity-check-owner")

    reviewer = browser.new_context(viewport={"width": 1300, "height": 900}).new_page()
    reviewer.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_in_to(reviewer, live_server, "rita", "pw-rita-123", url)
    assert reviewer.locator("#similarity .side-by-side").is_visible()
    assert reviewer.locator("#peers .side-by-side").is_visible()
    assert "REFMARKPATH/solution.py" in reviewer.locator("#similarity").inner_text()
    peer = reviewer.locator("#peer-run")
    assert peer.inner_text() == f"run {alice_run.pk} of PRIVMARKEXP by {OWNER}"
    assert reviewer.locator("#peer-filter").is_visible()
    assert reviewer.locator("#decide button[value=disqualified]").is_visible()
    assert no_horizontal_overflow(reviewer)
    shot(reviewer, "integrity-check-reviewer")
    assert errors == []
