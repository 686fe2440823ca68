"""The model bridge counts what a run asks of its model: requests, tokens (from each
answer's usage, streamed or not; estimated when the endpoint gives none), errors and time
waited, and never the texts. Against the fake LLM (``tests/support/fake_llm.py``, a
scripted server, not a model), through the bridge on a loopback port as the local backend
uses it (the container's unix socket is the same relay)."""

from __future__ import annotations

import http.client
import json
import math
import socket

import pytest

from runner.llm_bridge import HostBridge
from runner.llm_meter import CHARS_PER_TOKEN, Meter, prompt_chars
from tests.support.fake_llm import FakeLLM

MARKER = "PRIVATE-PROMPT-TEXT-4242"


def chat(stream: bool = False, **extra) -> dict:
    return {
        "model": "fake",
        "messages": [
            {"role": "system", "content": "You are a Kaggle grandmaster. " + MARKER},
            {"role": "user", "content": "Write a solution for the wine data set."},
        ],
        "stream": stream,
        **extra,
    }


def post(conn: http.client.HTTPConnection, path: str, body: dict) -> tuple[int, bytes, dict]:
    conn.request(
        "POST",
        path,
        body=json.dumps(body),
        headers={"Content-Type": "application/json", "Authorization": "Bearer k"},
    )
    response = conn.getresponse()
    return response.status, response.read(), dict(response.getheaders())


def events(raw: bytes) -> list[dict | str]:
    out: list[dict | str] = []
    for line in raw.decode().splitlines():
        if line.startswith("data:"):
            data = line[5:].strip()
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


@pytest.fixture
def fake():
    with FakeLLM() as server:
        yield server


def bridged(fake_llm: FakeLLM):
    return HostBridge(fake_llm.base_url, tcp=True)


def served_totals(fake_llm: FakeLLM) -> tuple[int, int]:
    return (
        sum(u["prompt_tokens"] for u in fake_llm.usage_served),
        sum(u["completion_tokens"] for u in fake_llm.usage_served),
    )


def test_plain_and_streamed_answers_are_counted_from_their_usage(fake):
    with bridged(fake) as bridge:
        conn = http.client.HTTPConnection("127.0.0.1", bridge.tcp_port, timeout=10)
        status, body, _ = post(conn, "/v1/chat/completions", chat())
        assert status == 200
        plain = json.loads(body)
        assert plain["usage"] == fake.usage_served[0]  # passed on unchanged
        # A stream that did not ask for usage: the bridge asks, and takes the chunk out.
        status, body, headers = post(conn, "/v1/chat/completions", chat(stream=True))
        assert status == 200 and headers["Content-Type"] == "text/event-stream"
        chunks = events(body)
        assert chunks[-1] == "[DONE]"
        assert all(isinstance(c, str) or c["choices"] for c in chunks)
        assert not any(isinstance(c, dict) and c.get("usage") for c in chunks)
        text = "".join(
            c["choices"][0]["delta"].get("content") or "" for c in chunks if isinstance(c, dict)
        )
        assert text == plain["choices"][0]["message"]["content"]
        # A stream that asked for it gets it.
        status, body, _ = post(
            conn, "/v1/chat/completions", chat(stream=True, stream_options={"include_usage": True})
        )
        assert events(body)[-2]["usage"] == fake.usage_served[-1]
        conn.close()
        usage = bridge.usage()
    assert len(fake.usage_served) == 3
    prompt, completion = served_totals(fake)
    assert usage["prompt_tokens"] == prompt and usage["completion_tokens"] == completion
    assert usage["total_tokens"] == prompt + completion
    assert usage["requests"] == usage["completion_requests"] == 3
    assert usage["streamed_requests"] == 2
    assert usage["estimated_requests"] == 0 and usage["errors"] == {}
    assert usage["wait_s"] > 0
    # Over one kept-alive connection, and the endpoint saw its own Host.
    assert {r["host"] for r in fake.requests} == {fake.base_url.split("/")[2]}


def test_an_endpoint_refusing_stream_options_gets_the_agents_request_and_is_estimated(fake):
    fake.refuse_stream_options = True
    request = chat(stream=True)
    with bridged(fake) as bridge:
        conn = http.client.HTTPConnection("127.0.0.1", bridge.tcp_port, timeout=10)
        status, body, _ = post(conn, "/v1/chat/completions", request)
        assert status == 200  # the refusal of the amended request never reached the agent
        chunks = events(body)
        status, _, _ = post(conn, "/v1/chat/completions", request)
        assert status == 200
        usage = bridge.usage()
    assert fake.usage_served == []
    assert usage["stream_usage_refused"] is True and usage["errors"] == {}
    assert usage["estimated_requests"] == 2
    answer = sum(
        len(c["choices"][0]["delta"].get("content") or "") for c in chunks if isinstance(c, dict)
    )
    assert usage["prompt_tokens"] == 2 * math.ceil(prompt_chars(request) / CHARS_PER_TOKEN)
    assert usage["completion_tokens"] == 2 * math.ceil(answer / CHARS_PER_TOKEN)


def test_errors_are_counted_by_kind_and_an_endpoint_gone_is_a_502(fake):
    with bridged(fake) as bridge:
        conn = http.client.HTTPConnection("127.0.0.1", bridge.tcp_port, timeout=10)
        status, _, _ = post(conn, "/v1/no/such/route", chat())
        assert status == 404
        conn.request("GET", "/v1/models")
        assert conn.getresponse().read()
        fake.stop()
        conn2 = http.client.HTTPConnection("127.0.0.1", bridge.tcp_port, timeout=10)
        status, body, _ = post(conn2, "/v1/chat/completions", chat())
        assert status == 502 and b"model endpoint" in body
        usage = bridge.usage()
    assert usage["errors"] == {"http_404": 1, "unreachable": 1}
    assert usage["requests"] == 3 and usage["completion_requests"] == 1
    assert usage["prompt_tokens"] == usage["completion_tokens"] == 0


def test_no_text_is_kept_and_what_is_not_http_is_refused(fake):
    with bridged(fake) as bridge:
        conn = http.client.HTTPConnection("127.0.0.1", bridge.tcp_port, timeout=10)
        post(conn, "/v1/chat/completions", chat())
        with socket.create_connection(("127.0.0.1", bridge.tcp_port), timeout=10) as raw:
            raw.sendall(b"\x16\x03\x01 not http at all\r\n\r\n")
            assert raw.recv(4096).startswith(b"HTTP/1.1 400")
        record = json.dumps(bridge.usage())
    assert MARKER not in record and "grandmaster" not in record
    assert set(json.loads(record)) == set(Meter().as_dict())
