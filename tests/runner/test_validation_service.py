"""The validation service: MLE-bench's /validate contract over a unix socket, valid or the
reason and never a score, limited in size and rate; and the client agents call."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import selectors
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from runner.harness import client_script
from runner.validation_client import multipart_body, multipart_parts, request, validate_file
from runner.validation_service import RateLimit, ValidationLimits, ValidationService
from tests.support.polling import wait_until

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


# --- bounds: what an adversarial agent can make the host spend -----------------------------------


def _tasks() -> int:
    """Threads of this process (the service runs in it, as in the harness)."""
    return len(os.listdir("/proc/self/task"))


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


class _Peak:
    """Samples ``measure()`` every few milliseconds in the background; ``peak`` is the max."""

    def __init__(self, measure) -> None:
        self.measure = measure
        self.peak = measure()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._done.wait(0.005):
            self.peak = max(self.peak, self.measure())

    def __enter__(self) -> _Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()


def _connect(service: ValidationService) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(service.socket_path))
    return sock


def _read_until_closed(socks: list[socket.socket], budget_s: float) -> dict:
    """Each socket's bytes and when (seconds from now) the service closed it."""
    selector = selectors.DefaultSelector()
    start = time.monotonic()
    results = {}
    for sock in socks:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, bytearray())
    while selector.get_map() and time.monotonic() - start < budget_s:
        for key, _ in selector.select(0.05):
            try:
                data = key.fileobj.recv(65536)
            except ConnectionResetError:
                data = b""
            if data:
                key.data.extend(data)
            else:
                results[key.fileobj] = (bytes(key.data), time.monotonic() - start)
                selector.unregister(key.fileobj)
    for key in list(selector.get_map().values()):
        results[key.fileobj] = (bytes(key.data), None)  # never closed
    return results


def _start_posts(path: Path, service: ValidationService, n: int):
    """``n`` clients validating ``path`` at once; (their threads, the answers as they come)."""
    answers: list = []
    clients = [
        threading.Thread(
            target=lambda: answers.append(validate_file(str(path), str(service.socket_path)))
        )
        for _ in range(n)
    ]
    for client in clients:
        client.start()
    return clients, answers


def _status(response: bytes) -> int:
    return int(response.split(b" ", 2)[1]) if response else 0


def test_limits_default_and_come_from_the_environment(tmp_path, monkeypatch):
    defaults = ValidationLimits.from_env({})
    assert defaults == ValidationLimits()
    assert (defaults.max_connections, defaults.threads, defaults.concurrent_validations) == (
        16,
        4,
        2,
    )
    assert defaults.max_request_bytes == 512 * 1024**2
    assert (defaults.rate_per_minute, defaults.idle_timeout_s) == (30, 10.0)
    env = {
        "MLEBOARD_VALIDATION_MAX_CONNECTIONS": "3",
        "MLEBOARD_VALIDATION_MAX_REQUEST_BYTES": "1000",
        "MLEBOARD_VALIDATION_RATE_PER_MINUTE": "7",
        "MLEBOARD_VALIDATION_THREADS": "2",
        "MLEBOARD_VALIDATION_IDLE_TIMEOUT_S": "0.5",
    }
    assert ValidationLimits.from_env(env) == ValidationLimits(
        max_connections=3,
        max_request_bytes=1000,
        rate_per_minute=7,
        threads=2,
        idle_timeout_s=0.5,
    )
    for name, bad in (
        ("MLEBOARD_VALIDATION_THREADS", "many"),
        ("MLEBOARD_VALIDATION_RATE_PER_MINUTE", "0"),
    ):
        with pytest.raises(ValueError, match=name):
            ValidationLimits.from_env({name: bad})
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    service = ValidationService("c", tmp_path, tmp_path / "sock", validator=fake_validator)
    assert service.limits.threads == 2 and service.max_bytes == 1000
    assert service.rate_limit.describe() == "at most 7 validations per minute"


def test_an_idle_flood_keeps_threads_bounded_and_is_dropped_within_the_idle_timeout(tmp_path):
    limits = ValidationLimits(max_connections=16, threads=4, idle_timeout_s=1.0)
    before = _tasks()
    with ValidationService(
        "c", tmp_path / "d", tmp_path / "sock", validator=fake_validator, limits=limits
    ) as service:
        assert _tasks() - before == 1 + limits.threads  # the accepting thread and the pool
        with _Peak(_tasks) as threads:
            socks = [_connect(service) for _ in range(300)]  # and never send a byte
            closed = _read_until_closed(socks, budget_s=limits.idle_timeout_s + 4)
        grown = threads.peak - 1 - before  # the sampling thread is the test's
        print(f"idle flood: {grown} service threads at most for 300 connections")
        assert grown <= 1 + limits.threads
        assert all(when is not None for _, when in closed.values()), "connections left open"
        latest = max(when for _, when in closed.values())
        print(f"idle flood: every connection closed after {latest:.2f}s")
        assert latest <= limits.idle_timeout_s + 1.0
        statuses = sorted(_status(data) for data, _ in closed.values())
        assert statuses.count(503) == 300 - 16 and statuses.count(408) == 16
        busy = next(data for data, _ in closed.values() if _status(data) == 503)
        assert b"At most 16 connections" in busy
        assert service.counts["busy"] == 284 and service.counts["timed_out"] == 16
        assert service.open_connections == 0
        # and it still answers
        assert request(str(service.socket_path), "GET", "/health") == (200, {"status": "running"})
        for sock in socks:
            sock.close()
    assert _tasks() <= before


def test_slowloris_connections_are_dropped_within_the_idle_timeout(tmp_path):
    limits = ValidationLimits(threads=4, idle_timeout_s=1.0)
    with ValidationService(
        "c", tmp_path / "d", tmp_path / "sock", validator=fake_validator, limits=limits
    ) as service:
        # The service counts from accepting a connection, so the test counts from before
        # connecting: what it measures is never shorter than what the service measured.
        start = time.monotonic()
        socks = [_connect(service) for _ in range(3)]
        head = b"POST /validate HTTP/1.1\r\nX-Slow: " + b"a" * 1000
        # One byte each, again whenever 0.1 s passes without the service answering, until
        # it has answered (or closed) every connection: a request that never ends.
        for dripped in range(len(head)):
            for sock in socks:
                with contextlib.suppress(OSError):
                    sock.send(head[dripped : dripped + 1])
            answered, _, _ = select.select(socks, [], [], 0.1)
            if len(answered) == len(socks):
                break
        dropped_after = time.monotonic() - start
        closed = _read_until_closed(socks, budget_s=5)
        # A fourth worker was free all along.
        assert request(str(service.socket_path), "GET", "/health")[0] == 200
    for data, _ in closed.values():
        assert _status(data) == 408 and b"timed out" in data
    assert service.counts["timed_out"] == 3
    # Dropped at the timeout although a byte came every tick, not sooner.
    assert dropped_after >= limits.idle_timeout_s


def test_a_body_over_the_limit_is_refused_before_it_is_read(tmp_path):
    with ValidationService(
        "c", tmp_path / "d", tmp_path / "sock", validator=fake_validator, max_bytes=10 * 1024**2
    ) as service:
        rss = _rss_mib()
        sock = _connect(service)
        sock.sendall(
            b"POST /validate HTTP/1.1\r\nContent-Type: text/csv\r\n"
            b"Content-Length: 107374182400\r\n\r\n" + b"x" * 65536
        )  # 100 GiB announced
        sock.settimeout(5)
        answer = sock.recv(65536)
        sock.close()
        assert _status(answer) == 413
        assert b"limit of 10 MiB" in answer
        assert _rss_mib() - rss < 5
    assert service.counts["too_large"] == 1 and service.counts["answered"] == 0


def test_a_file_part_over_the_limit_is_refused_while_streaming(tmp_path):
    seen = []
    with ValidationService(
        "c",
        tmp_path / "d",
        tmp_path / "sock",
        validator=lambda *args: seen.append(args),
        max_bytes=1000,
    ) as service:
        # Within the form's allowance, so only counting the file's bytes catches it.
        body, content_type = multipart_body("file", "s.csv", b"id,target\n" + b"x" * 1500)
        status, answer = request(
            str(service.socket_path), "POST", "/validate", body, {"Content-Type": content_type}
        )
    assert status == 413 and "limit of 1000 bytes" in answer["error"]
    assert seen == [] and service.counts["too_large"] == 1


def test_large_parallel_posts_are_streamed_to_disk_and_validated_two_at_a_time(tmp_path):
    size = 64 * 1024**2
    big = tmp_path / "big.csv"
    with big.open("wb") as out:
        out.write(b"id,target\n")
        out.write(os.urandom(size - 10))
    expected = hashlib.sha256(big.read_bytes()).hexdigest()
    running, most, seen, lock = [0], [0], [], threading.Lock()
    both = threading.Barrier(2)

    def validator(path, competition_id, data_dir):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            while chunk := handle.read(1024**2):
                digest.update(chunk)
        seen.append((path, digest.hexdigest()))
        # The first two calls wait for each other (so they overlap whatever the machine's
        # load); a third starting meanwhile would break the cap on them.
        with lock:
            first_two = len(seen) <= 2
        if first_two:
            both.wait(timeout=60)
        with lock:
            running[0] -= 1
        return Answer(True, "Submission is valid.")

    limits = ValidationLimits(max_request_bytes=128 * 1024**2, concurrent_validations=2)
    with ValidationService(
        "c", tmp_path / "d", tmp_path / "sock", validator=validator, limits=limits
    ) as service:
        rss = _rss_mib()
        with _Peak(_rss_mib) as memory:
            clients, answers = _start_posts(big, service, 5)
            for client in clients:
                client.join()
        growth = memory.peak - rss
        print(f"5 parallel posts of 64 MiB: RSS grew by {growth:.1f} MiB at most")
        scratch = service._scratch
        assert list(scratch.iterdir()) == []  # every temporary file removed
    assert [status for status, _ in answers] == [200] * 5
    assert growth < 40  # less than one body: nothing is buffered whole
    assert most[0] == 2  # never more than two validations at once
    assert all(digest == expected for _, digest in seen)
    assert all(path.parent == scratch and path.suffix == ".csv" for path, _ in seen)


def test_posts_beyond_the_validation_slots_wait_then_get_503(tmp_path):
    release = threading.Event()

    def slow(path, competition_id, data_dir):
        release.wait(10)
        return Answer(True, "Submission is valid.")

    limits = ValidationLimits(concurrent_validations=2, queue_wait_s=0.5, threads=4)
    path = tmp_path / "s.csv"
    path.write_text("id,target\nt0,0.5\n")
    with ValidationService(
        "c", tmp_path / "d", tmp_path / "sock", validator=slow, limits=limits
    ) as service:
        clients, answers = _start_posts(path, service, 5)
        try:
            wait_until(lambda: len(answers) >= 3, timeout=10, interval=0.05)
        finally:
            release.set()
        for client in clients:
            client.join()
    statuses = sorted(status for status, _ in answers)
    assert statuses == [200, 200, 503, 503, 503]
    refused = next(answer for status, answer in answers if status == 503)
    assert "At most 2 submissions are checked at once" in refused["details"]
    assert service.counts["busy"] == 3


def test_the_rate_limit_answers_429_with_the_rate(tmp_path):
    limits = ValidationLimits(rate_per_minute=3)
    path = tmp_path / "s.csv"
    path.write_text("id,target\n")
    with ValidationService(
        "c", tmp_path / "d", tmp_path / "sock", validator=fake_validator, limits=limits
    ) as service:
        answers = [validate_file(str(path), str(service.socket_path)) for _ in range(5)]
    assert [status for status, _ in answers] == [200, 200, 200, 429, 429]
    assert answers[3][1]["error"] == "Too many validation requests."
    assert "at most 3 validations per minute" in answers[3][1]["details"]
    assert "retry in" in answers[3][1]["details"]
    assert service.counts["rate_limited"] == 2


def test_the_multipart_stream_keeps_the_file_exact(tmp_path):
    received = []

    def keep(path, competition_id, data_dir):
        received.append(path.read_bytes())
        return Answer(True, "Submission is valid.")

    # Bytes that look like the form's framing, around the 1 MiB reading chunks.
    data = bytearray(os.urandom(3 * 1024**2 + 123))
    for at in (1024**2 - 3, 2 * 1024**2 - 1, 2 * 1024**2 + 40):
        data[at : at + 6] = b"\r\n--\r\n"
    data = bytes(data)
    with ValidationService("c", tmp_path / "d", tmp_path / "sock", validator=keep) as service:
        head, tail, content_type = multipart_parts("file", "s.csv")
        boundary = content_type.split("boundary=")[1]
        note = f'--{boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n'
        body = note.encode() + head + data + tail
        status, _ = request(
            str(service.socket_path), "POST", "/validate", body, {"Content-Type": content_type}
        )
        assert status == 200
        status, _ = request(
            str(service.socket_path), "POST", "/validate", data, {"Content-Type": "text/csv"}
        )
        assert status == 200
        for bad in (b"no form here", head + data):  # no boundary at all; cut short
            status, answer = request(
                str(service.socket_path), "POST", "/validate", bad, {"Content-Type": content_type}
            )
            assert status == 400 and "multipart form field `file`" in answer["error"]
    assert received == [data, data]


def test_refusals_print_readably_through_validate_submission_sh(tmp_path):
    script = tmp_path / "validate_submission.sh"
    script.write_text(client_script())
    script.chmod(0o755)
    good = tmp_path / "good.csv"
    good.write_text("id,target\nt0,0.5\n")
    limits = ValidationLimits(rate_per_minute=1)
    with ValidationService(
        "c", tmp_path / "d", tmp_path / "sock", validator=fake_validator, limits=limits
    ) as service:
        env = {"VALIDATION_SOCKET": str(service.socket_path), "PATH": "/usr/bin:/bin"}
        runs = [
            subprocess.run([str(script), str(good)], capture_output=True, text=True, env=env)
            for _ in range(2)
        ]
    assert runs[0].returncode == 0
    assert runs[1].returncode == 2, runs[1].stderr
    printed = json.loads(runs[1].stdout)
    assert printed["error"] == "Too many validation requests."
    assert "at most 1 validation per minute" in printed["details"]


def test_stop_is_prompt_with_connections_open(tmp_path):
    service = ValidationService(
        "c", tmp_path / "d", tmp_path / "sock", validator=fake_validator
    ).start()
    socks = [_connect(service) for _ in range(20)]
    start = time.monotonic()
    service.stop()
    assert time.monotonic() - start < 2
    assert not service.socket_path.exists()
    for sock in socks:
        sock.close()


def test_every_validation_call_is_recorded_with_its_answer(tmp_path):
    calls = tmp_path / "out" / "validation_calls.jsonl"
    calls.parent.mkdir()
    with ValidationService(
        "c",
        tmp_path / "data",
        tmp_path / "sock",
        validator=fake_validator,
        rate_limit=RateLimit(burst=2, per_minute=1),
        calls_path=calls,
    ) as service:
        good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
        good.write_text("id,target\nt0,0.5\n")
        bad.write_text("nope,target\nt0,0.5\n" + "x" * 5000)
        validate_file(str(good), str(service.socket_path))
        validate_file(str(bad), str(service.socket_path))
        assert validate_file(str(good), str(service.socket_path))[0] == 429
        assert request(str(service.socket_path), "GET", "/health")[0] == 200
    lines = [json.loads(line) for line in calls.read_text().splitlines()]
    assert len(lines) == 3  # /health is not a validation call
    assert set(lines[0]) == {"at", "elapsed_s", "status", "valid", "message", "bytes"}
    assert lines[0]["status"] == 200 and lines[0]["valid"] is True
    assert lines[0]["message"] == "Submission is valid."
    assert lines[0]["at"].endswith("+00:00") and lines[0]["elapsed_s"] >= 0
    assert lines[0]["bytes"] > len("id,target\nt0,0.5\n")
    assert lines[1]["valid"] is False and "first column" in lines[1]["message"]
    assert lines[1]["bytes"] > 5000
    assert lines[2]["status"] == 429 and lines[2]["valid"] is None
    assert "Too many validation requests" in lines[2]["message"]
    assert lines[0]["elapsed_s"] <= lines[1]["elapsed_s"] <= lines[2]["elapsed_s"]


def test_recorded_answers_are_capped_and_so_is_the_file(tmp_path):
    calls = tmp_path / "validation_calls.jsonl"
    service = ValidationService(
        "c",
        tmp_path / "data",
        tmp_path / "sock",
        validator=lambda *a: Answer(False, "y" * 5000),
        calls_path=calls,
        max_recorded_calls=3,
    )
    submission = tmp_path / "s.csv"
    submission.write_text("id\n")
    threads = [
        threading.Thread(target=service.record_call, args=(*service.answer_file(submission), 3))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = [json.loads(line) for line in calls.read_text().splitlines()]
    assert len(lines) == 4
    assert all(len(line["message"]) == 2000 and line["valid"] is False for line in lines[:3])
    assert "Only the first 3 validation calls are recorded" in lines[3]["message"]


def test_without_a_calls_path_nothing_is_recorded(service, tmp_path):
    good = tmp_path / "good.csv"
    good.write_text("id,target\n")
    validate_file(str(good), str(service.socket_path))
    assert service.calls_path is None
    assert not list(tmp_path.rglob("*.jsonl"))
