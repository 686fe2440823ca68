"""Fair and comparable in a browser, with screenshots at 1280 and 390 px: the leaderboard's
Class column with its reasons and the class filter, the medals-against-cost chart with its
frontier, an experiment's conditions and publishing refused with what is missing, the
conditions form, and compare warning across classes."""

import pytest
from django.contrib.auth.models import Group

from tests.support.browser import shot, sign_in_to
from tests.support.factories import FULL_DISCLOSURE, import_runs
from webapp.competitions.services import catalogue_sync
from webapp.core import roles
from webapp.results.disclosure import disclosure_update
from webapp.results.models import Experiment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1280, 390)


def fits(page) -> bool:
    return page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1"
    )


def test_class_cost_conditions_and_compare_in_a_browser(
    page, live_server, tmp_path, django_user_model
):
    catalogue_sync()
    import_runs(tmp_path / "runs", {"alpha": 3, "beta": 3, "gamma": 3}, seed=3)
    alpha, beta, gamma = (
        Experiment.objects.get(name__startswith=n) for n in ("alpha", "beta", "gamma")
    )
    disclosure_update(alpha, FULL_DISCLOSURE)
    disclosure_update(beta, {**FULL_DISCLOSURE, "gpus": 2, "hours": 36.0, "seeds": 1})
    # gamma says nothing: undisclosed, and no cost to draw.
    owner = django_user_model.objects.create_user("olga", password="pw-olga-12345")
    Experiment.objects.filter(pk=gamma.pk).update(owner=owner, is_published=False)
    operator = django_user_model.objects.create_user("otto", password="pw-otto-12345")
    operator.groups.add(Group.objects.get(name=roles.OPERATORS))

    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(live_server.url + "/")
        page.wait_for_selector("#cost-chart .main-svg")
        cells = page.locator("#leaderboard td.class")
        texts = {cells.nth(i).inner_text() for i in range(cells.count())}
        assert any("canonical" in t for t in texts)
        assert any("beyond" in t and "2 GPUs" in t and "36 h" in t for t in texts)
        assert "gamma" not in page.inner_text("#leaderboard")  # private
        assert "On the Pareto frontier" in page.inner_text("#cost-frontier")
        assert fits(page), f"the leaderboard is wider than {width} px"
        shot(page, f"fair-leaderboard-{width}")
        page.select_option("select[name=class]", "canonical")
        page.click("#leaderboard-filters button[type=submit]")
        page.wait_for_url("**class=canonical**")
        assert page.locator("#leaderboard tbody tr").count() == 1

    # The owner of an undisclosed experiment: the conditions, what publishing needs.
    sign_in_to(page, live_server, "olga", "pw-olga-12345")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(live_server.url + gamma.get_absolute_url())
        assert "Publishing needs: GPUs, vCPUs" in page.inner_text("#publish-missing")
        assert page.locator("#publish-form").count() == 0  # an owner may not publish
        assert fits(page)
        shot(page, f"fair-conditions-owner-{width}")
    page.click("#edit-conditions")
    page.fill("input[name=disclosure-vcpus]", "5000")
    page.click("#disclosure-form button[type=submit]")
    assert "from 1 to 4,096 vCPUs, got 5,000" in page.inner_text("#disclosure-form")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert fits(page)
        shot(page, f"fair-conditions-form-{width}")
    # The form sent back answers 400, as refused forms do here.
    page.console_errors.clear()
    page.fill("input[name=disclosure-vcpus]", "64")
    page.fill("input[name=disclosure-gpus]", "0")
    page.click("#disclosure-form button[type=submit]")
    page.wait_for_url("**" + gamma.get_absolute_url() + "#conditions")
    assert "64 vCPUs" in page.inner_text("#conditions summary")

    # An operator: publishing refused, with the same list.
    page.context.clear_cookies()
    sign_in_to(page, live_server, "otto", "pw-otto-12345")
    page.goto(live_server.url + gamma.get_absolute_url())
    page.click("#publish-form button[type=submit]")
    page.wait_for_selector(".messages, .message, [role=alert], .notice")
    body = page.inner_text("body")
    assert "Not published" in body and "RAM (GiB)" in body
    assert not Experiment.objects.get(pk=gamma.pk).is_published
    shot(page, "fair-publish-refused-1280")

    # Compare across classes warns.
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(live_server.url + f"/compare/?experiments={alpha.pk},{beta.pk}")
        warning = page.inner_text("#compare-classes")
        assert "not directly comparable" in warning and "2 GPUs" in warning
        assert fits(page)
        shot(page, f"fair-compare-classes-{width}")
    assert not page.console_errors, page.console_errors
