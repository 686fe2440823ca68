"""The integrity page reads plainly: checks by their labels, "checked just now", a real
button to check again, only substantial fragments coloured, excerpts that open the code."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from benchmark.integrity.detectors import CHECKS, check_label
from tests.support import integrity_cases as cases
from tests.support.browser import shot, sign_in_to
from tests.support.integrity_cases import graded_upload
from webapp.core.wording import ago
from webapp.integrity import services
from webapp.integrity.views import FRAGMENT_MIN_LINES, _side_by_side

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("catalogue")]

LITERAL_CID = "tabular-playground-series-may-2022"
LLM_CID = "tabular-playground-series-dec-2021"


def test_every_check_has_a_label():
    for check in CHECKS:
        assert check_label(check) != check and "_" not in check_label(check)
    assert check_label("external_llm") == "External LLM use"
    assert check_label("some_new_check") == "Some new check"


def test_ago_says_just_now_under_a_minute():
    now = timezone.now()
    assert ago(now - dt.timedelta(seconds=5), now) == "just now"
    assert ago(now - dt.timedelta(minutes=3), now) == "3\xa0minutes ago"
    assert ago(None) == ""


def test_short_fragments_are_counted_not_coloured():
    code = "\n".join(f"line {i}" for i in range(1, 21))
    one_line = {"a_lines": [1, 1], "b_lines": [4, 4], "kgrams": 2}
    long = {"a_lines": [5, 5 + FRAGMENT_MIN_LINES], "b_lines": [8, 8 + FRAGMENT_MIN_LINES]}
    side = _side_by_side(code, code, [one_line, {**long, "kgrams": 30}])
    coloured = [line["n"] for line in side["left"] if line["fragment"] is not None]
    assert coloured == list(range(5, 6 + FRAGMENT_MIN_LINES))
    assert side["short"] == 1 and len(side["fragments"]) == 1


def test_findings_read_as_labels_and_open_the_code(client, alice, reviewer):
    literal, llm = graded_upload(alice, {LITERAL_CID: cases.LITERAL, LLM_CID: cases.LLM_CALL})
    for run in (literal, llm):
        services.run_check(run.pk)
    client.force_login(alice)
    page = client.get(reverse("integrity-run", args=[literal.pk])).content.decode()
    assert "Hand-written submission" in page and "handwrittensubmission" not in page
    run_page = reverse("run-page-result", args=[literal.pk])
    assert f'href="{run_page}#code=code/solution.py" class="finding-excerpt"' in page
    assert "checked just now" in page and "0\xa0minutes" not in page
    page = client.get(reverse("integrity-run", args=[llm.pk])).content.decode()
    assert "External LLM use" in page and "externalllm" not in page
    client.force_login(reviewer)
    page = client.get(reverse("integrity-run", args=[llm.pk])).content.decode()
    assert '<button name="decision" value="recheck" formnovalidate id="recheck">' in page


def test_an_excerpt_opens_the_file_in_the_code_viewer(page, live_server, alice):
    (literal,) = graded_upload(alice, {LITERAL_CID: cases.LITERAL})
    services.run_check(literal.pk)
    sign_in_to(page, live_server, "alice", "pw-alice-123")
    page.goto(live_server.url + reverse("integrity-run", args=[literal.pk]))
    shot(page, "integrity-findings")
    page.click("a.finding-excerpt")
    page.wait_for_selector("#code-view .highlight, #code-view pre")
    assert "code/solution.py" in page.inner_text("#code-view")
    assert page.console_errors == []


@pytest.mark.parametrize(
    "pattern, why",
    [
        (r"timesince\s*\}\}\s*ago", '"0 minutes ago" for a moment ago: use the |ago filter'),
        (r'\|cut:"_"', 'a key without its underscores ("externalllm") is no label: give one'),
    ],
)
def test_no_template_prints_raw_words(pattern, why):
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    offenders = [
        str(path.relative_to(root))
        for folder in ("templates", "webapp")
        for path in (root / folder).rglob("*.html")
        if re.search(pattern, path.read_text())
    ]
    assert offenders == [], f"{why}: {', '.join(offenders)}"
