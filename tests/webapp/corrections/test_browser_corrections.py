"""The corrections log in Chromium at a laptop's 1,280 px and a phone's 390 px: its
entries (a disqualification pending, then filled; a known issue over two experiments)
read whole, with their figures before → after, and the page is never wider than the
window. Screenshots in test-artifacts/."""

import pytest

from tests.support.browser import shot
from tests.support.corrections import SPLIT, medalled_run
from webapp.competitions.models import Competition, KnownIssue
from webapp.integrity import services as integrity
from webapp.results.grading.aggregates import experiment_aggregate_refresh

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_the_log_reads_at_both_widths(browser, live_server, imported, reviewer):
    from benchmark.catalogue import competitions_in_split

    a, _ = imported
    check = integrity.run_check_of(medalled_run(a))
    integrity.run_check_decide(
        check.pk, decision="disqualified", reason="the code is another run's", user=reviewer
    )
    KnownIssue.objects.create(
        competition=Competition.objects.get(slug=competitions_in_split(SPLIT)[0].id),
        kind=KnownIssue.Kind.LEAKAGE,
        note="the test labels are in the training data",
    )
    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.goto(live_server.url + "/changes/")
        entries = page.locator("#changes li.change")
        assert entries.count() == 2
        text = page.locator("#changes").inner_text()
        assert "Disqualification" in text and "the code is another run's" in text
        assert "pending" in text and "by reviewer" in text and "rita" not in text
        scroll, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        shot(page, f"changes-pending-{width}")
        assert scroll <= inner, f"{width} px: {scroll} px wide"
        context.close()

    experiment_aggregate_refresh(a.pk)
    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.goto(live_server.url + "/changes/?kind=disqualified")
        text = page.locator("#changes").inner_text()
        assert "pending" not in text and "→" in text
        # No float noise: every percentage to one decimal.
        lines = page.locator("#changes .figure-line").all_inner_texts()
        assert lines and all(line.count("%") == 2 for line in lines), lines
        for line in lines:
            for number in line.replace("%", "").split()[-3::2]:
                assert len(number.partition(".")[2]) == 1, line
        scroll, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        shot(page, f"changes-filled-{width}")
        assert scroll <= inner, f"{width} px: {scroll} px wide"
        context.close()
