"""One number format for every page: the template filters print what
``webapp.core.formatting`` declares and ``static/js/numbers.js`` prints the same (that templates
never print a float field raw is a house rule, tools/house_rules)."""

from pathlib import Path

import pytest
from django.template import Context, Template

from webapp.core import formatting

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("{{ v|score }}", "0.137555"),
        ("{{ p|pct }}", "33.3"),
        ("{{ p|percent }}", "33.3%"),
        ("{{ r|rate }}", "33.3%"),
        ("{{ s|stat }}", "0.42"),
        ("{{ missing|pct }}{{ missing|rate }}{{ missing|score }}", ""),
    ],
)
def test_filters(source, shown):
    context = Context({"v": 0.13755499999999998, "p": 100 / 3, "r": 1 / 3, "s": 0.4213})
    assert Template("{% load numbers_format %}" + source).render(context) == shown


VALUES = [0.13755499999999998, 1.0, 0, -0.0, 12345.678901234, 1.2345e-08, -3.5e-05, 0.9999999]


@pytest.mark.browser
def test_numbers_js_prints_what_python_prints(browser):
    page = browser.new_page()
    page.add_script_tag(path=str(REPO / "static/js/numbers.js"))
    shown = page.evaluate(
        "values => values.map(v => [window.mleboardNumbers.formatScore(v),"
        " window.mleboardNumbers.formatPercent(v * 100)])",
        VALUES,
    )
    page.close()
    expected = [[formatting.format_score(v), formatting.format_percent(v * 100)] for v in VALUES]
    assert shown == expected


def test_medal_lines_shown_together_have_the_same_decimals():
    assert formatting.format_scores_alike([0.8, 0.801234, None, 0.13755499999999998]) == [
        "0.800000",
        "0.801234",
        "",
        "0.137555",
    ]
    assert formatting.format_scores_alike([0.96389, 0.95556]) == ["0.96389", "0.95556"]
