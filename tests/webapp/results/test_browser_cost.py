"""The token, failure and twins views in a browser, with screenshots: an uploaded
experiment's tokens and failure table, the runs behind one figure, a run's tokens, and
compare with the same agent under two time limits."""

import pytest

from benchmark.cost import Price
from tests.support.browser import shot, sign_in_to
from tests.support.cost_cases import upload_costed_experiment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def no_horizontal_overflow(page) -> bool:
    return page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1"
    )


def test_tokens_failures_and_twins_in_a_browser(
    page, live_server, tmp_path, settings, media, django_user_model
):
    from tests.support.demo_builds import demo_site

    build = demo_site(tmp_path, settings, competitions=("demo-wine", "demo-digits"))
    settings.MLEBOARD_LLM_PRICES = {"gpt-4o": Price(2.5, 10.0)}
    owner = django_user_model.objects.create_user("cora", password="pw-cora-12345")
    one_hour = upload_costed_experiment(owner, build, metadata={"name": "aide, 1 h"})
    four_hours = upload_costed_experiment(
        owner, build, metadata={"name": "aide, 4 h", "runtime_hours": 4.0}, note="4 h"
    )
    sign_in_to(page, live_server, "cora", "pw-cora-12345")

    page.goto(live_server.url + one_hour.get_absolute_url())
    page.wait_for_selector("#time-scaling .main-svg")
    assert page.inner_text("#tokens-total") == "608,000"
    assert "estimate" in page.inner_text("#tokens-source")
    page.locator("#tokens").scroll_into_view_if_needed()
    assert no_horizontal_overflow(page)
    shot(page, "cost-experiment")
    rows = page.locator("#failure-table tbody tr")
    assert rows.count() == 8
    assert page.inner_text("#failure-table tr[data-mode='stopped_early'] td:nth-child(2)") == "1"

    page.click("#invalid-classes tr[data-class='invalid_columns'] a")
    page.wait_for_selector("#failure-runs")
    assert "2 of 2" in page.inner_text("#failure-label")
    shot(page, "cost-failure-runs")
    page.click("#failure-runs a >> nth=0")
    page.wait_for_selector("#run-tokens")
    assert "declared by the upload" in page.inner_text("#run-tokens")
    shot(page, "cost-run-page")

    page.goto(f"{live_server.url}/compare/?experiments={one_hour.pk},{four_hours.pk}")
    page.wait_for_selector("#compare-medal-tokens .main-svg")
    page.wait_for_selector("#compare-pass-at-k-tokens .main-svg")
    assert "1 h" in page.inner_text("#twins") and "4 h" in page.inner_text("#twins")
    assert no_horizontal_overflow(page)
    page.locator("#twins").scroll_into_view_if_needed()
    shot(page, "cost-compare")
    assert page.console_errors == []
