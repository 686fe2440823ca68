"""What a run asked of its model, counted at the bridge: requests, tokens, errors, waiting.

The bridge (``runner.llm_bridge``) reads each HTTP/1.1 exchange between the agent and the
operator's endpoint and tells a ``Meter`` about it: tokens from the response's ``usage``
(streams are asked to include it), else *estimated* from characters
(``CHARS_PER_TOKEN``); errors by status, unreachable or cut-off answers; time waited. Only
numbers are kept: no prompt, answer or header is recorded anywhere. The rules in full:
docs/agents.md.
"""

from __future__ import annotations

import json
import math
import re
import threading
from dataclasses import dataclass, field

CHARS_PER_TOKEN = 4
# The paths whose requests and answers carry tokens (the rest - ``/models`` - are counted
# as requests only).
_COMPLETION_PATH = re.compile(r"/(chat/completions|completions|responses)/?(\?.*)?$")
_EVENT_END = re.compile(rb"\r?\n\r?\n")


def is_completion_path(target: str) -> bool:
    return bool(_COMPLETION_PATH.search(target))


def _text_chars(value) -> int:
    """Characters of text in a message content (a string or a list of parts)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(_text_chars(part.get("text")) for part in value if isinstance(part, dict))
    return 0


def prompt_chars(request: dict) -> int:
    """Characters of what a completion request asks about: messages (or ``prompt``,
    ``input``) and the tools offered, whose definitions are part of the prompt too."""
    chars = 0
    for message in request.get("messages") or []:
        if isinstance(message, dict):
            chars += _text_chars(message.get("content"))
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict):
                    chars += len(str((call.get("function") or {}).get("arguments") or ""))
    for key in ("prompt", "input"):
        value = request.get(key)
        chars += (
            _text_chars(value)
            if not isinstance(value, list)
            else sum(
                _text_chars(v) if isinstance(v, str) else _text_chars(v.get("content"))
                for v in value
                if isinstance(v, str | dict)
            )
        )
    if request.get("tools"):
        chars += len(json.dumps(request["tools"]))
    return chars


def _choice_chars(choice: dict) -> int:
    """Characters an answer's choice (or a streamed delta of one) holds."""
    chars = len(choice.get("text") or "") if isinstance(choice.get("text"), str) else 0
    for key in ("message", "delta"):
        part = choice.get(key)
        if isinstance(part, dict):
            chars += _text_chars(part.get("content"))
            for call in part.get("tool_calls") or []:
                if isinstance(call, dict):
                    function = call.get("function") or {}
                    chars += len(str(function.get("name") or ""))
                    chars += len(str(function.get("arguments") or ""))
    return chars


def usage_tokens(usage) -> tuple[int, int] | None:
    """(prompt, completion) tokens of a ``usage`` object, or None when it has none."""
    if not isinstance(usage, dict):
        return None
    prompt = usage.get("prompt_tokens", usage.get("input_tokens"))
    completion = usage.get("completion_tokens", usage.get("output_tokens"))
    if not isinstance(prompt, int) and not isinstance(completion, int):
        return None
    return (
        prompt if isinstance(prompt, int) and prompt >= 0 else 0,
        completion if isinstance(completion, int) and completion >= 0 else 0,
    )


def estimate(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN) if chars > 0 else 0


@dataclass
class Exchange:
    """What one request and its answer showed the bridge (numbers only)."""

    completion: bool = False  # a request to a completion path
    streamed: bool = False
    prompt_chars: int = 0
    answer_chars: int = 0
    usage: tuple[int, int] | None = None
    status: int | None = None
    error: str = ""  # "http_429", "unreachable", "cut_off"
    wait_s: float = 0.0


class StreamReader:
    """Reads a server-sent-event stream (``data: {...}`` events) as it passes: the usage
    it ends with, the characters of the answer; ``feed`` returns the bytes to pass on,
    without the usage-only chunk when ``drop_usage_chunk`` (the bridge asked for it, the
    agent did not)."""

    def __init__(self, exchange: Exchange, drop_usage_chunk: bool) -> None:
        self.exchange = exchange
        self.drop_usage_chunk = drop_usage_chunk
        self._pending = b""

    def feed(self, data: bytes) -> bytes:
        self._pending += data
        out = bytearray()
        while True:
            match = _EVENT_END.search(self._pending)
            if match is None:
                break
            event, self._pending = self._pending[: match.end()], self._pending[match.end() :]
            if self._event(event):
                out += event
        return bytes(out)

    def flush(self) -> bytes:
        rest, self._pending = self._pending, b""
        if rest and not self._event(rest):
            return b""
        return rest

    def _event(self, event: bytes) -> bool:
        """Read one event; False when it is the usage-only chunk to be taken out."""
        lines = [
            line[5:].strip()
            for line in event.splitlines()
            if line.startswith(b"data:") and line[5:].strip() not in (b"", b"[DONE]")
        ]
        keep = True
        for line in lines:
            try:
                chunk = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(chunk, dict):
                continue
            tokens = usage_tokens(chunk.get("usage"))
            if tokens is None and isinstance(chunk.get("response"), dict):
                tokens = usage_tokens(chunk["response"].get("usage"))  # the Responses API
            if tokens is not None:
                self.exchange.usage = tokens
                if self.drop_usage_chunk and not chunk.get("choices"):
                    keep = False
            for choice in chunk.get("choices") or []:
                if isinstance(choice, dict):
                    self.exchange.answer_chars += _choice_chars(choice)
            if isinstance(chunk.get("delta"), str):  # the Responses API's text deltas
                self.exchange.answer_chars += len(chunk["delta"])
        return keep


def read_json_answer(exchange: Exchange, body: bytes) -> None:
    """The usage (or the characters, to estimate from) of a whole JSON answer."""
    try:
        answer = json.loads(body)
    except (ValueError, RecursionError, UnicodeDecodeError):
        return
    if not isinstance(answer, dict):
        return
    exchange.usage = usage_tokens(answer.get("usage"))
    for choice in answer.get("choices") or []:
        if isinstance(choice, dict):
            exchange.answer_chars += _choice_chars(choice)
    for item in answer.get("output") or []:  # the Responses API
        if isinstance(item, dict):
            exchange.answer_chars += _text_chars(item.get("content"))


@dataclass
class Meter:
    """A run's totals, added to from the bridge's threads; ``as_dict`` for the record."""

    requests: int = 0
    completion_requests: int = 0
    streamed_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_requests: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    wait_s: float = 0.0
    stream_usage_refused: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, exchange: Exchange) -> None:
        with self._lock:
            self.requests += 1
            self.wait_s += exchange.wait_s
            if exchange.error:
                self.errors[exchange.error] = self.errors.get(exchange.error, 0) + 1
            if not exchange.completion:
                return
            self.completion_requests += 1
            self.streamed_requests += exchange.streamed
            if exchange.usage is not None:
                prompt, completion = exchange.usage
            elif exchange.status is not None and exchange.status < 400:
                # An answer without usage: estimated from its text (an error costs nothing).
                prompt, completion = (
                    estimate(exchange.prompt_chars),
                    estimate(exchange.answer_chars),
                )
                self.estimated_requests += 1
            else:
                return
            self.prompt_tokens += prompt
            self.completion_tokens += completion

    def as_dict(self) -> dict:
        with self._lock:
            return {
                "requests": self.requests,
                "completion_requests": self.completion_requests,
                "streamed_requests": self.streamed_requests,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens,
                "estimated_requests": self.estimated_requests,
                "errors": dict(sorted(self.errors.items())),
                "wait_s": round(self.wait_s, 3),
                "stream_usage_refused": self.stream_usage_refused,
            }
