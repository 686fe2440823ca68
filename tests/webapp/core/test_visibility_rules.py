"""Mistakes that leaked private work once, banned by reading the source (as Zulip's
custom_check does): each rule says why. The visibility rule itself is webapp/core/visibility.py;
these keep everything else asking it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from webapp.core.visibility import SEE

ROOT = Path(__file__).resolve().parents[3]
PYTHON = sorted(p for p in (ROOT / "webapp").rglob("*.py") if "migrations" not in p.parts)
TEMPLATES = sorted((ROOT / "templates").rglob("*.html")) + sorted(
    (ROOT / "webapp" / "jinja2").rglob("*.html")
)
# Modules that answer requests: they ask selectors and services, which apply the rule.
VIEWS = [
    p
    for p in PYTHON
    if p.name in ("views.py", "api.py", "run_pages.py", "upload_views.py", "upload_api.py")
]
GOVERNED = sorted({label.split(".")[1] for label in SEE})


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


RULES = [
    (
        "the staff flag decides nothing: ask webapp.core.visibility (has_perm, may, visible_to); "
        "a staff member with no permission may see and do no more than anyone",
        re.compile(r"\bis_staff\b|\bis_superuser\b|staff_member_required|IsAdminUser"),
        PYTHON + TEMPLATES,
        # Django's admin lets only staff in: the link to it is for them; and a signed-in
        # page is not served from the cache once a bulk update changed the flags.
        {
            (
                "templates/viewer_nav.html",
                "{% if user.is_staff %}<a href=\"{% url 'admin:index' %}\">",
            ),
            ("webapp/edge/viewer_pages.py", 'ROW_FLAGS = ("is_staff", "is_superuser")'),
        },
    ),
    (
        "a check's stored reasons are facts: render them with webapp.integrity.reasons "
        "(reasons_for), which tells each viewer only what they may see",
        re.compile(r"(?<!integrity)\.reasons\b"),
        [
            p
            for p in PYTHON + TEMPLATES
            if _rel(p) not in ("webapp/integrity/reasons.py", "webapp/integrity/services.py")
        ],
        # The run page's summary is the run API's, whose reasons reasons_for rendered.
        {("templates/runs/run_page.html", "{% if integ.reasons %}")},
    ),
    (
        "permissions are named once, in webapp.core.visibility.Perm (templates read `can`)",
        re.compile(r"has_perm\(\s*['\"]|\{%[^%]*\bperms\.|\{\{[^}]*\bperms\."),
        [p for p in PYTHON + TEMPLATES if _rel(p) != "webapp/core/visibility.py"],
        set(),
    ),
    (
        "views and APIs do not query an object the visibility rule governs: ask a selector "
        "or service that applies visible_to",
        re.compile(r"\b(?:" + "|".join(GOVERNED) + r")\.objects\b"),
        VIEWS,
        set(),
    ),
]


@pytest.mark.parametrize("why, pattern, files, allowed", RULES, ids=[r[0][:40] for r in RULES])
def test_banned_pattern(why, pattern, files, allowed):
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and not any(
                _rel(path) == where and text in line for where, text in allowed
            ):
                found.append(f"{_rel(path)}:{number}: {line.strip()[:120]}")
    assert found == [], why + "\n" + "\n".join(found)


def test_the_rules_read_files():
    assert VIEWS and len(PYTHON) > 50 and len(TEMPLATES) > 20 and "Experiment" in GOVERNED
