"""The validation service: MLE-bench's /validate contract over a unix socket, valid or the
reason and never a score, limited in size and rate; and the client agents call."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from runner.harness import client_script
from runner.validation_client import multipart_body, request, validate_file
from runner.validation_service import RateLimit, ValidationService

COMPETITION = "demo-breast-cancer"


@dataclass
class Answer:
    valid: bool
    message: str


def fake_validator(path: Path, competition_id: str, data_dir: Path) -> Answer:
    text = path.read_text()
    if text.startswith("id,target"):
        return Answer(True, "Submission is valid.")
    return Answer(False, "Submission invalid! The first column must be `id`.")


@pytest.fixture
def service(tmp_path):
    with ValidationService(
        "c", tmp_path / "data", tmp_path / "sock", validator=fake_validator
    ) as running:
        yield running


def test_valid_and_invalid_answers_follow_the_contract(service, tmp_path):
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    good.write_text("id,target\nt0,0.5\n")
    bad.write_text("nope,target\nt0,0.5\n")
    assert validate_file(str(good), str(service.socket_path)) == (
        200,
        {"result": "Submission is valid.", "valid": True},
    )
    status, answer = validate_file(str(bad), str(service.socket_path))
    assert status == 200 and answer["valid"] is False
    assert "first column" in answer["result"]
    assert request(str(service.socket_path), "GET", "/health") == (200, {"status": "running"})
    assert service.counts["answered"] == 2


def test_requests_past_the_rate_are_refused(tmp_path):
    with ValidationService(
        "c",
        tmp_path / "data",
        tmp_path / "sock",
        validator=fake_validator,
        rate_limit=RateLimit(burst=2, per_minute=1),
    ) as service:
        path = tmp_path / "s.csv"
        path.write_text("id,target\n")
        statuses = [validate_file(str(path), str(service.socket_path))[0] for _ in range(4)]
        # A large body refused for the rate is still answered (not a broken pipe).
        big = tmp_path / "big.csv"
        big.write_bytes(b"id,target\n" + b"x" * 5_000_000)
        statuses.append(validate_file(str(big), str(service.socket_path))[0])
    assert statuses == [200, 200, 429, 429, 429]
    assert service.counts["rate_limited"] == 3


def test_oversized_submissions_are_refused_before_reading(tmp_path):
    with ValidationService(
        "c", tmp_path / "data", tmp_path / "sock", validator=fake_validator, max_bytes=1000
    ) as service:
        # Far more than a socket buffer: the service answers without reading it all.
        body, content_type = multipart_body("file", "s.csv", b"id,target\n" + b"x" * 5_000_000)
        status, answer = request(
            str(service.socket_path), "POST", "/validate", body, {"Content-Type": content_type}
        )
    assert status == 413 and "limit" in answer["error"]
    assert service.counts["too_large"] == 1


def test_a_failing_validator_reveals_nothing(tmp_path):
    def broken(path, competition_id, data_dir):
        raise RuntimeError("answers at /secret/private/test.csv unreadable")

    with ValidationService("c", tmp_path / "d", tmp_path / "sock", validator=broken) as service:
        path = tmp_path / "s.csv"
        path.write_text("id,target\n")
        status, answer = validate_file(str(path), str(service.socket_path))
    assert status == 500
    assert "secret" not in json.dumps(answer)


def test_real_grader_says_valid_or_why_and_never_a_score(demo_data, tmp_path):
    public = demo_data / COMPETITION / "prepared" / "public"
    with ValidationService(COMPETITION, demo_data, tmp_path / "sock") as service:
        sample = public / "sample_submission.csv"
        status, answer = validate_file(str(sample), str(service.socket_path))
        assert status == 200 and answer["valid"] is True, answer
        broken = tmp_path / "broken.csv"
        broken.write_text("id,target\nt0,0.5\n")  # most rows missing
        status, bad = validate_file(str(broken), str(service.socket_path))
    assert status == 200 and bad["valid"] is False and bad["result"]
    for reply in (answer, bad):
        assert set(reply) == {"result", "valid"}
        assert "score" not in reply["result"].lower()


def test_client_script_works_as_validate_submission_sh(service, tmp_path):
    script = tmp_path / "validate_submission.sh"
    script.write_text(client_script())
    script.chmod(0o755)
    good = tmp_path / "good.csv"
    good.write_text("id,target\nt0,0.5\n")
    env = {"VALIDATION_SOCKET": str(service.socket_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(script), str(good)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"result": "Submission is valid.", "valid": True}
    usage = subprocess.run([str(script)], capture_output=True, text=True, env=env)
    assert usage.returncode == 1 and "Usage" in usage.stdout
    missing = subprocess.run(
        [str(script), str(tmp_path / "nope.csv")], capture_output=True, text=True, env=env
    )
    assert missing.returncode == 1 and "does not exist" in missing.stdout
