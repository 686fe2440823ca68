# ruff: noqa: F811  (the fixtures imported from test_agent_runs are parameters here)
"""Rough edges a new user found, each with the test that would have caught it."""

import re

import pytest
from django.contrib.auth.models import AnonymousUser
from django.templatetags.static import static
from django.urls import reverse

from runner.agent_definition import AgentConfigError

# The agent-run fixtures (site, runner_user, agent_dirs), used by their names.
from tests.support.launches import api_for, launch
from webapp import figures
from webapp.competitions.models import Competition, PrivateLeaderboard
from webapp.competitions.services import catalogue_sync
from webapp.core.formatting import format_score, shown_interval
from webapp.figures import competition as competition_figures
from webapp.results.models import Experiment, GradeReport

pytestmark = pytest.mark.django_db

NOISY = 0.13755499999999998


def _board(competition, **thresholds):
    values = {"gold": 0.9, "silver": 0.8, "bronze": 0.7, "median": 0.5, **thresholds}
    board = PrivateLeaderboard.objects.create(
        competition=competition,
        version=1,
        source_format="mlebench",
        n_teams=10,
        lower_is_better=competition.lower_is_better,
        **{f"{k}_threshold": v for k, v in values.items()},
    )
    board.entries.bulk_create(
        [
            board.entries.model(leaderboard=board, position=i + 1, score=1 - i / 10)
            for i in range(10)
        ]
    )
    return board


# 1. Numbers to the metric's precision, never float noise.


def test_format_score_drops_float_noise():
    assert format_score(NOISY) == "0.137555"
    assert format_score(0.8900000000000006) == "0.89"
    assert format_score(1234567.8) == "1234567.8"
    assert format_score(1.2345e-8) == "0.00000001235"
    assert format_score(None) == ""


def test_scores_and_thresholds_print_without_float_noise(client, imported):
    report = GradeReport.objects.filter(is_current=True, score__isnull=False).first()
    report.score = NOISY
    report.median_threshold = NOISY
    report.save()
    competition = report.competition
    _board(competition, median=NOISY)
    for url in (
        reverse("competition-detail", args=[competition.slug]),
        reverse("experiment-detail", args=[report.experiment_id]),
    ):
        # Figure data (JSON for Plotly) keeps raw values; what people read does not.
        html = re.sub(r"<script.*?</script>", "", client.get(url).content.decode(), flags=re.S)
        assert "0.13755499999999998" not in html, url
        assert "0.137555" in html, url
    # The API stays raw.
    api = client.get(reverse("api-experiment-reports", args=[report.experiment_id]))
    assert api.status_code == 200
    assert "0.13755499999999998" in api.content.decode()


def test_histogram_hover_text_is_formatted():
    figure = figures.leaderboard_distribution(
        [0.1, 0.2, 0.3],
        {"gold": 0.3, "silver": 0.2, "bronze": 0.15, "median": NOISY},
        lower_is_better=False,
        agent_scores=[("agent (seed 0)", NOISY)],
    )
    agents = figure["data"][1]
    assert agents["customdata"] == ["0.137555"]
    assert "%{customdata}" in agents["hovertemplate"]
    bins = figure["data"][0]
    assert "%{customdata}" in bins["hovertemplate"]
    assert bins["customdata"][0] == "0.0975 – 0.1025"


# 2. A percentage's interval stays in [0, 100]; the stored figures stay MLE-bench's.


def test_shown_interval_is_clipped_and_says_so():
    assert shown_interval({"ci_lower": 1.3, "ci_upper": 132.0}) == {
        "lower": 1.3,
        "upper": 100.0,
        "clipped": True,
    }
    assert shown_interval({"ci_lower": -4.0, "ci_upper": 20.0})["lower"] == 0.0
    assert shown_interval({"ci_lower": 10.0, "ci_upper": 20.0})["clipped"] is False


def test_experiment_page_interval_never_passes_100(client, imported):
    experiment = Experiment.objects.get(name="aide-o1")
    aggregate = experiment.aggregate
    metric = aggregate.figures["splits"]["low"]["metrics"]["any_medal_percentage"]
    metric.update({"mean": 66.7, "standard_error": 33.3, "ci_lower": 1.3, "ci_upper": 132.0})
    aggregate.save()
    html = client.get(reverse("experiment-detail", args=[experiment.pk]) + "?split=low")
    html = html.content.decode()
    assert "132.0" not in html
    assert "95% CI 1.3–100.0" in html
    assert 'id="ci-note"' in html and "clipped to 0–100" in html
    # The stored (published-compatible) figure is unchanged.
    experiment.aggregate.refresh_from_db()
    assert experiment.aggregate.figures["splits"]["low"]["metrics"]["any_medal_percentage"][
        "ci_upper"
    ] == pytest.approx(132.0)


# 3. Percentage axes run 0–100 when every value is 0 (Plotly's autorange would give 0–1).


def test_pass_at_k_axis_of_an_all_zero_experiment_runs_to_100():
    zero = figures.pass_at_k_curves(
        [("x", [{"k": 1, "percentage": 0.0}, {"k": 2, "percentage": 0.0}])]
    )
    assert zero["layout"]["yaxis"]["range"] == [0, 100]
    some = figures.pass_at_k_curves([("x", [{"k": 1, "percentage": 12.0}])])
    assert "range" not in some["layout"]["yaxis"]
    assert some["layout"]["yaxis"]["rangemode"] == "tozero"
    bars = figures.split_bars(
        [("x", {"all": {"mean": 0.0, "standard_error": 0.0}})], [("all", "All")]
    )
    assert bars["layout"]["yaxis"]["range"] == [0, 100]
    assert figures.time_scaling([{"elapsed_hours": 1, "any_medal_percentage": 0}])["layout"][
        "yaxis"
    ]["range"] == [0, 100]


# 4. Medal-line labels never overlap: close lines put their labels on different rows.


def _label_rows(figure):
    return [(a["x"], a["yshift"], a["text"]) for a in figure["layout"]["annotations"]]


@pytest.mark.parametrize(
    "thresholds",
    [
        {"gold": 0.951, "silver": 0.95, "bronze": 0.949, "median": 0.9},
        {"gold": 0.5, "silver": 0.5, "bronze": 0.5, "median": 0.5},
        {"gold": 0.99, "silver": 0.7, "bronze": 0.4, "median": 0.1},
    ],
)
def test_histogram_threshold_labels_never_overlap(thresholds):
    scores = [i / 100 for i in range(101)]
    figure = figures.leaderboard_distribution(scores, thresholds, lower_is_better=False)
    labels = _label_rows(figure)
    assert len(labels) == 4
    span = max(scores) - min(scores)
    for i, (x1, shift1, _) in enumerate(labels):
        for x2, shift2, _ in labels[i + 1 :]:
            # Same row: far enough apart; otherwise a whole label height apart.
            assert (
                abs(x1 - x2) >= competition_figures.LABEL_MIN_GAP * span
                or abs(shift1 - shift2) >= 17
            )
    rows = len({shift for _, shift, _ in labels})
    assert figure["layout"]["margin"]["t"] >= 30 + competition_figures.LABEL_ROW_PX * (rows - 1)
    if thresholds["gold"] - thresholds["median"] > 0.5:
        assert rows == 1  # far apart: one row, no wasted space
    hover = [a["hovertext"] for a in figure["layout"]["annotations"]]
    assert all(": " in h for h in hover)


# 5. Compare with nothing in common: a sentence, not empty axes.


def test_compare_with_no_split_in_common_says_so(client, imported):
    from webapp.results.grading.aggregates import summary_of

    aide = Experiment.objects.get(name="aide-o1")
    mlab = Experiment.objects.get(name="mlab-gpt4o")
    for experiment, keep in ((aide, "low"), (mlab, "dev")):
        aggregate = experiment.aggregate
        splits = aggregate.figures["splits"]
        aggregate.figures["splits"] = {keep: splits.get("low") or next(iter(splits.values()))}
        # The summary the compare page reads goes with the figures, as a refresh stores it.
        aggregate.summary = summary_of(aggregate.figures)
        aggregate.save()
    response = client.get(reverse("compare") + f"?experiments={aide.pk},{mlab.pk}")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="compare-nothing-in-common"' in html
    assert "no split in common" in html
    assert "aide-o1</a> has figures on Low (Lite)" in html
    assert "mlab-gpt4o</a> has figures on Dev" in html
    assert "plotly_figure" not in html and "compare-split-bars" not in html
    assert "resamples" not in html and "( " not in html


# 6. An entry with figures only over the competitions it ran: shown, and not ranked.


def test_entry_without_a_figure_on_the_ranking_split_is_unranked(client, imported):
    from webapp.results.pages.leaderboard import LeaderboardFilters, leaderboard_entries

    aide = Experiment.objects.get(name="aide-o1")
    mlab = Experiment.objects.get(name="mlab-gpt4o")
    aggregate = mlab.aggregate
    # One competition only: no split covered, figures on `ran` only, and a high mean.
    aggregate.summary = {
        "ran": {"mean": 100.0, "standard_error": 0.0, "n_seeds": 2, "n_competitions": 1}
    }
    aggregate.save()
    entries = leaderboard_entries(user=AnonymousUser(), filters=LeaderboardFilters())
    by_name = {e["name"]: e for e in entries}
    assert by_name["aide-o1"]["rank"] == 1
    assert by_name["mlab-gpt4o"]["rank"] is None
    assert [e["name"] for e in entries] == ["aide-o1", "mlab-gpt4o"]
    html = client.get(reverse("home")).content.decode()
    row = re.search(rf'<tr data-experiment="{mlab.pk}">.*?</tr>', html, re.S).group(0)
    assert re.search(r'<td class="num" data-value="\d+"[^>]*>—</td>', row)
    assert "Competitions run (1): 100.0 ± 0.0" in row
    assert 'id="ranking-note"' in html and "unranked" in html
    aide_row = re.search(rf'<tr data-experiment="{aide.pk}">.*?</tr>', html, re.S).group(0)
    assert ">1</td>" in aide_row


# 7. Upload progress: failed runs and invalid submissions named apart, counts matching lists.


def test_upload_progress_counts_match_their_lists(imported, django_user_model):
    from webapp.results.models import Run, Upload
    from webapp.results.uploads.progress import upload_progress

    experiment = Experiment.objects.get(name="aide-o1")
    Run.objects.filter(experiment=experiment).update(status=Run.Status.GRADED, error="")
    runs = list(Run.objects.filter(experiment=experiment).order_by("pk")[:3])
    Run.objects.filter(pk=runs[0].pk).update(error="invalid: 3 rows missing")
    Run.objects.filter(pk=runs[1].pk).update(
        status=Run.Status.FAILED, error="grading ran out of memory"
    )
    owner = django_user_model.objects.create_user("uploader", password="x")
    upload = Upload.objects.create(
        owner=owner,
        archive="a.tar.gz",
        original_name="a.tar.gz",
        size=1,
        sha256="0" * 64,
        status=Upload.Status.GRADED,
        experiment=experiment,
    )
    progress = upload_progress(upload)
    assert progress["runs_failed"] == len(progress["failures"]) == 1
    assert progress["failures"][0]["reason"] == "grading ran out of memory"
    assert progress["runs_invalid"] == len(progress["invalid_submissions"]) == 1
    assert progress["invalid_submissions"][0]["reason"].startswith("invalid")
    # None failed: no failure listed next to runs_failed 0.
    Run.objects.filter(pk=runs[1].pk).update(status=Run.Status.GRADED, error="")
    progress = upload_progress(upload)
    assert progress["runs_failed"] == 0 and progress["failures"] == []
    assert progress["runs_invalid"] == 1


# 8. Admin: publish and withdraw confirm what they did; the review queue reads plainly.


def test_admin_publish_and_withdraw_confirm(admin_client, imported):
    experiments = list(Experiment.objects.order_by("pk"))
    url = reverse("admin:results_experiment_changelist")
    ids = [str(e.pk) for e in experiments]
    response = admin_client.post(url, {"action": "unpublish", "_selected_action": ids}, follow=True)
    html = response.content.decode()
    assert "2 experiments withdrawn from the public leaderboard." in html
    assert not Experiment.objects.filter(is_published=True).exists()
    response = admin_client.post(
        url, {"action": "publish", "_selected_action": ids[:1]}, follow=True
    )
    assert "1 experiment published on the public leaderboard." in response.content.decode()
    response = admin_client.post(url, {"action": "publish", "_selected_action": ids}, follow=True)
    assert "1 experiment published on the public leaderboard (1 already was)." in (
        response.content.decode()
    )


def test_review_queue_wording(admin_client, imported):
    html = admin_client.get(reverse("admin:results_reviewqueue_changelist")).content.decode()
    assert "review queue (unpublished experiments)" not in html
    assert "experiments awaiting review" in html.lower()


# 9. The same archive again with other metadata: the answer says the metadata was not applied.


def test_resent_archive_with_new_metadata_says_it_is_not_applied(media, django_user_model, client):
    import json

    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from tests.support import archive_builders as ab
    from webapp.results.models import Upload

    catalogue_sync()
    alice = django_user_model.objects.create_user("alice", password="pw-alice-123")
    api = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=alice).key}")
    data = ab.zip_bytes(ab.run_group_files("rg", ["spaceship-titanic"]))

    def send(metadata):
        return api.post(
            "/api/uploads/",
            {"archive": SimpleUploadedFile("runs.zip", data), "metadata": json.dumps(metadata)},
        ).json()

    first = send({"scaffold": "aide", "model": "gpt-4o"})
    same = send({"scaffold": "aide", "model": "gpt-4o"})
    assert same["duplicate"] is True and same["metadata_ignored"] is False
    changed = send({"scaffold": "aide", "model": "o1"})
    assert changed["id"] == first["id"] and changed["metadata_ignored"] is True
    assert "not applied" in changed["message"]
    assert Upload.objects.get().metadata["model"] == "gpt-4o"
    # The page says so too.
    client.login(username="alice", password="pw-alice-123")
    response = client.post(
        "/uploads/new/",
        {"archive": SimpleUploadedFile("runs.zip", data), "scaffold": "aide", "model": "o3"},
        follow=True,
    )
    assert "was not applied" in response.content.decode()


# 10. The launch form defaults to what the worker host can give, and says what it has.


def test_launch_form_defaults_fit_the_worker_host(client, django_user_model, settings):
    from django.contrib.auth.models import Permission

    settings.MLEBOARD_HOST_CPUS = 8.0
    settings.MLEBOARD_HOST_MEMORY = 32 * 1024**3
    settings.MLEBOARD_HOST_GPUS = []
    user = django_user_model.objects.create_user("launcher", password="pw-launch-123")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    client.login(username="launcher", password="pw-launch-123")
    html = client.get(reverse("launch-new")).content.decode()
    assert re.search(r'name="cpus" value="8(\.0)?"', html)
    assert 'name="memory" value="32g"' in html
    assert 'name="gpus" value="0"' in html
    assert "440g" not in html and 'value="36"' not in html
    host = re.search(r'<p id="host-resources">(.*?)</p>', html, re.S).group(1)
    assert "8 CPUs" in host and "32 GiB" in host and "no GPU" in host
    # A big host keeps the paper's protocol.
    settings.MLEBOARD_HOST_CPUS = 96.0
    settings.MLEBOARD_HOST_MEMORY = 1024 * 1024**3
    settings.MLEBOARD_HOST_GPUS = ["0", "1"]
    html = client.get(reverse("launch-new")).content.decode()
    assert 'name="memory" value="440g"' in html and 'name="gpus" value="1"' in html
    assert "2 GPUs" in html


# 11. A run refused for capacity never started: it produces no graded run (no 0% result).
# 12. Its log says it never started, and why.


def test_a_capacity_refusal_is_not_counted_and_its_log_says_why(site, runner_user, settings):
    from webapp.results.models import Run
    from webapp.runs.models import AgentRun
    from webapp.runs.services.execution import agent_run_execute

    settings.MLEBOARD_HOST_CPUS = 2
    api = api_for(runner_user)
    launch_id = launch(api, agent="baseline", competitions=["demo-wine"], seeds=1, cpus=36, gpus=0)
    run = AgentRun.objects.get(launch_id=launch_id)
    detail = reverse("api-agent-run-detail", args=[run.pk])
    queued = api.get(detail).json()
    assert queued["log_tail"] == "" and queued["log_note"].startswith("Not started yet")
    agent_run_execute(run.pk, token="t")
    run.refresh_from_db()
    assert run.status == AgentRun.Status.HARNESS_ERROR
    assert "Never started" in run.message and "Not counted" in run.message
    assert run.result_run_id is None
    assert not Run.objects.filter(experiment_id=run.launch.experiment_id).exists()
    assert not GradeReport.objects.filter(experiment_id=run.launch.experiment_id).exists()
    body = api.get(detail).json()
    assert body["log_tail"] == "" and "no output yet" not in body["log_note"]
    assert "never started" in body["log_note"]
    assert "36 CPUs requested, the host has 2" in body["log_note"]


@pytest.mark.parametrize("why", ["isolation refused", "agent unusable"])
def test_a_run_that_never_ran_is_not_graded(site, runner_user, settings, monkeypatch, why):
    """No run that ends without running (refused by the isolation the operator chose after
    the launch, an agent the site cannot configure; too big for every host above) is
    handed to grading: a "no submission" would count as a 0% result."""
    from webapp.results.models import Run
    from webapp.runs.models import AgentRun
    from webapp.runs.services import execution
    from webapp.runs.services.execution import agent_run_execute

    settings.MLEBOARD_HOST_CPUS = 4
    launch_id = launch(
        api_for(runner_user), agent="baseline", competitions=["demo-wine"], seeds=1, cpus=1, gpus=0
    )
    run = AgentRun.objects.get(launch_id=launch_id)
    if why == "isolation refused":
        # The launch asked for docker; the operator has since switched to local runs and
        # not allowed them.
        settings.MLEBOARD_RUN_BACKEND = "local"
        settings.MLEBOARD_ALLOW_UNISOLATED_RUNS = False
    else:

        def unusable(name):
            raise AgentConfigError(f"{name}: its image was removed")

        monkeypatch.setattr(execution, "find_site_agent", unusable)
    agent_run_execute(run.pk, token="t")
    run.refresh_from_db()
    assert run.status == AgentRun.Status.HARNESS_ERROR, run.message
    assert run.result_run_id is None
    assert not Run.objects.filter(experiment_id=run.launch.experiment_id).exists()
    assert not GradeReport.objects.filter(experiment_id=run.launch.experiment_id).exists()


# 13. The schema reads in a browser; Swagger and Redoc come from this site and link back.


def test_schema_is_readable_in_a_browser(client):
    import json

    page = client.get(reverse("api-schema"), HTTP_ACCEPT="text/html,*/*;q=0.8")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    html = page.content.decode()
    assert reverse("api-docs") in html and "?format=json" in html
    as_json = client.get(reverse("api-schema") + "?format=json", HTTP_ACCEPT="text/html")
    assert as_json.status_code == 200
    assert as_json["Content-Type"].startswith("application/json")
    assert "Content-Disposition" not in as_json
    body = as_json.content.decode()
    assert json.loads(body)["openapi"].startswith("3.") and '\n  "' in body  # indented
    # Tools asking without text/html keep getting YAML.
    tool = client.get(reverse("api-schema"))
    assert tool.content.decode().startswith("openapi:")


def test_swagger_and_redoc_are_local_and_link_back(client):
    for name in ("api-docs", "api-redoc"):
        html = client.get(reverse(name)).content.decode()
        assert 'id="site-bar"' in html and f'href="{reverse("home")}"' in html, name
        assert not re.search(r'(src|href)="https?://', html), name  # no CDN, no web fonts
    assert reverse("api-redoc-bundle") in client.get(reverse("api-redoc")).content.decode()
    # Redoc's bundle, served with the site's icon in place of its logo on Redocly's CDN.
    bundle = client.get(reverse("api-redoc-bundle"))
    assert bundle.status_code == 200 and bundle["Content-Type"].startswith("text/javascript")
    body = bundle.content.decode()
    assert "Redoc" in body and "cdn.redoc.ly" not in body and static("img/favicon.svg") in body
    # Browsers (the admin's pages name no icon) find /favicon.ico.
    assert client.get("/favicon.ico").url == static("img/favicon.svg")


# 14. 404 and 500 pages in the site's layout; the 500 page needs no database and no request.


def test_404_page_has_the_site_layout(client, settings):
    settings.DEBUG = False
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert 'class="brand"' in html and 'id="not-found"' in html and "/no/such/page/" in html
    assert "Resolver404" not in html


def test_500_page_needs_no_database_nor_request(django_assert_num_queries, settings):
    from django.template.loader import render_to_string
    from django.test import RequestFactory
    from django.views.defaults import server_error

    settings.DEBUG = False
    with django_assert_num_queries(0):
        html = render_to_string("500.html")  # no request, no context processors
        response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    assert 'class="brand"' in html and 'id="server-error"' in html
    assert 'id="server-error"' in response.content.decode()


# 15. Agent scores on a competition page: best first, in the metric's direction.


@pytest.mark.parametrize("lower_is_better", [False, True])
def test_agent_scores_are_sorted_by_score(client, imported, lower_is_better):
    report = GradeReport.objects.filter(is_current=True).first()
    competition = report.competition
    Competition.objects.filter(pk=competition.pk).update(lower_is_better=lower_is_better)
    reports = GradeReport.objects.filter(competition=competition, is_current=True)
    for i, r in enumerate(reports.order_by("pk")):
        r.score = None if i == 0 else [0.5, 0.9, 0.1, 0.7, 0.3][i % 5]
        r.save()
    html = client.get(reverse("competition-detail", args=[competition.slug])).content.decode()
    table = re.search(r'<table class="data" id="agent-scores">.*?</table>', html, re.S).group(0)
    rows = re.findall(r"<tr><td><a .*?</tr>", table, re.S)
    shown = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[2].strip() for row in rows]
    scores = [float(c) for c in shown if not c.startswith("<")]
    assert scores == sorted(scores, reverse=not lower_is_better)
    assert len(scores) == reports.count() - 1
    assert "no submission" in shown[-1] or "invalid" in shown[-1]  # no score: last


# 16. The upload form suggests the scaffold and model names already in use.


def test_upload_form_suggests_existing_names(client, imported, django_user_model):
    django_user_model.objects.create_user("alice", password="pw-alice-123")
    client.login(username="alice", password="pw-alice-123")
    html = client.get(reverse("upload-new")).content.decode()
    assert 'list="scaffold-choices"' in html and 'list="model-choices"' in html
    experiment = Experiment.objects.select_related("agent__scaffold", "agent__model").first()
    scaffolds = re.search(r'<datalist id="scaffold-choices">(.*?)</datalist>', html, re.S).group(1)
    models = re.search(r'<datalist id="model-choices">(.*?)</datalist>', html, re.S).group(1)
    assert f'value="{experiment.agent.scaffold.name}"' in scaffolds
    assert f'value="{experiment.agent.model.name}"' in models


# 17. The competitions page says how its total divides: MLE-bench's 75 + 7 dev + 4 demo.


def test_competitions_page_shows_the_split_of_the_total(client):
    catalogue_sync()
    html = client.get(reverse("competition-list")).content.decode()
    text = re.sub(
        r"<[^>]+>", "", re.search(r'<p id="catalogue-breakdown">(.*?)</p>', html, re.S).group(1)
    )
    total = Competition.objects.count()
    assert text.startswith(f"{total} competitions: MLE-bench's 75 (22 low, 38 medium, 15 high")
    assert "+ 7 dev" in text
    if Competition.objects.filter(splits__slug="demo").exists():
        assert "+ 4 demo" in text
        assert total == 75 + 7 + 4


# 18. Above the leaderboard: Any Medal % per split as dots with SEM bars, one row per entry.


def test_leaderboard_dots_figure_spec():
    entries = [
        {"id": 1, "name": "a", "splits": {"all": {"mean": 20.0, "standard_error": 2.0}}},
        {"id": 2, "name": "b", "splits": {"all": {"mean": 10.0, "standard_error": 1.0}}},
        {"id": 3, "name": "b", "splits": {"all": None, "low": {"mean": 5, "standard_error": 0}}},
    ]
    figure = figures.leaderboard_dots(entries, [("all", "All"), ("low", "Low (Lite)")])
    assert [t["name"] for t in figure["data"]] == ["All", "Low (Lite)"]
    all_trace = figure["data"][0]
    assert all_trace["y"] == ["a", "b #2", "b #3"]  # one row per entry, table order
    assert all_trace["x"] == [20.0, 10.0, None]
    assert all_trace["error_x"]["array"] == [2.0, 1.0, 0]
    # The first row at the top, no blank band beyond the rows.
    assert figure["layout"]["yaxis"]["range"] == [2.5, -0.5]


def test_leaderboard_dots_follow_the_filters(client, imported):
    """The dots are drawn from the table's rows (static/js/figures.js), which follow the
    filters: one row per entry shown, named by its agent link's title."""
    import json

    def drawn(html: str) -> set[str]:
        figure = json.loads(
            re.search(r'<script id="leaderboard-dots-data"[^>]*>(.*?)</script>', html, re.S)[1]
        )
        assert figure["table"]["id"] == "leaderboard"
        body = re.search(r"<tbody>.*?</tbody>", html, re.S)[0]
        return set(re.findall(r'<td class="agent"[^>]*><a href="[^"]*" title="([^"]*)"', body))

    assert drawn(client.get(reverse("home")).content.decode()) == {"aide-o1", "mlab-gpt4o"}
    aide = Experiment.objects.select_related("agent__scaffold").get(name="aide-o1")
    html = client.get(reverse("home"), {"scaffold": aide.agent.scaffold.name}).content.decode()
    assert drawn(html) <= {"aide-o1"} | (
        {"mlab-gpt4o"}
        if Experiment.objects.get(name="mlab-gpt4o").agent.scaffold_id == aide.agent.scaffold_id
        else set()
    )
