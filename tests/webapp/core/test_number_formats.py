"""One number format for every page: the template filters print what
``webapp.core.formatting`` declares, ``static/js/numbers.js`` prints the same, and templates never
print a known float field raw or to decimals of their own."""

import re
from pathlib import Path

import pytest
from django.template import Context, Template

from webapp.core import formatting

REPO = Path(__file__).resolve().parents[3]
TEMPLATE_DIRS = (REPO / "templates", REPO / "webapp")

# Fields that hold floats: a score, a medal line, a percentage, a rate, a statistic.
FLOAT_FIELDS = (
    r"score|mean|standard_error|percentile|\w*_rate|similarity|\w*threshold|ci_lower|ci_upper"
    r"|difference|any_medal\w*"
)
# "{{ x.score }}" printed as text (not an attribute's value, which scripts read raw).
RAW_FLOAT = re.compile(r'(?<!=")\{\{\s*[\w.]*\b(' + FLOAT_FIELDS + r")\s*\}\}")
# floatformat to a fixed number of places: a precision of the template's own.
OWN_DECIMALS = re.compile(r"\b(" + FLOAT_FIELDS + r')\|floatformat(:\s*"?-?\d+"?)?')


# Already text, formatted by webapp.core.formatting in Python (webapp/results/pages/contamination.py).
PREFORMATTED = {"{{ row.cutoff.difference }}"}


def _templates():
    for root in TEMPLATE_DIRS:
        yield from (p for p in root.rglob("*.html") if ".venv" not in p.parts)


def test_no_template_prints_a_float_field_raw_or_to_its_own_decimals():
    found = []
    for path in _templates():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for pattern in (RAW_FLOAT, OWN_DECIMALS):
                for match in pattern.finditer(line):
                    if match.group(0) in PREFORMATTED:
                        continue
                    found.append(f"{path.relative_to(REPO)}:{n}: {match.group(0)}")
    assert found == [], (
        "print scores with |score, percentages with |pct or |percent, fractions with |rate, "
        "statistics with |stat ({% load numbers_format %}): one format per kind of number, "
        "declared in webapp/core/formatting.py\n" + "\n".join(found)
    )


def test_the_ban_catches_what_it_bans():
    assert RAW_FLOAT.search("<td>{{ grade.score }}</td>")
    assert RAW_FLOAT.search("{{ board.median_threshold }}")
    assert not RAW_FLOAT.search('<td data-value="{{ row.a_medal_rate }}">')
    assert not RAW_FLOAT.search("{{ grade.score|score }}")
    assert OWN_DECIMALS.search("{{ row.a_medal_rate|floatformat:2 }}")
    assert OWN_DECIMALS.search("{{ v.mean|floatformat:1 }}")
    assert not OWN_DECIMALS.search("{{ r.duration_s|floatformat:1 }}")


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
