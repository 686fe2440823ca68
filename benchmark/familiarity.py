"""How familiar a base model is with a text: the mean probability it gives each of the
text's tokens, as the MLE-bench paper measures familiarity (its Figure 5; MLE-bench's
``experiments/familiarity``). Pure Python, no Django: the site stores what this returns.

The model is any completions endpoint with prompt log-probabilities (``echo: true``,
``logprobs: 0``, ``max_tokens: 1``; the generated token is dropped). A long text is sent in
chunks sized without the model's tokenizer (a token covers at least one UTF-8 byte; later
chunks from the bytes per token measured, with ``SAFETY``): docs/contamination.md. Every
request has a deadline that also covers a trickling answer, answers are read up to
``MAX_RESPONSE_BYTES``, and errors raise ``FamiliarityError`` with a reason a person can
read, never holding the key or the endpoint's address.
"""

from __future__ import annotations

import http.client
import json
import math
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field

RESERVED = 4  # tokens a server may add to a prompt (BOS, a leading-space marker)
SAFETY = 0.85  # share of the measured bytes per token a later chunk is sized by
MIN_MAX_TOKENS = 16
MAX_RESPONSE_BYTES = 32 * 1024**2
MAX_ERROR_EXCERPT = 200
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class FamiliarityError(RuntimeError):
    """The endpoint could not score a text; the message says why."""


class _TooLong(FamiliarityError):
    """The endpoint refused a chunk (HTTP 400) or counted it above ``max_tokens``."""


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible completions endpoint and how to call it."""

    base_url: str
    model: str
    api_key: str = ""
    timeout_s: float = 60.0
    max_tokens: int = 2048
    retries: int = 2  # further tries of a request after a connection error, 429 or 5xx
    backoff_s: float = 1.0  # before the first retry; doubled each time

    def __post_init__(self):
        parts = urllib.parse.urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FamiliarityError("the endpoint's base URL must be an http(s) URL")
        if not self.model:
            raise FamiliarityError("the endpoint needs a model name")
        if self.max_tokens < MIN_MAX_TOKENS:
            raise FamiliarityError(f"max_tokens must be at least {MIN_MAX_TOKENS}")


@dataclass(frozen=True)
class ChunkScore:
    """One request's answer: ``tokens`` the prompt's tokens as the model counted them,
    ``scored`` those with a log-probability, ``probability_sum`` the sum of their
    probabilities."""

    tokens: int
    scored: int
    probability_sum: float


@dataclass
class TextScore:
    """A text's familiarity: ``value`` the mean probability of its scored tokens."""

    tokens: int = 0  # scored tokens (each chunk's first token has no probability)
    probability_sum: float = 0.0
    chunks: list[dict] = field(default_factory=list)  # bytes, tokens, scored per request

    @property
    def value(self) -> float | None:
        return self.probability_sum / self.tokens if self.tokens else None


def guaranteed_bytes(max_tokens: int) -> int:
    """The most UTF-8 bytes a chunk may have and still be at most ``max_tokens`` tokens
    for any byte-level tokenizer."""
    return max_tokens - RESERVED


def score_text(text: str, endpoint: Endpoint, *, post: Callable | None = None) -> TextScore:
    """The familiarity of ``text`` (see the module's doc for how it is split and
    weighted). ``post`` replaces the HTTP call (``post(endpoint, prompt) -> dict``)."""
    post = post or post_completion
    data = text.encode("utf-8")
    if not data.strip():
        raise FamiliarityError("the text is empty: nothing to score")
    guaranteed = guaranteed_bytes(endpoint.max_tokens)
    score = TextScore()
    bytes_per_token: float | None = None  # the fewest measured on this text so far
    position = 0
    while position < len(data):
        budget = guaranteed
        if bytes_per_token is not None:
            budget = max(guaranteed, int(guaranteed * bytes_per_token * SAFETY))
        end = _cut(data, position, budget)
        chunk = data[position:end]
        try:
            result = score_chunk(chunk.decode("utf-8"), endpoint, post=post)
        except _TooLong as exc:
            if budget == guaranteed:
                raise FamiliarityError(
                    f"{exc} (for a chunk of {len(chunk)} bytes, which a byte-level tokenizer "
                    f"makes at most {endpoint.max_tokens} tokens: is "
                    "MLEBOARD_FAMILIARITY_MAX_TOKENS within the model's context?)"
                ) from None
            bytes_per_token = None  # this text tokenizes worse than measured: start again
            continue
        score.tokens += result.scored
        score.probability_sum += result.probability_sum
        score.chunks.append({"bytes": len(chunk), "tokens": result.tokens, "scored": result.scored})
        measured = len(chunk) / result.tokens if result.tokens else None
        if measured is not None:
            bytes_per_token = (
                measured if bytes_per_token is None else min(bytes_per_token, measured)
            )
        position = end
    if not score.tokens:
        raise FamiliarityError("the endpoint gave no token a log-probability")
    return score


def _cut(data: bytes, start: int, budget: int) -> int:
    """Where a chunk from ``start`` of at most ``budget`` bytes ends: at the last
    whitespace in its second half when there is one, else at a character boundary."""
    end = start + budget
    if end >= len(data):
        return len(data)
    space = max(data.rfind(b, start + budget // 2, end) for b in (b" ", b"\n", b"\t"))
    if space > start:
        return space
    while end > start + 1 and (data[end] & 0xC0) == 0x80:  # a UTF-8 continuation byte
        end -= 1
    return end


def score_chunk(prompt: str, endpoint: Endpoint, *, post: Callable | None = None) -> ChunkScore:
    """Send one prompt and read its tokens' log-probabilities."""
    answer = (post or post_completion)(endpoint, prompt)
    result = read_prompt_logprobs(answer, prompt)
    if result.tokens > endpoint.max_tokens:
        raise _TooLong(f"the endpoint counted {result.tokens} tokens")
    return result


def read_prompt_logprobs(answer, prompt: str) -> ChunkScore:
    """The prompt's scored tokens from a completions answer; FamiliarityError when the
    answer is not one (no choices, no log-probabilities, values that are not numbers)."""
    try:
        logprobs = answer["choices"][0]["logprobs"]
        values = logprobs["token_logprobs"]
    except (KeyError, IndexError, TypeError):
        raise FamiliarityError(
            "the answer has no choices[0].logprobs.token_logprobs: does the endpoint serve "
            "prompt log-probabilities (echo with logprobs)?"
        ) from None
    if not isinstance(values, list):
        raise FamiliarityError("choices[0].logprobs.token_logprobs is not a list")
    n_prompt = _prompt_tokens(answer, logprobs, prompt, len(values))
    total, scored = 0.0, 0
    for value in values[:n_prompt]:
        if value is None:
            continue  # the first token (no context) has none
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FamiliarityError("a token log-probability is not a number")
        if not math.isfinite(value) or value > 1e-6:
            raise FamiliarityError(f"a token log-probability is {value!r}, not a log of 0-1")
        total += math.exp(min(value, 0.0))
        scored += 1
    return ChunkScore(tokens=n_prompt, scored=scored, probability_sum=total)


def _prompt_tokens(answer: dict, logprobs: dict, prompt: str, available: int) -> int:
    """How many of the log-probabilities are the prompt's: ``usage.prompt_tokens``, else
    the tokens ``text_offset`` places inside the prompt."""
    usage = answer.get("usage") if isinstance(answer, dict) else None
    count = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if isinstance(count, int) and not isinstance(count, bool):
        if not 0 < count <= available:
            raise FamiliarityError(
                f"usage.prompt_tokens is {count}, but {available} log-probabilities came back"
            )
        return count
    offsets = logprobs.get("text_offset")
    if isinstance(offsets, list) and len(offsets) == available:
        if not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets):
            raise FamiliarityError("logprobs.text_offset holds something else than integers")
        return sum(1 for o in offsets if o < len(prompt))
    raise FamiliarityError(
        "the answer gives neither usage.prompt_tokens nor logprobs.text_offset: which "
        "log-probabilities are the prompt's cannot be told"
    )


def post_completion(endpoint: Endpoint, prompt: str) -> dict:
    """``POST {base}/completions`` for the prompt's log-probabilities; retried after a
    connection error, a 429 or a 5xx (``retries`` times, backing off); the parsed JSON."""
    body = json.dumps(
        {
            "model": endpoint.model,
            "prompt": prompt,
            "echo": True,
            "logprobs": 0,
            "max_tokens": 1,
            "temperature": 0,
        }
    ).encode("utf-8")
    attempt = 0
    while True:
        try:
            status, raw = _post(endpoint, body)
        except FamiliarityError:
            if attempt >= endpoint.retries:
                raise
        else:
            if status == 200:
                return _parse(raw)
            reason = _http_reason(status, raw, endpoint.api_key)
            if status == 400:
                raise _TooLong(reason)
            if status not in RETRY_STATUSES or attempt >= endpoint.retries:
                raise FamiliarityError(reason)
        time.sleep(endpoint.backoff_s * 2**attempt)
        attempt += 1


def _parse(raw: bytes) -> dict:
    try:
        answer = json.loads(raw)
    except (ValueError, RecursionError):
        raise FamiliarityError("the endpoint's answer is not JSON") from None
    if not isinstance(answer, dict):
        raise FamiliarityError("the endpoint's answer is not a JSON object")
    return answer


def _http_reason(status: int, raw: bytes, api_key: str) -> str:
    excerpt = raw[:MAX_ERROR_EXCERPT].decode("utf-8", errors="replace").strip()
    if api_key:
        excerpt = excerpt.replace(api_key, "********")
    excerpt = " ".join(excerpt.split())
    return f"the endpoint answered HTTP {status}" + (f": {excerpt}" if excerpt else "")


def _post(endpoint: Endpoint, body: bytes) -> tuple[int, bytes]:
    """One request, within ``timeout_s`` in all: the status and up to
    MAX_RESPONSE_BYTES of the answer."""
    parts = urllib.parse.urlsplit(endpoint.base_url)
    path = parts.path.rstrip("/") + "/completions"
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(
            parts.hostname,
            parts.port,
            timeout=endpoint.timeout_s,
            context=ssl.create_default_context(),
        )
    else:
        connection = http.client.HTTPConnection(
            parts.hostname, parts.port, timeout=endpoint.timeout_s
        )
    expired = threading.Event()

    def expire() -> None:  # a server trickling bytes defeats a per-read timeout
        expired.set()
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(endpoint.timeout_s, expire)
    watchdog.daemon = True
    watchdog.start()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        raw = response.read(MAX_RESPONSE_BYTES + 1)
        if len(raw) > MAX_RESPONSE_BYTES:
            raise FamiliarityError(
                f"the endpoint's answer is larger than {MAX_RESPONSE_BYTES // 1024**2} MiB"
            )
        if expired.is_set():
            raise FamiliarityError(f"the endpoint did not answer within {endpoint.timeout_s:g} s")
        return response.status, raw
    except TimeoutError:
        raise FamiliarityError(
            f"the endpoint did not answer within {endpoint.timeout_s:g} s"
        ) from None
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set():
            raise FamiliarityError(
                f"the endpoint did not answer within {endpoint.timeout_s:g} s"
            ) from None
        raise FamiliarityError(f"could not reach the endpoint ({type(exc).__name__})") from None
    finally:
        watchdog.cancel()
        connection.close()


def competition_familiarity(texts: list[TextScore]) -> float | None:
    """A competition's familiarity over its texts (its description and the further texts
    an operator added): the mean of the texts' values, each text counting once, as
    MLE-bench's ``familiarity.py`` averages its documents."""
    values = [t.value for t in texts if t.value is not None]
    return sum(values) / len(values) if values else None
