"""Integrity checks on the site: reference corpora (read, refused, versioned), each graded
run checked (similarity to references and to other owners' runs, the rule detectors, the
LLM judge when configured), reviewed by a person, and a disqualified run counted as no
medal in recomputed figures, the leaderboard's integrity column and filters."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.support import integrity_cases as cases
from tests.support.integrity_cases import COMPETITION, add_references, graded_upload
from webapp.integrity import services
from webapp.integrity.models import ReferenceCorpus, RunCheck
from webapp.integrity.references import (
    ReferencesRefused,
    read_references_folder,
    read_references_zip,
)
from webapp.results.grading.aggregates import experiment_aggregate_refresh
from webapp.results.models import Experiment, ExperimentAggregate, GradeReport, Run
from webapp.results.pages.leaderboard import LeaderboardFilters, leaderboard_entries

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("catalogue")]
OTHER = "playground-series-s3e18"


# ---------------------------------------------------------------- reference corpora


def test_a_references_zip_is_read_with_sources_and_notebook_code():
    entries = {e.path: e for e in read_references_zip(io.BytesIO(cases.references_zip()), "n")}
    assert set(entries) == {"top-1/solution.py", "top-2/notebook.ipynb"}
    assert entries["top-1/solution.py"].source.endswith("/top-1")
    assert entries["top-2/notebook.ipynb"].source == "n"  # not in sources.csv: the note
    assert entries["top-2/notebook.ipynb"].language == "python"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"../evil.py": "x"}, "outside the corpus"),
        ({"/abs.py": "x"}, "outside the corpus"),
        ({"readme.md": "no code"}, "no .py, .ipynb or .R"),
        ({"a.ipynb": "not json"}, "not a notebook"),
        ({"a.py": "x", "sources.csv": "name,url\na.py,x\n"}, "columns path and source"),
    ],
)
def test_a_bad_references_zip_is_refused_with_a_reason(files, message):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    with pytest.raises(ReferencesRefused, match=message):
        read_references_zip(io.BytesIO(buffer.getvalue()))


def test_not_a_zip_and_a_lying_size_are_refused():
    with pytest.raises(ReferencesRefused, match="not a readable zip"):
        read_references_zip(io.BytesIO(b"PK\x03\x04 garbage"))
    big = io.BytesIO()
    with zipfile.ZipFile(big, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("huge.py", "x = 1\n" * 600_000)  # 3.6 MB, compresses to little
    with pytest.raises(ReferencesRefused, match="larger than 2 MB"):
        read_references_zip(io.BytesIO(big.getvalue()))


def test_a_references_folder_skips_symlinks(tmp_path):
    (tmp_path / "a.py").write_text(cases.CLEAN)
    (tmp_path / "link.py").symlink_to("/etc/hostname")
    assert [e.path for e in read_references_folder(tmp_path)] == ["a.py"]


def test_each_import_is_a_new_current_version():
    first = add_references()
    second = add_references()
    assert (first.version, second.version) == (1, 2)
    current = ReferenceCorpus.objects.filter(competition__slug=COMPETITION, is_current=True)
    assert list(current) == [second]
    assert first.files.count() == 2


# ---------------------------------------------------------------- checks


def test_seeded_runs_are_flagged_and_clean_ones_are_not(alice):
    add_references()
    runs = graded_upload(
        alice,
        {
            COMPETITION: cases.COPIED,
            "tabular-playground-series-may-2022": cases.LITERAL,
            "tabular-playground-series-dec-2021": cases.LLM_CALL,
            OTHER: cases.CLEAN,
        },
    )
    checks = {r.competition.slug: services.run_check(r.pk) for r in runs}

    copied = checks[COMPETITION]
    assert copied.status == RunCheck.Status.FLAGGED
    assert copied.similarity >= 0.6 and copied.reference.path == "top-1/solution.py"
    assert copied.similarity_file == "code/solution.py"
    assert copied.fragments and all(f["a_lines"][0] <= f["a_lines"][1] for f in copied.fragments)
    assert copied.corpus.version == 1

    literal = checks["tabular-playground-series-may-2022"]
    assert literal.status == RunCheck.Status.FLAGGED
    assert {f["check"] for f in literal.findings} == {"hand_written_submission"}
    assert literal.findings[0]["file"] == "code/solution.py" and literal.findings[0]["line"]

    llm = checks["tabular-playground-series-dec-2021"]
    assert llm.status == RunCheck.Status.FLAGGED
    assert "external_llm" in {f["check"] for f in llm.findings}

    clean = checks[OTHER]
    assert clean.status == RunCheck.Status.CLEAN and clean.findings == [] and not clean.reasons
    assert clean.similarity is None  # no references for that competition
    assert clean.llm_review == {"configured": False}


def test_a_run_similar_to_another_owners_run_is_flagged(alice, bob):
    (theirs,) = graded_upload(alice, {COMPETITION: cases.CLEAN})
    (ours,) = graded_upload(bob, {COMPETITION: cases.CLEAN.replace("model", "clf")})
    check = services.run_check(ours.pk)
    assert check.status == RunCheck.Status.FLAGGED
    assert check.peer_run_id == theirs.pk and check.peer_similarity >= 0.6
    assert check.reasons == [
        {"kind": "peer", "similarity": check.peer_similarity, "threshold": 0.6, "run": theirs.pk}
    ]
    # Two owners only: the shared-code share cannot apply (it would set aside everything
    # two runs share), and the check says so.
    assert check.peer_filter["applied"] is False and check.peer_filter["owners"] == 2
    # The same owner's runs are not compared with each other.
    (mine,) = graded_upload(bob, {OTHER: cases.CLEAN})
    assert services.run_check(mine.pk).peer_run_id is None


def test_a_run_without_code_or_logs_stays_not_checked(alice, settings):
    (run,) = graded_upload(alice, {COMPETITION: cases.CLEAN})
    Run.objects.filter(pk=run.pk).update(submission_path="", run_group="elsewhere")
    check = services.run_check(run.pk)
    assert check.status == RunCheck.Status.NOT_CHECKED
    assert "nothing to check" in check.note


def test_a_decision_is_kept_when_the_run_is_checked_again(alice, reviewer):
    add_references()
    (run,) = graded_upload(alice, {COMPETITION: cases.COPIED})
    check = services.run_check(run.pk)
    services.run_check_decide(check.pk, decision="reviewed_ok", reason="own code", user=reviewer)
    again = services.run_check(run.pk)
    assert again.status == RunCheck.Status.REVIEWED_OK and again.decision_reason == "own code"
    assert again.decided_by == reviewer


def test_a_decision_needs_a_reason_and_a_known_value(alice, reviewer):
    (run,) = graded_upload(alice, {COMPETITION: cases.LITERAL})
    check = services.run_check(run.pk)
    with pytest.raises(services.DecisionRefused, match="say why"):
        services.run_check_decide(check.pk, decision="disqualified", reason=" ", user=reviewer)
    with pytest.raises(services.DecisionRefused):
        services.run_check_decide(check.pk, decision="banned", reason="x", user=reviewer)


def test_disqualifying_a_run_takes_its_medal_out_of_the_figures(alice, reviewer):
    runs = graded_upload(alice, {COMPETITION: cases.LITERAL, OTHER: cases.CLEAN})
    experiment = runs[0].experiment
    Experiment.objects.filter(pk=experiment.pk).update(is_published=True)
    for run in runs:
        services.run_check(run.pk)

    def any_medal():
        figures = experiment_aggregate_refresh(experiment.pk).figures["splits"]
        return next(iter(figures.values()))["metrics"]["any_medal_percentage"]["mean"]

    assert any_medal() == 100.0
    entry = leaderboard_entries(user=None, filters=LeaderboardFilters())[0]
    assert entry["integrity"] == {"checked": 2, "flagged": 1, "disqualified": 0}

    check = RunCheck.objects.get(run=runs[0])
    services.run_check_decide(
        check.pk, decision="disqualified", reason="typed the answers", user=reviewer
    )
    assert Experiment.objects.get(pk=experiment.pk).figures_due_since is not None
    assert any_medal() == 50.0
    entry = leaderboard_entries(user=None, filters=LeaderboardFilters())[0]
    assert entry["integrity"] == {"checked": 2, "flagged": 0, "disqualified": 1}
    # The report itself is kept as graded; only the figures count it as no medal.
    assert GradeReport.objects.get(run=runs[0]).any_medal is True

    services.run_check_decide(check.pk, decision="reopen", reason="", user=reviewer)
    assert any_medal() == 100.0


@pytest.mark.django_db(transaction=True)
def test_a_check_that_commits_during_a_refresh_is_never_left_out_of_the_figures(alice):
    """A check ends while its experiment's figures are already due and a refresh starts.
    Either the refresh waits for the check and counts it, or the figures stay due: they
    are never marked current without it. (PostgreSQL: the experiment's row lock orders
    them; SQLite: each transaction takes the write lock when it begins.)"""
    from django.db import connection, transaction

    from webapp.results.grading.aggregates import figures_due

    (run,) = graded_upload(alice, {COMPETITION: cases.CLEAN})
    experiment = run.experiment
    RunCheck.objects.create(run=run)
    Experiment.objects.filter(pk=experiment.pk).update(figures_due_since=timezone.now())
    marked, release, problems = threading.Event(), threading.Event(), []

    def check_ends():
        try:
            with transaction.atomic():
                RunCheck.objects.filter(run=run).update(status="clean", checked_at=timezone.now())
                figures_due([experiment.pk])
                marked.set()
                release.wait(30)
        except Exception as exc:  # reported below
            problems.append(repr(exc))
            marked.set()
        finally:
            connection.close()

    def refresh():
        try:
            experiment_aggregate_refresh(experiment.pk)
        except Exception as exc:  # reported below
            problems.append(repr(exc))
        finally:
            connection.close()

    checker = threading.Thread(target=check_ends)
    checker.start()
    assert marked.wait(30)
    refresher = threading.Thread(target=refresh)
    refresher.start()
    refresher.join(1.0)  # the refresh waits for the check's transaction to end
    release.set()
    checker.join()
    refresher.join()
    assert problems == []
    if Experiment.objects.get(pk=experiment.pk).figures_due_since is not None:
        experiment_aggregate_refresh(experiment.pk)  # the refresh that was sent
    assert ExperimentAggregate.objects.get(experiment=experiment).runs_checked == 1


def test_the_leaderboard_filters_on_integrity_and_descriptions(alice, bob):
    flagged = graded_upload(alice, {COMPETITION: cases.LITERAL})[0].experiment
    clean = graded_upload(bob, {OTHER: cases.CLEAN}, metadata={"obfuscated_descriptions": True})
    clean = clean[0].experiment
    Experiment.objects.update(is_published=True)
    for run in Run.objects.all():
        services.run_check(run.pk)
    for experiment in (flagged, clean):
        experiment_aggregate_refresh(experiment.pk)

    def ids(**query):
        filters = LeaderboardFilters.from_query(query)
        return {e["id"] for e in leaderboard_entries(user=None, filters=filters)}

    assert ids(integrity="flagged") == {flagged.pk}
    assert ids(integrity="clean") == {clean.pk}
    assert ids(integrity="checked") == {flagged.pk, clean.pk}
    assert ids(integrity="disqualified") == set()
    assert ids(descriptions="obfuscated") == {clean.pk}
    assert ids(descriptions="original") == {flagged.pk}
    assert ids(integrity="bogus") == {flagged.pk, clean.pk}  # unknown values are ignored
    assert Experiment.objects.get(pk=clean.pk).obfuscated_descriptions is True


def test_check_due_marks_and_the_sweeper_gives_up_after_the_budget(alice, settings):
    (run,) = graded_upload(alice, {COMPETITION: cases.CLEAN})
    settings.MLEBOARD_STALE_AFTER_S = 0
    settings.MLEBOARD_MAX_ATTEMPTS = 1
    assert services.check_due([run.pk]) == 1
    assert services.check_due([run.pk]) == 0  # already due: not sent twice
    RunCheck.objects.filter(run=run).update(attempts=1)
    services.sweep_checks()
    check = RunCheck.objects.get(run=run)
    assert check.due_since is None and "never finished" in check.note


def test_a_check_asked_for_while_it_runs_goes_round_again(alice, monkeypatch):
    """A new corpus arrives while a run's check is reading the old one: the check ends
    still due (its task sent again), and the next pass ends it."""
    (run,) = graded_upload(alice, {COMPETITION: cases.CLEAN})
    assert services.check_due([run.pk]) == 1
    scan = services.scan_run

    def scan_then_asked_again(folder):
        services.check_due([run.pk])  # as a corpus import does, mid-check
        return scan(folder)

    monkeypatch.setattr(services, "scan_run", scan_then_asked_again)
    services.run_check(run.pk)
    assert RunCheck.objects.get(run=run).due_since is not None
    monkeypatch.setattr(services, "scan_run", scan)
    services.run_check(run.pk)
    check = RunCheck.objects.get(run=run)
    assert check.due_since is None and check.status == "clean"


# ---------------------------------------------------------------- the LLM judge (a fake)


class FakeJudge(BaseHTTPRequestHandler):
    """A fake OpenAI-compatible endpoint (named as one): answers "yes" to the LLM
    question when the material mentions openai, "no" otherwise."""

    seen: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeJudge.seen.append({"auth": self.headers.get("Authorization"), "body": body})
        material = body["messages"][-1]["content"]
        answers = {
            key: {"answer": "no", "evidence": ""}
            for key in ("hand_written_submission", "external_llm", "unauthorized_resource")
        }
        if "openai" in material:
            answers["external_llm"] = {"answer": "yes", "evidence": "code/solution.py:2"}
        reply = {"choices": [{"message": {"role": "assistant", "content": json.dumps(answers)}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_judge(settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeJudge)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.MLEBOARD_INTEGRITY_LLM_BASE_URL = f"http://127.0.0.1:{server.server_port}/v1"
    settings.MLEBOARD_INTEGRITY_LLM_API_KEY = "sk-fake-judge"
    settings.MLEBOARD_INTEGRITY_LLM_MODEL = "fake-judge"
    FakeJudge.seen = []
    yield server
    server.shutdown()


def test_the_llm_judge_answers_when_configured(alice, fake_judge):
    runs = graded_upload(alice, {COMPETITION: cases.LLM_CALL, OTHER: cases.CLEAN})
    llm, clean = (services.run_check(r.pk) for r in runs)
    assert llm.llm_review["answers"]["external_llm"]["answer"] == "yes"
    assert {"kind": "llm", "question": "external_llm"} in llm.reasons
    assert clean.llm_review["answers"]["external_llm"]["answer"] == "no"
    assert clean.status == RunCheck.Status.CLEAN
    assert FakeJudge.seen[0]["auth"] == "Bearer sk-fake-judge"
    assert "sk-fake-judge" not in json.dumps(llm.llm_review)


def test_an_unreachable_judge_is_said_not_fatal(alice, settings):
    settings.MLEBOARD_INTEGRITY_LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.MLEBOARD_INTEGRITY_LLM_MODEL = "nobody"
    (run,) = graded_upload(alice, {COMPETITION: cases.CLEAN})
    check = services.run_check(run.pk)
    assert check.status == RunCheck.Status.CLEAN
    assert "could not be reached" in check.llm_review["error"]


# ---------------------------------------------------------------- pages


def test_the_check_page_shows_fragments_side_by_side_to_reviewers(client, alice, reviewer):
    add_references()
    (run,) = graded_upload(alice, {COMPETITION: cases.COPIED})
    services.run_check(run.pk)
    client.force_login(alice)
    page = client.get(reverse("integrity-run", args=[run.pk])).content.decode()
    # The owner reads the figure; reference code is reviewers' material.
    assert 'id="similarity-value"' in page and 'id="references-private"' in page
    assert "top-1/solution.py" not in page and "kaggle.com/code" not in page
    assert 'class="ln frag' not in page
    assert "% similar to the reference code (threshold 60%)" in page
    assert "LLM review not configured." in page
    assert 'id="decide"' not in page  # only reviewers decide
    assert (
        client.post(reverse("integrity-run", args=[run.pk]), {"decision": "x"}).status_code == 403
    )
    run_page = client.get(reverse("run-page-result", args=[run.pk])).content.decode()
    assert 'id="integrity-status">flagged' in run_page

    client.force_login(reviewer)
    page = client.get(reverse("integrity-run", args=[run.pk])).content.decode()
    assert "top-1/solution.py" in page and 'class="ln frag c0"' in page
    assert "kaggle.com/code/someone/top-1" in page
    queue = client.get(reverse("integrity-queue")).content.decode()
    assert reverse("integrity-run", args=[run.pk]) in queue
    response = client.post(
        reverse("integrity-run", args=[run.pk]),
        {"decision": "disqualified", "reason": "copied the top notebook"},
    )
    assert response.status_code == 302
    check = RunCheck.objects.get(run=run)
    assert check.status == RunCheck.Status.DISQUALIFIED and check.decided_by == reviewer


def test_the_check_page_is_private_to_who_may_see_the_run(client, alice, bob):
    (run,) = graded_upload(alice, {COMPETITION: cases.CLEAN})
    client.force_login(bob)
    assert client.get(reverse("integrity-run", args=[run.pk])).status_code == 404
    assert client.get(reverse("integrity-queue")).status_code == 403  # reviewers only


# ---------------------------------------------------------------- commands


def test_import_mlebench_takes_a_competitions_references_folder(mlebench_checkout, capsys):
    from django.core.management import call_command

    folder = mlebench_checkout / "mlebench" / "competitions" / COMPETITION / "references"
    folder.mkdir()
    try:
        (folder / "top.py").write_text(cases.CLEAN)
        (folder / "sources.csv").write_text("path,source\ntop.py,a public notebook\n")
        call_command("import_mlebench", str(mlebench_checkout), competition=[COMPETITION])
        call_command("import_mlebench", str(mlebench_checkout), competition=[COMPETITION])
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    out = capsys.readouterr().out
    assert "references v1: 1 reference files imported" in out
    assert "references v1: 1 reference files unchanged" in out
    corpus = ReferenceCorpus.objects.get(competition__slug=COMPETITION)
    assert corpus.files.get().source == "a public notebook"


def test_load_references_from_a_zip_and_a_bad_one(tmp_path, capsys):
    from django.core.management import CommandError, call_command

    good = tmp_path / "refs.zip"
    good.write_bytes(cases.references_zip())
    call_command("load_references", COMPETITION, str(good), note="top notebooks")
    assert "references v1: 2 files stored" in capsys.readouterr().out
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(CommandError, match="not a readable zip"):
        call_command("load_references", COMPETITION, str(bad))
    with pytest.raises(CommandError, match="no competition"):
        call_command("load_references", "no-such-competition", str(good))


# ---------------------------------------------------------------- obfuscated descriptions


def test_an_experiment_and_its_obfuscated_twin_side_by_side(client, alice):
    original = graded_upload(alice, {OTHER: cases.CLEAN})[0].experiment
    twin = graded_upload(
        alice,
        {OTHER: cases.CLEAN_REGRESSION},
        medal=False,
        metadata={"obfuscated_descriptions": True},
    )[0].experiment
    for experiment in (original, twin):
        experiment_aggregate_refresh(experiment.pk)
    client.force_login(alice)
    page = client.get(reverse("experiment-detail", args=[twin.pk])).content.decode()
    assert 'id="obfuscated-badge"' in page
    assert f"?experiments={original.pk},{twin.pk}" in page  # original first
    compare = client.get(f"/compare/?experiments={original.pk},{twin.pk}").content.decode()
    assert 'id="description-pairs"' in compare
    row = compare.split('id="description-pairs"')[1].split("</tbody>")[0]
    assert "100.0" in row and "0.0" in row and "-100.0" in row
