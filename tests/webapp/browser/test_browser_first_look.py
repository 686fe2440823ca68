"""What a new user meets on the site ``make run`` starts (the demo and MLE-bench's published
leaderboard), in a real browser at the width each page was found wanting, with
screenshots in test-artifacts/."""

import pytest

from tests.support.browser import shot
from webapp.results.models import Experiment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def _references():
    return Experiment.objects.filter(source=Experiment.Source.REFERENCE).order_by("pk")


def test_synthetic_references_are_apart_from_the_agents(page, live_server, demo_and_published):
    page.set_viewport_size(LAPTOP)
    page.goto(live_server.url + "/")
    page.wait_for_selector("#leaderboard-dots[data-rendered=true]", timeout=15000)
    references = {str(e.pk) for e in _references()}
    agents = page.locator("#leaderboard tbody tr[data-experiment]")
    assert agents.count() == Experiment.objects.exclude(source="reference").count()
    assert not {r.get_attribute("data-experiment") for r in agents.all()} & references
    # The chart draws the agents' rows, no reference.
    drawn = page.evaluate("document.getElementById('leaderboard-dots').data[0].y")
    assert len(drawn) == agents.count()
    assert not [name for name in drawn if name.startswith("Demo reference")]
    # The references: a section of their own, unranked, said to be synthetic.
    section = page.locator("#references")
    assert "Synthetic references, not agents" in section.locator("h2").inner_text()
    rows = section.locator("#references-table tbody tr[data-experiment]")
    assert {r.get_attribute("data-experiment") for r in rows.all()} == references
    assert set(rows.locator("td:nth-child(2)").all_inner_texts()) == {"—"}
    section.scroll_into_view_if_needed()
    shot(page, "first-look-references-apart")
    assert page.console_errors == []


def test_the_integrity_column_says_what_its_number_counts(page, live_server, demo_and_published):
    from webapp.results.models import ExperimentAggregate

    best = Experiment.objects.exclude(published_figures={}).order_by("pk").first()
    ExperimentAggregate.objects.update_or_create(experiment=best, defaults={"runs_checked": 8})
    page.set_viewport_size(LAPTOP)
    page.goto(live_server.url + "/")
    cell = page.locator(f'#leaderboard tr[data-experiment="{best.pk}"] td.integrity')
    assert cell.inner_text().strip() == "8 checked"


def _published():
    entries = Experiment.objects.exclude(published_figures={}).order_by("pk")
    return entries.first(), entries.last()


def test_a_published_entry_says_what_the_site_holds(page, live_server, demo_and_published):
    best, _ = _published()
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server.url}/experiments/{best.pk}/")
    notice = page.locator("#published-figures").inner_text()
    assert notice.startswith("Published figures only. This site holds the Any Medal %")
    assert "Low (Lite) 90.9 ± 0.0" in notice and "none of the entry's per-competition" in notice
    assert "no reports were uploaded" not in notice
    assert "they are not imported on this site" in page.locator("#reports-elsewhere").inner_text()
    assert page.locator("#source-badge").inner_text() == "Reported (published figures)"
    shot(page, "first-look-published-entry")


def test_compare_of_published_entries_hides_what_it_cannot_count(
    page, live_server, demo_and_published
):
    best, worst = _published()
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server.url}/compare/?experiments={best.pk},{worst.pk}")
    # Who is ahead, by the whole name: nothing of it is cut off.
    ahead = page.locator("table.unpaired-comparison .badge.ahead")
    assert ahead.count() == 4
    for badge in ahead.all():
        assert badge.inner_text() == best.name
        assert badge.evaluate("b => b.scrollWidth <= b.clientWidth")
    # No "0 / 0" rows, no deadline sentence where there is nothing per competition.
    assert page.locator("#compare-failure-table").count() == 0
    assert "has runs on this site" in page.locator("#compare-failures-empty").inner_text()
    assert page.locator("#contamination-dates-table").count() == 0
    assert "Kaggle deadline" not in page.locator("#contamination").inner_text()
    assert page.locator("#compare-tokens-table").count() == 0
    shot(page, "first-look-compare-published")


def test_compare_of_a_published_and_a_graded_entry_says_which_has_no_runs(
    page, live_server, demo_and_published
):
    from webapp.results.models import ExperimentAggregate

    best, _ = _published()
    graded = _references().last()
    # The reference's Demo figures given as All too, so that the two share a split.
    aggregate = ExperimentAggregate.objects.get(experiment=graded)
    aggregate.summary = {**aggregate.summary, "all": aggregate.summary["demo"]}
    splits = aggregate.figures["splits"]
    aggregate.figures = {**aggregate.figures, "splits": {**splits, "all": splits["demo"]}}
    aggregate.save()
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server.url}/compare/?experiments={best.pk},{graded.pk}")
    failures = page.locator("#compare-failure-table")
    assert set(failures.locator("tbody td:nth-child(2)").all_inner_texts()) == {"—"}
    assert "no runs on this site" in page.locator("#compare-failures").inner_text()
    rows = page.locator("#contamination-dates-table tbody tr")
    assert "no per-competition reports" in rows.nth(0).inner_text()
    assert "no per-competition reports" not in rows.nth(1).inner_text()


def test_a_mixed_selection_compares_the_pairs_that_share_a_split(
    page, live_server, demo_and_published
):
    best, _ = _published()
    first, second = _references()[:2]
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server.url}/compare/?experiments={best.pk},{first.pk},{second.pk}")
    assert page.locator("#compare-nothing-in-common").count() == 0
    unshared = page.locator("#compare-unshared").inner_text()
    assert f"{best.name} and {first.name}; {best.name} and {second.name}" in unshared
    verdicts = page.locator("#verdicts > li")
    assert verdicts.count() == 1
    assert verdicts.locator(".compared-on").inner_text() == "on Demo"
    assert f"{first.name} vs {second.name}, per competition" in page.locator("main").inner_text()
    assert page.locator("table.compare-per-competition tbody tr").count() == 4
    shot(page, "first-look-compare-mixed")
    assert page.console_errors == []


def test_a_competition_without_its_leaderboard_says_what_that_means(
    page, live_server, demo_and_published
):
    from tests.support.browser import sign_in

    page.set_viewport_size(LAPTOP)
    page.goto(live_server.url + "/competitions/spaceship-titanic/")
    said = page.locator("#no-leaderboard").inner_text()
    assert "get a score but no medal" in said and page.locator("#import-hint").count() == 0
    # The list says why once, not as a bare "—" per row.
    page.goto(live_server.url + "/competitions/?split=low")
    note = page.locator("#no-leaderboards").inner_text()
    assert note.startswith("No private leaderboard is on this site yet for these 22 competitions")
    assert "Teams" not in page.locator("#competitions thead").inner_text()
    page.goto(live_server.url + "/competitions/")
    assert page.locator("#no-leaderboards").inner_text().startswith("82 of these have no")
    shot(page, "first-look-competitions-without-leaderboards")
    # An operator is told the one command.
    sign_in(page, live_server, "ada", "pw-ada-12345")
    page.goto(live_server.url + "/competitions/spaceship-titanic/")
    hint = page.locator("#import-hint").inner_text()
    assert "git lfs pull" in hint and "manage.py import_mlebench PATH/TO/mle-bench" in hint
    shot(page, "first-look-competition-without-leaderboard")


def _inside(inner: dict, outer: dict, slack: float = 0.5) -> bool:
    return (
        inner["x"] >= outer["x"] - slack
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
    )


def _overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def test_the_leaderboard_chart_reads_on_a_phone(page, live_server, demo_and_published):
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + "/")
    chart = page.locator("#leaderboard-dots")
    chart.locator(".main-svg").first.wait_for()
    page.wait_for_selector("#leaderboard-dots[data-rendered=true]", timeout=15000)
    box = chart.bounding_box()
    plot = chart.locator(".nsewdrag").first.bounding_box()
    # The dots have room: the plot takes at least 40% of the chart's width.
    assert plot["width"] >= 0.4 * box["width"], (plot, box)
    title = chart.locator(".g-xtitle text")
    assert title.text_content() == "Any Medal %" and _inside(title.bounding_box(), box)
    labels = chart.locator(".ytick text")
    assert labels.count() == Experiment.objects.exclude(source="reference").count()
    assert all(_inside(label.bounding_box(), box) for label in labels.all())
    # A cut name keeps its start; the whole name is the row's.
    assert labels.first.text_content().startswith("Disarray × Ensemble")
    chart.scroll_into_view_if_needed()
    shot(page, "first-look-phone-leaderboard-chart")
    assert page.console_errors == []


def test_the_funnel_reads_on_a_phone(page, live_server, demo_and_published):
    experiment = _references().last()
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/experiments/{experiment.pk}/")
    page.wait_for_selector("#funnel[data-rendered=true]", timeout=15000)
    funnel = page.locator("#funnel")
    box, legend = funnel.bounding_box(), funnel.locator(".legend").bounding_box()
    labels = funnel.locator(".xtick text")
    assert labels.count() == 4
    for label in labels.all():
        assert not _overlap(label.bounding_box(), legend)
        assert _inside(label.bounding_box(), box)
    assert labels.last.text_content() == "Anymedal"  # "Any" over "medal"
    funnel.scroll_into_view_if_needed()
    shot(page, "first-look-phone-funnel")


def test_an_upload_page_keeps_a_phones_width(page, live_server, demo_and_published):
    from django.contrib.auth import get_user_model

    from tests.support.browser import sign_in
    from webapp.results.models import Upload

    upload = Upload.objects.create(
        owner=get_user_model().objects.get(username="uma"),
        archive="uploads/runs.zip",
        original_name="runs.zip",
        sha256="0e9c9f800899e837807a470dd2f735c58a430e0feb3a430c98df0499971616e3",
        size=29443,
        status=Upload.Status.FAILED,
    )
    page.set_viewport_size(PHONE)
    sign_in(page, live_server, "uma", "pw-uma-12345")
    page.goto(f"{live_server.url}/uploads/{upload.pk}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shot(page, "first-look-phone-upload")


def test_the_launch_form_fits_a_phone(page, live_server, demo_and_published, unisolated):
    from tests.support.browser import sign_in

    page.set_viewport_size(PHONE)
    sign_in(page, live_server, "ada", "pw-ada-12345")
    page.goto(live_server.url + "/runs/new/")
    # The warning is a line and a summary, not the first screen.
    assert page.locator("#unisolated-banner").bounding_box()["height"] < 180
    assert not page.locator("#run-confinement-site").is_visible()
    fields = page.locator("#launch-form input:not([type=hidden]), #launch-form select")
    assert fields.count() >= 10
    for field in fields.all():
        right = field.evaluate("f => f.getBoundingClientRect().right")
        assert right <= PHONE["width"], field.get_attribute("name")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shot(page, "first-look-phone-launch-form")
    page.click("#unisolated-details summary")
    assert page.locator("#run-confinement-site").is_visible()


def test_the_menu_folds_on_a_phone_and_fits_a_line_on_a_laptop(
    page, live_server, demo_and_published, django_user_model
):
    from tests.support.browser import sign_in

    django_user_model.objects.create_superuser(
        "alexandra.lovelace-byron", "al@example.org", "pw-al-12345"
    )
    sign_in(page, live_server, "alexandra.lovelace-byron", "pw-al-12345")
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + "/status/")
    header = page.locator("header.top")
    assert header.bounding_box()["height"] < 60  # the brand and a Menu button
    assert not page.locator("#site-nav").is_visible()
    page.click("#menu-button")
    assert page.locator("header.top button.sign-out").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shot(page, "first-look-phone-menu-open")
    # A laptop: the whole navigation on one line, "Sign out NAME" included.
    page.set_viewport_size(LAPTOP)
    page.goto(live_server.url + "/status/")
    assert not page.locator("#menu-button").is_visible()
    links = page.locator("#site-nav > a, #site-nav button.sign-out")
    tops = {round(link.bounding_box()["y"]) for link in links.all()}
    assert len(tops) == 1, tops
    sign_out = page.locator("header.top button.sign-out").bounding_box()
    assert sign_out["height"] < 30
    shot(page, "first-look-laptop-menu")


def test_the_admins_competition_pages_fit_a_laptop(page, live_server, demo_and_published):
    from tests.support.browser import sign_in
    from webapp.competitions.models import Competition

    page.set_viewport_size(LAPTOP)
    sign_in(page, live_server, "ada", "pw-ada-12345")
    page.goto(live_server.url + "/admin/competitions/competition/")
    # Every column seen: the list does not scroll sideways inside its box.
    results = page.locator("#changelist .results")
    assert results.evaluate("r => r.scrollWidth <= r.clientWidth"), results.evaluate(
        "r => [r.scrollWidth, r.clientWidth]"
    )
    shot(page, "first-look-admin-competitions")
    # A competition with known issues: its inline (a wide table) stays within the page.
    with_issues = Competition.objects.filter(known_issues__isnull=False).first()
    page.goto(f"{live_server.url}/admin/competitions/competition/{with_issues.pk}/change/")
    assert page.locator("#known_issues-group").count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= LAPTOP["width"]
    shot(page, "first-look-admin-competition-change")


def test_an_upload_lists_missing_submissions_apart_from_invalid_ones(
    page, live_server, demo_and_published
):
    from django.contrib.auth import get_user_model

    from tests.support.browser import sign_in
    from webapp.results.models import GradeReport, Run, Upload

    experiment = _references().last()
    missing, invalid = Run.objects.filter(experiment=experiment).order_by("pk")[:2]
    Run.objects.filter(pk=missing.pk).update(error="No submission was made.")
    GradeReport.objects.filter(run=missing).update(submission_exists=False)
    Run.objects.filter(pk=invalid.pk).update(error="Submission is missing 2 columns")
    uma = get_user_model().objects.get(username="uma")
    Experiment.objects.filter(pk=experiment.pk).update(owner=uma)
    upload = Upload.objects.create(
        owner=uma,
        archive="uploads/runs.zip",
        original_name="runs.zip",
        sha256="0" * 64,
        size=1,
        status=Upload.Status.GRADED,
        experiment=experiment,
    )
    page.set_viewport_size(LAPTOP)
    sign_in(page, live_server, "uma", "pw-uma-12345")
    page.goto(f"{live_server.url}/uploads/{upload.pk}/")
    # The page's script draws the lists again from the API: the same either way.
    page.wait_for_function("document.getElementById('up-status').textContent === 'graded'")
    invalid_list = page.locator("#up-invalid-list li:visible").all_inner_texts()
    missing_list = page.locator("#up-missing-list li:visible").all_inner_texts()
    assert invalid_list == [
        f"{invalid.competition.slug} seed {invalid.seed}: Submission is missing 2 columns"
    ]
    assert missing_list == [f"{missing.competition.slug} seed {missing.seed}"]
    assert page.locator("#up-invalid").inner_text() == "2"
    assert "invalid or missing" in page.locator("#up-invalid + .label").inner_text()
    answer = page.evaluate(f"fetch('/api/uploads/{upload.pk}/').then(r => r.json())")
    made = {
        (i["competition_id"], i["seed"]): i["submission_made"]
        for i in answer["invalid_submissions"]
    }
    assert made == {
        (missing.competition.slug, missing.seed): False,
        (invalid.competition.slug, invalid.seed): True,
    }
    shot(page, "first-look-upload-missing-apart")


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_sign_up_looks_like_sign_in(page, live_server, settings, viewport):
    settings.MLEBOARD_SIGNUP = "open"
    page.set_viewport_size(viewport)

    def inputs(path: str) -> list[tuple[float, float]]:
        page.goto(live_server.url + path)
        assert page.locator("main .account-page form").count() == 1
        fields = page.locator(
            "main .account-page input[type=text], main .account-page input[type=password]"
        )
        return [
            tuple(
                f.evaluate(
                    "i => [i.getBoundingClientRect().width, i.getBoundingClientRect().height]"
                )
            )
            for f in fields.all()
        ]

    sign_in, sign_up = inputs("/accounts/login/"), inputs("/accounts/signup/")
    assert len(sign_up) == 3  # username, password, again (and the email field)
    assert set(sign_up) == {sign_in[0]}, (sign_up, sign_in)
    email = page.locator("input[type=email]").bounding_box()
    assert (email["width"], email["height"]) == pytest.approx(sign_in[0])
    shot(page, f"first-look-sign-up-{viewport['width']}")


def test_compare_with_from_an_experiment_and_the_picker_newest_first(
    page, live_server, demo_and_published
):
    first, second = _references()[:2]
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server.url}/experiments/{first.pk}/")
    page.click("#compare-with a")
    page.wait_for_selector("#compare-pick-table")
    assert first.name in page.locator("#compare-with-intro").inner_text()
    assert page.locator(f'input.compare-pick[value="{first.pk}"]').is_checked()
    assert page.locator("#compare-button").inner_text() == "Compare selected (1)"
    # "The most recent first", as it says: the demo's entries (no run date, made today)
    # before MLE-bench's published ones.
    dates = page.locator("#compare-pick-table td[data-date]").evaluate_all(
        "cells => cells.map(c => c.dataset.date)"
    )
    assert dates == sorted(dates, reverse=True) and len(dates) == Experiment.objects.count()
    shot(page, "first-look-compare-with")
    page.check(f'input.compare-pick[value="{second.pk}"]')
    page.click("#compare-button")
    page.wait_for_selector("#verdicts")
    assert page.console_errors == []


def test_a_verdict_says_which_wins_its_test_does_not_count(page, live_server, demo_and_published):
    sample = Experiment.objects.get(name="Demo reference: sample-submission")
    forest = Experiment.objects.get(name="Demo reference: random-forest")
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server.url}/compare/?experiments={forest.pk},{sample.pk}")
    verdict = page.locator("#verdicts > li").inner_text()
    assert "in Any Medal %" in verdict and "test of the medal rates" in verdict
    rows = page.locator("table.compare-per-competition tbody tr")
    equal = sum(
        1
        for row in rows.all()
        if row.get_attribute("data-result") != "tie"
        and row.locator("td").nth(1).get_attribute("data-value")
        == row.locator("td").nth(4).get_attribute("data-value")
    )
    # The demo's forest beats the sample submission on most competitions below the medals.
    assert equal > 0
    below = page.locator("#verdicts .below-medals").inner_text()
    assert below.startswith(f"{equal} of them with equal medal rates")
    shot(page, "first-look-compare-verdict")
