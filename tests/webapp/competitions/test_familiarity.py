"""Familiarity measured end to end against a named fake endpoint
(``tests/support/fake_base_model.py``, a scripted server, not a model): the value stored per
model, competition and version of the texts equals what the log-probabilities it served
make by hand; ``GET /api/competitions/<id>/`` lists it; a competition the endpoint fails on
is reported with the reason; nothing is measured twice; the work ends when its worker dies."""

import datetime as dt
import math

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from tests.support.fake_base_model import FakeBaseModel
from webapp.competitions.familiarity import familiarity_request
from webapp.competitions.models import Competition, Familiarity, FamiliarityText
from webapp.competitions.services import catalogue_sync

pytestmark = pytest.mark.django_db
KEY = "sk-base-model-test-0000"
DESCRIPTION = (
    "# Overview\n\nIn this competition you predict which passengers were transported to an "
    "alternate dimension during the spaceship's collision with a spacetime anomaly. " * 12
)
POST = "1st place solution: gradient boosting on cabin deck and side, and group sizes.\n" * 6


@pytest.fixture
def fake():
    with FakeBaseModel(context_tokens=128) as server:
        yield server


@pytest.fixture
def configured(settings, fake, monkeypatch):
    settings.MLEBOARD_FAMILIARITY_BASE_URL = fake.base_url
    settings.MLEBOARD_FAMILIARITY_MODEL = "fake-base-7b"
    settings.MLEBOARD_FAMILIARITY_API_KEY = KEY
    settings.MLEBOARD_FAMILIARITY_MAX_TOKENS = 128
    settings.MLEBOARD_FAMILIARITY_TIMEOUT_S = 5
    monkeypatch.setattr("benchmark.familiarity.time.sleep", lambda s: None)  # no waiting
    catalogue_sync(include_demo=True)
    Competition.objects.filter(slug="spaceship-titanic").update(description=DESCRIPTION)
    Competition.objects.filter(slug="leaf-classification").update(description=DESCRIPTION[:400])
    return fake


def by_hand(requests: list[dict], texts: list[str]) -> tuple[float, int, list[float]]:
    """The familiarity the served log-probabilities make: per text, the mean probability
    of its tokens that have one (its requests are those whose prompts make it up, in
    order); the competition's, the mean of its texts'."""
    values, total, i = [], 0, 0
    for text in texts:
        sent, probabilities = "", []
        while sent != text:
            request = requests[i]
            sent += request["prompt"]
            probabilities += [math.exp(v) for v in request["token_logprobs"] if v is not None]
            i += 1
        values.append(sum(probabilities) / len(probabilities))
        total += len(probabilities)
    assert i == len(requests)
    return sum(values) / len(values), total, values


def test_the_stored_familiarity_is_what_the_served_logprobs_make(configured, client, tmp_path):
    post = tmp_path / "discussion-1.txt"
    post.write_text(POST, encoding="utf-8")
    call_command("add_familiarity_text", "spaceship-titanic", str(post))
    call_command("compute_familiarity", "spaceship-titanic")
    row = Familiarity.objects.get(competition__slug="spaceship-titanic")
    assert row.status == Familiarity.Status.DONE and row.model == "fake-base-7b"
    value, tokens, per_text = by_hand(configured.requests, [DESCRIPTION, POST])
    assert len(configured.requests) > 2  # the description needed several chunks
    assert row.value == pytest.approx(value, rel=1e-12) and row.tokens == tokens
    assert [t["name"] for t in row.texts] == ["description.md", "discussion-1.txt"]
    assert [t["value"] for t in row.texts] == pytest.approx(per_text, rel=1e-12)
    assert all(r["body"]["authorization"] == f"Bearer {KEY}" for r in configured.requests)

    detail = client.get("/api/competitions/spaceship-titanic/").json()
    [listed] = detail["familiarity"]
    assert listed["model"] == "fake-base-7b" and listed["tokens"] == tokens
    assert listed["value"] == pytest.approx(value, rel=1e-12) and 0 < listed["value"] < 1
    assert listed["status"] == "done" and listed["current"] is True
    page = client.get("/competitions/spaceship-titanic/").content.decode()
    assert 'id="familiarity"' in page and "fake-base-7b" in page

    # Asked again: nothing is measured twice.
    served = len(configured.requests)
    call_command("compute_familiarity", "spaceship-titanic")
    assert len(configured.requests) == served and Familiarity.objects.count() == 1
    # A new text is a new version: measured anew; the earlier measurement stays.
    (tmp_path / "discussion-2.txt").write_text(
        "Leak: the ids are ordered by group.", encoding="utf-8"
    )
    call_command("add_familiarity_text", "spaceship-titanic", str(tmp_path / "discussion-2.txt"))
    call_command("compute_familiarity", "spaceship-titanic")
    assert Familiarity.objects.filter(competition__slug="spaceship-titanic").count() == 2
    [listed] = client.get("/api/competitions/spaceship-titanic/").json()["familiarity"]
    assert listed["current"] is True and len(listed["texts"]) == 3


def test_a_competition_the_endpoint_fails_on_is_reported_with_the_reason(
    configured, client, capsys
):
    configured.mode = "http_500"
    with pytest.raises(CommandError, match="1 competition"):
        call_command("compute_familiarity", "leaf-classification")
    out = capsys.readouterr().out
    assert "leaf-classification: failed, description.md: the endpoint answered HTTP 500" in out
    row = Familiarity.objects.get(competition__slug="leaf-classification")
    assert row.status == Familiarity.Status.FAILED and "HTTP 500" in row.error
    [listed] = client.get("/api/competitions/leaf-classification/").json()["familiarity"]
    assert listed["status"] == "failed" and listed["value"] is None
    assert "HTTP 500" in listed["error"] and KEY not in listed["error"]
    assert "HTTP 500" in client.get("/competitions/leaf-classification/").content.decode()
    # Asked again once the endpoint answers: measured.
    configured.mode = "ok"
    call_command("compute_familiarity", "leaf-classification")
    row.refresh_from_db()
    assert row.status == Familiarity.Status.DONE and row.error == ""


@pytest.mark.timeout(120)
def test_a_hanging_endpoint_fails_in_bounded_time(configured, settings):
    configured.mode = "hang"
    settings.MLEBOARD_FAMILIARITY_TIMEOUT_S = 1
    with pytest.raises(CommandError):
        call_command("compute_familiarity", "leaf-classification")
    row = Familiarity.objects.get()
    assert row.status == Familiarity.Status.FAILED and "within 1 s" in row.error


def test_all_competitions_and_the_refusals(configured, settings, capsys, tmp_path):
    call_command("compute_familiarity")
    out = capsys.readouterr().out
    # Those with a text are measured; the others say why they are not.
    assert out.count(" over ") == 2
    assert "demo-wine: skipped, nothing to measure: no description is imported" in out
    assert Familiarity.objects.filter(status="done").count() == 2
    with pytest.raises(CommandError, match="not competitions of this site: no-such"):
        call_command("compute_familiarity", "no-such")
    settings.MLEBOARD_FAMILIARITY_BASE_URL = ""
    with pytest.raises(CommandError, match="MLEBOARD_FAMILIARITY_BASE_URL"):
        call_command("compute_familiarity")
    bad = {
        "binary.txt": (b"PK\x03\x04\x00\x00binary", "NUL"),
        "latin1.txt": ("Données".encode("latin-1"), "not UTF-8"),
        "empty.txt": (b"  \n", "empty"),
    }
    for name, (data, message) in bad.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(CommandError, match=message):
            call_command("add_familiarity_text", "spaceship-titanic", str(tmp_path / name))
    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * (3 * 1024**2))
    with pytest.raises(CommandError, match="larger than 2 MiB"):
        call_command("add_familiarity_text", "spaceship-titanic", str(big))
    assert FamiliarityText.objects.count() == 0


def test_a_silent_measurement_is_taken_back_then_failed(configured, settings):
    from webapp.ops.sweeper import sweep

    [requested] = familiarity_request(["leaf-classification"], dispatch=False)
    row = requested.row
    long_ago = timezone.now() - dt.timedelta(seconds=settings.MLEBOARD_STALE_AFTER_S + 60)
    # A worker claimed it and died: its heartbeat went silent.
    Familiarity.objects.filter(pk=row.pk).update(
        status="running", claimed_by="dead", claimed_at=long_ago, heartbeat_at=long_ago, attempts=1
    )
    report = sweep()
    row.refresh_from_db()
    assert row.status == "queued" and report.taken_back.get("familiarity") == 1
    Familiarity.objects.filter(pk=row.pk).update(
        status="running",
        claimed_by="dead",
        claimed_at=long_ago,
        heartbeat_at=long_ago,
        attempts=settings.MLEBOARD_MAX_ATTEMPTS,
    )
    sweep()
    row.refresh_from_db()
    assert row.status == "failed" and "interrupted" in row.error


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_celery_worker_measures_what_is_queued(fake, monkeypatch, request, capsys):
    """``compute_familiarity --queue`` sends the measurements to the grading queue; a real
    worker process (with the endpoint in its environment) stores the same value."""
    from tests.support.polling import wait_until

    for name, value in {
        "MLEBOARD_FAMILIARITY_BASE_URL": fake.base_url,
        "MLEBOARD_FAMILIARITY_MODEL": "fake-base-7b",
        "MLEBOARD_FAMILIARITY_API_KEY": KEY,
        "MLEBOARD_FAMILIARITY_MAX_TOKENS": "128",
    }.items():
        monkeypatch.setenv(name, value)
    settings = request.getfixturevalue("settings")
    settings.MLEBOARD_FAMILIARITY_BASE_URL = fake.base_url
    settings.MLEBOARD_FAMILIARITY_MODEL = "fake-base-7b"
    settings.MLEBOARD_FAMILIARITY_MAX_TOKENS = 128
    catalogue_sync(include_demo=True)
    Competition.objects.filter(slug="spaceship-titanic").update(description=DESCRIPTION)
    worker = request.getfixturevalue("celery_worker_process")
    call_command("compute_familiarity", "spaceship-titanic", "--queue")
    assert "spaceship-titanic: queued" in capsys.readouterr().out
    row = wait_until(
        lambda: Familiarity.objects.filter(status__in=["done", "failed"]).first(), timeout=120
    )
    assert row.status == "done", (row.error, worker.log_path.read_text()[-3000:])
    value, tokens, _ = by_hand(fake.requests, [DESCRIPTION])
    assert row.value == pytest.approx(value, rel=1e-12) and row.tokens == tokens
