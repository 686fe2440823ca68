"""A fake base model for the familiarity tests: an OpenAI-compatible completions server
that is NOT a model. It answers ``POST /v1/completions`` with ``echo`` and ``logprobs``
as vLLM does, with made-up numbers:

- the prompt is cut into tokens by a toy byte-level tokenizer (each word with the spaces
  before it; a word longer than ``WORD_BYTES`` bytes in pieces of that many), so a token
  is never shorter than one byte, as with real byte-level tokenizers;
- each token gets a log-probability drawn from a hash of its text (the same token text
  always gets the same value), the first one null (it has no context), and one generated
  token is appended after the prompt's, as the real API does with ``max_tokens: 1``;
- a prompt longer than ``context_tokens`` is refused with HTTP 400, as vLLM refuses one
  past its context.

Every request is recorded with what was served (``requests``: prompt, tokens,
token_logprobs, the Authorization header), so that a test can compute by hand what the
stored familiarity must be. ``mode`` makes it fail: ``http_500``, ``not_json``,
``nested_json``, ``no_logprobs``, ``no_usage`` (no ``usage``, only ``text_offset``),
``bad_logprob`` (a log-probability of +3), ``hang`` (never answers) or ``trickle`` (a
byte every 0.2 s, never done). Nothing here leaves 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORD_BYTES = 6
TOKEN = re.compile(r"\s*\S+|\s+")


def tokenize(text: str) -> list[str]:
    """The toy tokenizer: words with their leading spaces, long words in pieces."""
    tokens = []
    for match in TOKEN.finditer(text):
        word = match.group()
        while len(word.encode("utf-8")) > WORD_BYTES:
            cut = WORD_BYTES
            while len(word[:cut].encode("utf-8")) > WORD_BYTES:
                cut -= 1
            tokens.append(word[: max(cut, 1)])
            word = word[max(cut, 1) :]
        tokens.append(word)
    return tokens


def logprob_of(token: str) -> float:
    """A made-up log-probability in (-6, -0.01] for a token text, always the same."""
    digest = int.from_bytes(hashlib.sha256(token.encode("utf-8")).digest()[:4], "big")
    return -0.01 - (digest % 6000) / 1000.0


class FakeBaseModel:
    def __init__(self, context_tokens: int = 4096, mode: str = "ok"):
        self.context_tokens = context_tokens
        self.mode = mode
        self.requests: list[dict] = []
        self.refused = 0  # prompts refused as past the context (HTTP 400)
        self.failed = 0  # requests answered with HTTP 500 (mode ``http_500``)
        self._server: ThreadingHTTPServer | None = None
        self._stop = threading.Event()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeBaseModel:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def completion(self, body: dict) -> tuple[int, dict]:
        """The status and answer for a request body; the request is recorded."""
        prompt = body.get("prompt", "")
        tokens = tokenize(prompt)
        if len(tokens) + int(body.get("max_tokens") or 0) > self.context_tokens:
            self.refused += 1
            return 400, {
                "object": "error",
                "message": f"This model's maximum context length is {self.context_tokens} "
                f"tokens. However, you requested {len(tokens) + 1} tokens.",
            }
        logprobs = [None, *(logprob_of(t) for t in tokens[1:])]
        offsets, position = [], 0
        for token in tokens:
            offsets.append(position)
            position += len(token)
        generated = " the"
        self.requests.append(
            {"prompt": prompt, "tokens": tokens, "token_logprobs": list(logprobs), "body": body}
        )
        served = [*logprobs, -0.5]  # the generated token's, after the prompt's
        if self.mode == "bad_logprob":
            served[1] = 3.0
        logprob_block = {
            "tokens": [*tokens, generated],
            "token_logprobs": served,
            "top_logprobs": None,
            "text_offset": [*offsets, position],
        }
        answer = {
            "id": "cmpl-fake",
            "object": "text_completion",
            "model": body.get("model", "fake-base"),
            "choices": [
                {
                    "index": 0,
                    "text": prompt + generated,
                    "logprobs": logprob_block,
                    "finish_reason": "length",
                }
            ],
            "usage": {
                "prompt_tokens": len(tokens),
                "completion_tokens": 1,
                "total_tokens": len(tokens) + 1,
            },
        }
        if self.mode == "no_usage":
            del answer["usage"]
        if self.mode == "no_logprobs":
            answer["choices"][0]["logprobs"] = None
        return 200, answer

    def start(self) -> None:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/completions"):
                    self._send(404, b'{"error": "no such route"}')
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, b'{"error": "not JSON"}')
                    return
                body["authorization"] = self.headers.get("Authorization", "")
                mode = fake.mode
                if mode == "hang":
                    fake._stop.wait()
                    return
                if mode == "trickle":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    while not fake._stop.wait(0.2):
                        try:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                        except OSError:
                            return
                    return
                if mode == "http_500":
                    fake.failed += 1
                    self._send(500, b'{"error": "the model server fell over"}')
                    return
                if mode == "not_json":
                    self._send(200, b"<html>a proxy's error page</html>")
                    return
                if mode == "nested_json":
                    self._send(200, b"[" * 100_000 + b"]" * 100_000)
                    return
                status, answer = fake.completion(body)
                self._send(status, json.dumps(answer).encode())

            def _send(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def expected_familiarity(requests: list[dict]) -> tuple[float, int]:
    """What the requests' served log-probabilities make, by hand: the mean probability of
    the prompt tokens that have one, and how many they are."""
    import math

    values = [lp for r in requests for lp in r["token_logprobs"] if lp is not None]
    return sum(math.exp(v) for v in values) / len(values), len(values)
