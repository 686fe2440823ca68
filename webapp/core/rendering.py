"""Jinja2 for the long table bodies of the pages (the leaderboard's rows, an experiment's
per-competition reports): the same markup a Django template would give, rendered several
times faster, with autoescaping on. The page itself stays a Django template and includes
the body as ``{{ rows_html }}``: a ``markupsafe.Markup`` from an autoescaping engine, which
Django prints as it is (it honours ``__html__``).

    rows_html = render_rows("results/leaderboard_rows.html", rows=rows)
"""

from __future__ import annotations

import functools
from pathlib import Path
from urllib.parse import quote

from django.urls import reverse
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

TEMPLATES_DIR = Path(__file__).parent / "jinja2"


@functools.cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


def url_for_each(name: str):
    """``reverse(name, args=[x])`` for many ``x`` at the cost of one reverse: a function
    of the single argument, for table rows (hundreds of links to one route)."""
    sentinel = "0" * 9 + "1"
    pattern = reverse(name, args=[sentinel])
    head, tail = pattern.split(sentinel)
    return lambda arg: f"{head}{quote(str(arg), safe='')}{tail}"


def render_rows(name: str, **context) -> Markup:
    """A table body rendered by ``webapp/core/jinja2/<name>`` (escaped by the engine)."""
    return Markup(environment().get_template(name).render(**context))
