"""Rank ranges and P(A > B) in a browser, with screenshots at 1280 and 390 px: the
leaderboard ranked on a split asked for, its ranges ("2–3") and the interval under each
ranked figure, unclipped; compare's P(A > B) sentence; an experiment's bootstrap
intervals under its headline figures."""

import re

import pytest

from tests.support.browser import ARTIFACTS, shot
from tests.support.factories import import_runs
from webapp.competitions.services import catalogue_sync
from webapp.results.models import Experiment
from webapp.results.services import agent_get_or_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1280, 390)
RANGE = re.compile(r"^\d+(–\d+)?$")
INTERVAL = re.compile(r"^\d+\.\d–\d+\.\d$")


def fits(page) -> bool:
    return page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1"
    )


def clipped(page, selector: str) -> list[str]:
    """The texts of the elements matching ``selector`` that overflow their own box or
    their cell (cut off rather than wrapped)."""
    return page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)].filter((el) => {
            const cell = el.closest('td') || el.parentElement;
            const box = el.getBoundingClientRect(), outer = cell.getBoundingClientRect();
            return el.scrollWidth > el.clientWidth + 1 || box.right > outer.right + 1
                || box.left < outer.left - 1;
        }).map((el) => el.textContent)""",
        selector,
    )


def test_rank_ranges_and_p_a_greater_in_a_browser(page, live_server, tmp_path):
    catalogue_sync()
    import_runs(tmp_path / "runs", {"alpha": 3, "beta": 3, "gamma": 2, "delta": 1}, seed=5)
    Experiment.objects.create(
        name="published entry",
        agent=agent_get_or_create("pubscaffold", "pubmodel"),
        source=Experiment.Source.REPORTED,
        is_published=True,
        published_figures={"low": {"mean": 21.7, "standard_error": 1.3}},
    )
    alpha, beta = (Experiment.objects.get(name=n) for n in ("alpha", "beta"))

    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(live_server.url + "/?split=lite")
        assert "Ranked on Any Medal % on Low (Lite)" in page.inner_text("#ranking-note")
        assert "cannot be told apart" in page.inner_text("#rank-ranges-note")
        assert page.input_value("#rank-split") == "low"
        ranks = page.locator("#leaderboard tbody tr td:nth-child(2)")
        texts = [ranks.nth(i).inner_text().strip() for i in range(ranks.count())]
        assert len(texts) == 5 and all(RANGE.match(t) for t in texts), texts
        assert any("–" in t for t in texts), texts  # four agents at n = 22: some tie
        intervals = page.locator("#leaderboard td[data-split=low] .interval")
        shown = [intervals.nth(i).inner_text().strip() for i in range(intervals.count())]
        assert len(shown) == 5 and all(INTERVAL.match(t) for t in shown), shown
        # Only the ranking split's figures carry an interval.
        assert page.locator("#leaderboard td[data-split=all] .interval").count() == 0
        assert not clipped(page, "#leaderboard .interval"), width
        assert not clipped(page, "#leaderboard tbody td:nth-child(2)"), width
        assert fits(page), f"the leaderboard is wider than {width} px"
        shot(page, f"rank-ranges-leaderboard-{width}")
        page.locator("#leaderboard").screenshot(
            path=str(ARTIFACTS / f"rank-ranges-table-{width}.png")
        )

    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(live_server.url + f"/compare/?experiments={alpha.pk},{beta.pk}&split=low")
        said = page.inner_text(".probability-greater")
        assert re.search(r"P\(alpha > beta\) (= 0\.\d\d|> 0\.99|< 0\.01) on Any Medal %", said)
        assert "1,000 bootstrap resamples" in said
        assert "both resampled on the same competitions" in said
        assert not clipped(page, ".probability-greater")
        assert fits(page), f"compare is wider than {width} px"
        shot(page, f"rank-ranges-compare-{width}")
        page.locator("#verdicts").screenshot(
            path=str(ARTIFACTS / f"rank-ranges-verdicts-{width}.png")
        )
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(live_server.url + alpha.get_absolute_url() + "?split=low")
        assert re.fullmatch(
            r"bootstrap 95% \d+\.\d–\d+\.\d", page.inner_text("#any-medal-bootstrap").strip()
        )
        assert not clipped(page, ".bootstrap-interval")
        assert fits(page), f"the experiment's page is wider than {width} px"
        page.locator("#headline").screenshot(
            path=str(ARTIFACTS / f"rank-ranges-headline-{width}.png")
        )
    assert not page.console_errors, page.console_errors
