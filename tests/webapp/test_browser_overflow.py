"""No page of the demo is wider than the window: every page a visitor, a signed-in user and
an admin reach, at a laptop's 1,280 px and a phone's 390 px, measured in the browser
(``document.documentElement.scrollWidth <= innerWidth``). Wide tables scroll inside
themselves; the page never does."""

import pytest

from webapp.results.models import Experiment, Run

from .conftest import shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.slow]

WIDTHS = (1280, 390)


def _pages(role: str) -> list[str]:
    reference = Experiment.objects.filter(source=Experiment.Source.REFERENCE).order_by("pk")
    published = Experiment.objects.exclude(published_figures={}).order_by("pk")
    best, worst = published.first(), published.last()
    run = Run.objects.filter(experiment=reference.last()).order_by("pk").first()
    pages = [
        "/",
        "/?source=reference",
        "/competitions/",
        "/competitions/demo-digits/",
        "/competitions/spaceship-titanic/",
        f"/experiments/{reference.last().pk}/",
        f"/experiments/{best.pk}/",
        "/compare/",
        f"/compare/?experiments={reference[0].pk},{reference[1].pk},{reference[2].pk}",
        f"/compare/?experiments={best.pk},{worst.pk}",
        f"/runs/result/{run.pk}/",
        "/api/docs/",
        "/api/redoc/",
        "/api/schema/",
        "/no/such/page/",
    ]
    if role == "anonymous":
        pages += ["/accounts/login/", "/accounts/password/reset/"]
    else:
        pages += ["/uploads/", "/uploads/new/", "/accounts/tokens/", "/accounts/email/"]
    if role == "staff":
        pages += [
            "/runs/",
            "/runs/new/",
            "/hosts/",
            "/integrity/",
            f"/integrity/runs/{run.pk}/",
            "/admin/",
            "/admin/results/experiment/",
            f"/admin/results/experiment/{best.pk}/change/",
            "/admin/competitions/competition/",
            "/admin/competitions/competition/demo-digits/change/",
            "/admin/results/run/",
        ]
    return pages


def test_no_page_is_wider_than_the_window(browser, live_server, demo_and_published):
    too_wide = []
    for role, login in (
        ("anonymous", None),
        ("user", ("uma", "pw-uma-12345")),
        ("staff", ("ada", "pw-ada-12345")),
    ):
        state = None
        if login:
            context = browser.new_context()
            sign_in(context.new_page(), live_server, *login)
            state = context.storage_state()
            context.close()
        for width in WIDTHS:
            context = browser.new_context(
                viewport={"width": width, "height": 900}, storage_state=state
            )
            page = context.new_page()
            for path in _pages(role):
                page.goto(live_server.url + path)
                page.wait_for_load_state("load")
                # Charts draw after load: wait for each to say it has.
                page.wait_for_function(
                    "Array.from(document.querySelectorAll('.figure[data-figure-id]'))"
                    ".every(f => f.dataset.rendered === 'true')",
                    timeout=15000,
                )
                scroll, inner = page.evaluate(
                    "[document.documentElement.scrollWidth, window.innerWidth]"
                )
                if scroll > inner:
                    name = f"overflow-{role}-{width}-{path.strip('/').replace('/', '-')}"
                    shot(page, name[:120])
                    too_wide.append(f"{role} {width} px {path}: {scroll} px wide")
            if role == "staff":
                shot(page, f"overflow-last-page-{width}")
            context.close()
    assert too_wide == []
