"""The integrity checks end to end, as people meet them: an admin adds reference code
for a competition in the admin; a user uploads runs through the upload form; a real worker
grades them and then checks them; the seeded ones (a reference copied with renamed
variables, a submission written from literals, an LLM API call) are flagged and the clean
one is not; a reviewer opens the side-by-side view and disqualifies the copy; the
experiment's figures drop by that medal and the leaderboard says so."""

import json
import re

import pytest

from tests.support import archive_builders as ab
from tests.support import integrity_cases as cases
from tests.support.browser import shot, sign_in_to
from tests.support.polling import wait_until
from webapp.competitions.models import Competition
from webapp.integrity.models import RunCheck
from webapp.results.models import Experiment, ExperimentAggregate, Run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
]

# What each demo competition's run holds as code (all four submissions win a medal).
SEEDED = {
    "demo-breast-cancer": cases.COPIED,
    "demo-digits": cases.LITERAL,
    "demo-wine": cases.LLM_CALL,
    "demo-diabetes": cases.CLEAN_REGRESSION,
}


def any_medal(experiment_id) -> float:
    figures = ExperimentAggregate.objects.get(experiment_id=experiment_id).figures["splits"]
    return next(iter(figures.values()))["metrics"]["any_medal_percentage"]["mean"]


def test_upload_graded_checked_flagged_reviewed_and_figures_change(
    browser, live_server, demo_leaderboards, celery_worker_process, django_user_model, tmp_path
):
    django_user_model.objects.create_user(
        "rita", password="pw-rita-12345", is_staff=True, is_superuser=True
    )
    django_user_model.objects.create_user("ivy", password="pw-ivy-12345")
    errors = []
    admin, user = (
        browser.new_context(viewport={"width": 1300, "height": 900}).new_page() for _ in "ab"
    )
    for page in (admin, user):
        page.on("pageerror", lambda exc: errors.append(str(exc)))

    # An admin adds the reference code of demo-breast-cancer (a zip with sources.csv).
    references = ab.write_file(tmp_path / "references.zip", cases.references_zip())
    sign_in_to(admin, live_server, "rita", "pw-rita-12345", "/admin/")
    admin.goto(live_server.url + "/admin/integrity/referencecorpus/add/")
    admin.select_option(
        "select[name=competition]",
        str(Competition.objects.get(slug="demo-breast-cancer").pk),
    )
    admin.fill("textarea[name=note]", "Top public notebooks")
    admin.set_input_files("input[name=archive]", str(references))
    shot(admin, "integrity-references-add")
    admin.click("input[name=_save]")
    admin.wait_for_selector("text=demo-breast-cancer references v1: 2 files")

    # A user uploads a run group whose four runs all win a medal.
    group = "2024-10-01T00-00-00-GMT_run-group_seeded"
    files = {f"{group}/metadata.json": json.dumps({"run_group": group, "runs": {}}).encode()}
    for index, (cid, code) in enumerate(SEEDED.items()):
        base = f"{group}/{ab.run_id(cid, index)}"
        files[f"{base}/submission/submission.csv"] = demo_leaderboards.submissions["linear"][0][
            cid
        ].read_bytes()
        files[f"{base}/code/solution.py"] = code.encode()
        files[f"{base}/logs/run.log"] = b"fitting\nwrote the submission\n"
    archive = ab.write_file(tmp_path / "runs.zip", ab.zip_bytes(files))
    sign_in_to(user, live_server, "ivy", "pw-ivy-12345")
    user.goto(live_server.url + "/uploads/new/")
    user.set_input_files("input[name=archive]", str(archive))
    user.fill("input[name=scaffold]", "seeded")
    user.fill("input[name=model]", "none")
    user.click("#upload-form button[type=submit]")
    user.wait_for_url(re.compile(r".*/uploads/\d+/$"), timeout=120000)
    user.wait_for_function(
        "document.getElementById('up-status').textContent === 'graded'", timeout=120000
    )
    experiment = Experiment.objects.get(owner__username="ivy")
    Experiment.objects.filter(pk=experiment.pk).update(is_published=True)

    # The worker checks each graded run after grading.
    wait_until(
        lambda: (
            RunCheck.objects.filter(
                run__experiment=experiment, checked_at__isnull=False, due_since__isnull=True
            ).count()
            == 4
        ),
        timeout=120,
    )
    wait_until(
        lambda: ExperimentAggregate.objects.filter(experiment=experiment, runs_checked=4).exists(),
        timeout=60,
    )
    status = {
        c.run.competition.slug: c.status
        for c in RunCheck.objects.filter(run__experiment=experiment).select_related(
            "run__competition"
        )
    }
    assert status == {
        "demo-breast-cancer": "flagged",
        "demo-digits": "flagged",
        "demo-wine": "flagged",
        "demo-diabetes": "clean",
    }, celery_worker_process.log_path.read_text()[-3000:]
    assert any_medal(experiment.pk) == 100.0

    # The owner sees the status on the run page.
    copied = Run.objects.get(experiment=experiment, competition__slug="demo-breast-cancer")
    user.goto(f"{live_server.url}/runs/result/{copied.pk}/")
    assert user.locator("#integrity-status").inner_text() == "flagged"

    # The reviewer: the queue lists the three flagged runs; the copy side by side.
    admin.goto(live_server.url + "/integrity/")
    assert admin.locator("#review-queue tbody tr").count() == 3
    shot(admin, "integrity-review-queue")
    admin.click(f"a[href='/integrity/runs/{copied.pk}/']")
    admin.wait_for_selector("#similarity .side-by-side")
    assert float(admin.locator("#similarity-value").inner_text()) >= 0.6
    assert admin.locator("#similarity .frag.c0").count() > 10  # highlighted on both sides
    assert admin.locator("#llm-review").inner_text() == "LLM review not configured."
    shot(admin, "integrity-side-by-side")
    admin.fill("textarea[name=reason]", "A top notebook with its variables renamed")
    admin.click("button[value=disqualified]")
    admin.wait_for_selector("#decision")
    assert "disqualified" in admin.locator("#decision").inner_text()

    # The figures are recomputed without that medal; the leaderboard says so.
    wait_until(lambda: any_medal(experiment.pk) == 75.0, timeout=60)
    user.goto(live_server.url + "/?integrity=disqualified")
    row = user.locator(f"#leaderboard tr[data-experiment='{experiment.pk}']")
    cell = row.locator("td.integrity").inner_text()
    assert cell.split() == "4 checked 2 flagged 1 DQ".split()
    shot(user, "integrity-leaderboard")
    user.goto(live_server.url + "/?integrity=clean")
    assert user.locator(f"#leaderboard tr[data-experiment='{experiment.pk}']").count() == 0
    user.goto(f"{live_server.url}/experiments/{experiment.pk}/")
    assert "1 disqualified" in user.locator("#experiment-integrity").inner_text()
    assert user.locator("td .badge.integrity.disqualified").count() == 1
    assert user.locator("#headline .value").first.inner_text() == "75.0%"
    shot(user, "integrity-experiment")
    assert errors == []
