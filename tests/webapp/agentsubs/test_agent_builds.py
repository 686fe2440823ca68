"""The offline build of an approved agent on the real Docker engine: built with its one
hash-pinned wheel and no network, or refused with the reason and nothing left behind (no
image, no folder) when the build tries the network, the image is over the limit, or the
requirements do not resolve or do not match their hashes."""

import uuid
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.support import archive_builders as ab
from webapp.agentsubs.models import AgentSubmission
from webapp.agentsubs.services import (
    submission_build,
    submission_create,
    submission_folder,
    submission_review,
)

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db]

AGENT_DIR = Path(__file__).resolve().parents[2] / "agents" / "sklearn_submitted"
TABULATE = "tabulate==0.9.0 --hash=sha256:"
NETWORK_RUN = (
    b"RUN python3 -c \"import urllib.request; urllib.request.urlopen('http://pypi.org', "
    b'timeout=5)"\n'
)


@pytest.fixture
def engine():
    import docker

    from runner.images import build_base_image

    client = docker.from_env()
    client.ping()  # no engine: the test fails here, it is not skipped
    build_base_image(client)
    return client


@pytest.fixture
def people(django_user_model, operator):
    sam = django_user_model.objects.create_user("sam", password="pw-sam-12345")
    sam.user_permissions.add(Permission.objects.get(codename="submit_agents"))
    return sam, operator


def approved(people, **replace: bytes) -> AgentSubmission:
    files = {p.name: p.read_bytes() for p in AGENT_DIR.iterdir() if p.is_file()}
    # A name of its own: images are named by agent, and other tests (other processes of the
    # suite) build the same agent on the same engine at the same time.
    unique = f"sklearn-{uuid.uuid4().hex[:8]}"
    files["agent.yaml"] = files["agent.yaml"].replace(
        b"name: sklearn-submitted", b"name: " + unique.encode()
    )
    files.update(replace)
    sam, operator = people
    archive = SimpleUploadedFile("agent.tar.gz", ab.tar_bytes(files, "gz"))
    submission = submission_create(owner=sam, uploaded_file=archive)
    assert submission_review(submission, by=operator, approve=True, reason="looks fine")
    return submission


def built_images(engine, submission) -> list:
    return engine.images.list(name=f"mleboard/agent-{submission.site_name}")


def build(submission) -> AgentSubmission:
    submission_build(submission.pk, token="test")
    submission.refresh_from_db()
    return submission


def test_an_approved_agent_is_built_offline_with_its_pinned_wheel(engine, people, media):
    submission = build(approved(people))
    assert submission.status == "built", (submission.reason, submission.build_log[-2000:])
    assert submission.image_ref and built_images(engine, submission)
    assert "matches its pin" in submission.build_log and "no network" in submission.build_log
    assert (submission_folder(submission) / "agent.yaml").is_file()
    engine.images.remove(submission.image_ref, force=True)


@pytest.mark.parametrize(
    ("replace", "refusal", "words"),
    [
        (
            {"Dockerfile": (AGENT_DIR / "Dockerfile").read_bytes() + NETWORK_RUN},
            "network",
            "tried the network",
        ),
        (
            {"requirements.txt": b"tabulate==0.0.1 --hash=sha256:" + b"0" * 64 + b"\n"},
            "requirements",
            "do not resolve",
        ),
        (
            {"requirements.txt": TABULATE.encode() + b"1" * 64 + b"\n"},
            "requirements",
            "not one the requirements pin",
        ),
    ],
)
def test_refused_builds_leave_nothing_behind(engine, people, media, replace, refusal, words):
    submission = build(approved(people, **replace))
    assert submission.status == "refused" and submission.refusal == refusal, submission.reason
    assert words in submission.reason and submission.build_log
    assert built_images(engine, submission) == []
    assert not submission_folder(submission).parent.exists()


def test_an_image_over_the_limit_is_refused_and_removed(engine, people, media, settings):
    settings.MLEBOARD_AGENT_IMAGE_MAX_BYTES = 1024**2
    submission = build(approved(people))
    assert submission.status == "refused" and submission.refusal == "image_size"
    assert "MLEBOARD_AGENT_IMAGE_MAX_BYTES" in submission.reason
    assert built_images(engine, submission) == []
    assert not submission_folder(submission).parent.exists()
