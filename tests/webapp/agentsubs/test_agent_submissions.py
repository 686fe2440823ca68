"""Submitted agents on the site: who may send and review them, what bad input gets (a 400
naming the problem, nothing kept), the refusals of the offline build (nothing left
behind), and the deadline of every state."""

import datetime as dt
import io
import json
import tarfile
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from tests.support import archive_builders as ab
from webapp.agentsubs.models import AgentSubmission, Reproduction

AGENT_DIR = Path(__file__).resolve().parents[2] / "agents" / "sklearn_submitted"

pytestmark = pytest.mark.django_db


def agent_files(**replace: bytes) -> dict[str, bytes]:
    files = {p.name: p.read_bytes() for p in AGENT_DIR.iterdir() if p.is_file()}
    files.update(replace)
    return {k: v for k, v in files.items() if v is not None}


def agent_tar(prefix: str = "", **replace: bytes) -> bytes:
    return ab.tar_bytes({prefix + k: v for k, v in agent_files(**replace).items()}, "gz")


@pytest.fixture
def submitter(django_user_model):
    user = django_user_model.objects.create_user("sam", password="pw-sam-12345")
    user.user_permissions.add(Permission.objects.get(codename="submit_agents"))
    return user


@pytest.fixture
def api(submitter, media):
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=submitter).key}")


def send(api, data: bytes, name: str = "agent.tar.gz", **fields):
    return api.post(
        "/api/agents/", {"archive": SimpleUploadedFile(name, data), **fields}, format="multipart"
    )


def test_a_submission_is_versioned_with_the_sha256_of_its_files(api, media):
    first = send(api, agent_tar())
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["name"] == "sklearn-submitted" and body["version"] == 1
    assert body["status"] == "submitted" and len(body["sha256"]) == 64
    assert {f["name"] for f in body["files"]} >= {"agent.yaml", "Dockerfile", "main.py"}
    # The same files as a zip in a top folder: the same sha256, the next version.
    second = send(api, ab.zip_bytes({f"mine/{k}": v for k, v in agent_files().items()}), "a.zip")
    assert second.status_code == 201, second.content
    assert second.json()["version"] == 2 and second.json()["sha256"] == body["sha256"]
    page = Client()
    page.force_login(AgentSubmission.objects.get(pk=body["id"]).owner)
    html = page.get(f"/agents/{body['id']}/").content.decode()
    assert body["sha256"] in html and "main.py" in html and "wheels: requirements.txt" in html


def test_submitting_needs_the_permission(django_user_model, media):
    user = django_user_model.objects.create_user("nat", password="pw-nat-12345")
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert send(client, agent_tar()).status_code == 403
    assert Client().post("/api/agents/").status_code in (401, 403)
    assert AgentSubmission.objects.count() == 0


@pytest.mark.parametrize(
    ("archive", "name", "field", "words"),
    [
        (ab.zip_with_member("../evil.py", b"x"), "a.zip", "archive", "evil"),
        (ab.tar_symlink("main.py", "/etc/passwd"), "a.tar", "archive", "link"),
        (b"\x00" * 64, "agent.tar.gz", "archive", ""),
        (
            agent_tar(Dockerfile=b"FROM python:3.11\nCOPY . /home/agent\n"),
            "a.tgz",
            "dockerfile",
            "not the base image",
        ),
        (
            agent_tar(**{"requirements.txt": b"tabulate==0.9.0\n"}),
            "a.tgz",
            "requirements",
            "hash-pinned",
        ),
        (agent_tar(**{"agent.yaml": b"name: Bad Name\nstart: [x]\n"}), "a.tgz", "archive", "name"),
        (
            agent_tar(
                **{
                    "agent.yaml": b"name: netty\nstart: [x]\negress: true\nwheels: "
                    b"requirements.txt\n"
                }
            ),
            "a.tgz",
            "archive",
            "no network",
        ),
        (ab.tar_bytes({"just/a/file.txt": b"x"}), "a.tar", "archive", "agent.yaml"),
    ],
)
def test_bad_archives_are_a_400_naming_the_problem(api, media, archive, name, field, words):
    response = send(api, archive, name)
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["field"] == field and words.lower() in body["error"].lower(), body
    assert AgentSubmission.objects.count() == 0
    leftovers = [p for p in Path(media).rglob("*") if p.is_file()] if Path(media).exists() else []
    assert leftovers == [], leftovers


def test_a_zip_bomb_and_a_huge_archive_are_refused(api, media, settings, tmp_path):
    settings.MLEBOARD_AGENT_ARCHIVE_MAX_BYTES = 1024**2
    bomb = ab.write_zip_bomb(tmp_path / "bomb.zip", 50 * 1024**2).read_bytes()
    response = send(api, bomb, "bomb.zip")
    assert response.status_code == 400 and response.json()["field"] == "archive"
    huge = send(api, b"x" * (2 * 1024**2), "huge.tar")
    assert huge.status_code == 400 and "larger than" in huge.json()["error"]
    assert AgentSubmission.objects.count() == 0


def test_odd_names_nul_bytes_and_nested_json(api, media):
    # Unicode file names in the archive are kept as they are.
    odd = send(api, agent_tar(**{"notes/ﬁle ☃ é.txt": b"hi"}), "ägent ☃.tar.gz")
    assert odd.status_code == 201, odd.content
    assert any("☃" in f["name"] for f in odd.json()["files"])
    # A NUL byte in a field, an experiment id that is no number, nested JSON.
    nul = send(api, agent_tar(), experiment="1\x00")
    assert (
        nul.status_code == 400
        and "experiment" in nul.json()["error"].lower()
        or (nul.status_code == 400)
    )
    word = send(api, agent_tar(), experiment="seven")
    assert word.status_code == 400 and word.json()["field"] == "experiment"
    unseen = send(api, agent_tar(), experiment="99999")
    assert unseen.status_code == 400 and unseen.json()["field"] == "experiment"
    pk = odd.json()["id"]
    nested = api.post(
        f"/api/agents/{pk}/review/",
        json.dumps({"decision": {"a": [[[[{"b": 1}]]]]}}),
        content_type="application/json",
    )
    assert nested.status_code in (400, 403)


def test_review_needs_the_permission_and_a_refusal_its_reason(api, media, operator):
    pk = send(api, agent_tar()).json()["id"]
    refused = api.post(
        f"/api/agents/{pk}/review/", {"decision": "approve"}, content_type="application/json"
    )
    assert refused.status_code == 403
    ops = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=operator).key}")
    no_reason = ops.post(
        f"/api/agents/{pk}/review/", {"decision": "refuse"}, content_type="application/json"
    )
    assert no_reason.status_code == 400 and no_reason.json()["field"] == "reason"
    bad = ops.post(
        f"/api/agents/{pk}/review/", {"decision": "maybe"}, content_type="application/json"
    )
    assert bad.status_code == 400 and bad.json()["field"] == "decision"
    done = ops.post(
        f"/api/agents/{pk}/review/",
        {"decision": "refuse", "reason": "it reads the answers"},
        content_type="application/json",
    )
    assert done.status_code == 200 and done.json()["status"] == "refused"
    # The submitter sees the reason, on the API and the page.
    assert api.get(f"/api/agents/{pk}/").json()["reason"] == "it reads the answers"
    again = ops.post(
        f"/api/agents/{pk}/review/", {"decision": "approve"}, content_type="application/json"
    )
    assert again.status_code == 409


def test_the_form_refuses_bad_input_with_a_400(submitter, media):
    client = Client()
    client.force_login(submitter)
    assert client.get("/agents/new/").status_code == 200
    response = client.post(
        "/agents/new/",
        {"archive": SimpleUploadedFile("a.zip", ab.zip_with_member("../x", b"x"))},
    )
    assert response.status_code == 400 and "archive" in response.content.decode()
    empty = client.post("/agents/new/", {})
    assert empty.status_code == 400
    ok = client.post("/agents/new/", {"archive": SimpleUploadedFile("a.tgz", agent_tar())})
    assert ok.status_code == 302


def _old(**fields):
    return timezone.now() - dt.timedelta(**fields)


def test_every_state_has_a_deadline(api, media, settings, operator):
    from webapp.agentsubs.reproductions import reproductions_sweep
    from webapp.agentsubs.services import agents_sweep

    ids = [send(api, agent_tar()).json()["id"] for _ in range(3)]
    S = AgentSubmission.Status
    AgentSubmission.objects.filter(pk=ids[0]).update(status_since=_old(days=31))
    AgentSubmission.objects.filter(pk=ids[1]).update(status=S.APPROVED, status_since=_old(days=1))
    AgentSubmission.objects.filter(pk=ids[2]).update(status=S.BUILDING, status_since=_old(days=1))
    assert agents_sweep(100) == 3
    reasons = dict(AgentSubmission.objects.values_list("pk", "reason"))
    assert all(AgentSubmission.objects.get(pk=i).status == S.FAILED for i in ids)
    assert "reviewed" in reasons[ids[0]] and "built" in reasons[ids[1]]
    assert "did not finish" in reasons[ids[2]]
    # A reproduction past its deadline fails, saying so.
    from webapp.results.models import Agent, Experiment, LanguageModel, Scaffold
    from webapp.runs.models import Launch

    agent = Agent.objects.create(
        scaffold=Scaffold.objects.create(name="s"), model=LanguageModel.objects.create(name="m")
    )
    target = Experiment.objects.create(agent=agent, name="t", owner=operator)
    mine = Experiment.objects.create(agent=agent, name="r", owner=operator)
    launch = Launch.objects.create(owner=operator, agent_name="x", experiment=mine)
    reproduction = Reproduction.objects.create(
        submission_id=ids[0],
        owner=operator,
        launch=launch,
        target=target,
        split="demo",
        seeds=1,
        deadline_at=_old(hours=1),
    )
    assert reproductions_sweep(100) == 1
    reproduction.refresh_from_db()
    assert reproduction.status == "failed" and "deadline" in reproduction.error


def test_tar_members_are_checked_not_trusted(api, media):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in agent_files().items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("/abs/path.py")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    response = send(api, buffer.getvalue(), "abs.tgz")
    assert response.status_code == 400 and response.json()["field"] == "archive"
