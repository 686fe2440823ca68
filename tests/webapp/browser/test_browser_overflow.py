"""No page of the demo is wider than the window: every page a visitor, a signed-in user and
an admin reach, at a laptop's 1,280 px and a phone's 390 px, measured in the browser
(``document.documentElement.scrollWidth <= innerWidth``). Wide tables scroll inside
themselves; the page never does, and on a laptop an admin list shows every column. Each
address is the page walked (one that redirects elsewhere is reported, not measured)."""

import pytest

from tests.support.browser import shot, sign_in
from webapp.competitions.models import Competition
from webapp.results.models import Experiment, Run, Upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.slow]

WIDTHS = (1280, 390)


def _pages(role: str) -> list[str]:
    reference = Experiment.objects.filter(source=Experiment.Source.REFERENCE).order_by("pk")
    published = Experiment.objects.exclude(published_figures={}).order_by("pk")
    best, worst = published.first(), published.last()
    run = Run.objects.filter(experiment=reference.last()).order_by("pk").first()
    with_issues = Competition.objects.filter(known_issues__isnull=False).order_by("pk").first()
    demo = Competition.objects.get(slug="demo-digits")
    upload = Upload.objects.get()
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
        f"/compare/?experiments={best.pk},{reference[0].pk},{reference[1].pk}",
        f"/compare/?with={best.pk}",
        f"/runs/result/{run.pk}/",
        # The corrections log, with the known issue added below.
        "/changes/",
        "/changes/?kind=known_issue_added",
        "/api/docs/",
        "/api/redoc/",
        "/api/schema/",
        "/no/such/page/",
    ]
    if role == "anonymous":
        pages += ["/accounts/login/", "/accounts/signup/", "/accounts/password/reset/"]
    else:
        pages += ["/uploads/", "/uploads/new/", "/accounts/tokens/", "/accounts/email/"]
    if role == "user":
        pages += [f"/uploads/{upload.pk}/"]
    if role == "staff":
        pages += [
            "/runs/",
            "/runs/new/",
            "/hosts/",
            "/status/",
            "/integrity/",
            f"/integrity/runs/{run.pk}/",
            "/admin/",
            "/admin/results/experiment/",
            f"/admin/results/experiment/{best.pk}/change/",
            f"/admin/results/experiment/{reference.last().pk}/change/",
            "/admin/competitions/competition/",
            f"/admin/competitions/competition/{with_issues.pk}/change/",
            f"/admin/competitions/competition/{demo.pk}/change/",
            "/admin/competitions/privateleaderboard/",
            f"/admin/competitions/privateleaderboard/{demo.current_leaderboard.pk}/change/",
            "/admin/results/run/",
            f"/admin/results/run/{run.pk}/change/",
            "/admin/corrections/correction/",
            "/admin/results/upload/",
            f"/admin/results/upload/{upload.pk}/change/",
        ]
    return pages


def test_no_page_is_wider_than_the_window(browser, live_server, demo_and_published, settings):
    from django.contrib.auth import get_user_model

    settings.MLEBOARD_SIGNUP = "open"
    # An upload of uma's, its digest one 64-character word.
    Upload.objects.create(
        owner=get_user_model().objects.get(username="uma"),
        archive="uploads/runs.zip",
        original_name="runs.zip",
        sha256="0e9c9f800899e837807a470dd2f735c58a430e0feb3a430c98df0499971616e3",
        size=29443,
        status=Upload.Status.FAILED,
        error="not an archive",
    )
    # An entry in the corrections log, with every reference agent's figures before → after.
    from webapp.competitions.models import KnownIssue

    KnownIssue.objects.create(
        competition=Competition.objects.get(slug="demo-digits"),
        kind=KnownIssue.Kind.DATA,
        note="Two of the test images are labelled twice, with different digits "
        "(a_very_long_identifier_of_the_file_without_spaces_0123456789.png).",
    )
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
                if page.url != live_server.url + path:
                    too_wide.append(f"{role} {width} px {path}: led to {page.url}")
                    continue
                # Charts draw after load: wait for each to say it has.
                page.wait_for_function(
                    "Array.from(document.querySelectorAll('.figure[data-figure-id]'))"
                    ".every(f => f.dataset.rendered === 'true')",
                    timeout=15000,
                )
                scroll, inner = page.evaluate(
                    "[document.documentElement.scrollWidth, window.innerWidth]"
                )
                # An admin list on a laptop: every column seen, none behind a scrollbar.
                hidden = page.evaluate(
                    "(() => { const r = document.querySelector('#changelist .results');"
                    " return r ? r.scrollWidth - r.clientWidth : 0; })()"
                )
                if scroll > inner or (width >= 1280 and hidden > 0):
                    name = f"overflow-{role}-{width}-{path.strip('/').replace('/', '-')}"
                    shot(page, name[:120])
                    too_wide.append(f"{role} {width} px {path}: {scroll} px wide, {hidden} hidden")
            if role == "staff":
                shot(page, f"overflow-last-page-{width}")
            context.close()
    assert too_wide == []
