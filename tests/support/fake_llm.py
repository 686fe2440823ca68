"""A fake LLM for the scaffold tests: an OpenAI-compatible HTTP server that is NOT a model.

It answers ``POST /v1/chat/completions`` with canned, scripted replies chosen from what the
request looks like, enough to drive each scaffold through a real run on ``demo-wine``:

- AIDE: a plan and a working scikit-learn script (``./input`` -> ``./working/submission.csv``,
  printing its cross-validated log loss) for drafting, improving and debugging; for the
  ``submit_review`` function call, a review whose metric is read from the execution output
  quoted in the prompt.
- OpenHands (CodeAct): first the same script written to ``/home/code/solution.py`` (with
  ``str_replace_editor``'s ``create`` when the request offers tools, else an
  ``<execute_bash>`` heredoc), then running it, then (without tools) a look at the
  submission in IPython, then finishing.

Every request is recorded (``requests``: model, tools offered, the Authorization header
seen, the ``Host`` header, whether it streamed) so that a test can check what reached it.

Each answer carries a ``usage`` (``prompt_tokens`` and ``completion_tokens`` made up from
the lengths of the texts, different for every request); ``usage_served`` lists every one
it sent, so that a test can check the bridge's count against it. With ``"stream": true``
the answer is a server-sent-event stream of ``chat.completion.chunk`` objects, ending with
the usage chunk only when the request asks for it (``stream_options.include_usage``), as
OpenAI does. ``refuse_stream_options=True`` makes it answer such a request with a 400, as
endpoints that do not know the option do; then it serves no usage for streams at all.
Nothing here leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WINE_SOLUTION = """\
import os
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

INPUT = os.environ.get("WINE_INPUT", "./input")
OUTPUT = os.environ.get("WINE_OUTPUT", "./working")
train = pd.read_csv(os.path.join(INPUT, "train.csv"))
test = pd.read_csv(os.path.join(INPUT, "test.csv"))
features = [c for c in train.columns if c not in ("id", "target")]
x, y = train[features].to_numpy(), train["target"].to_numpy()
model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
folds = StratifiedKFold(5, shuffle=True, random_state=0)
oof = cross_val_predict(model, x, y, cv=folds, method="predict_proba")
print(f"Validation log loss: {log_loss(y, oof):.6f}")
model.fit(x, y)
proba = model.predict_proba(test[features].to_numpy())
submission = pd.DataFrame({"id": test["id"]})
for index, label in enumerate(model.classes_):
    submission[f"class_{label}"] = proba[:, index]
os.makedirs(OUTPUT, exist_ok=True)
submission.to_csv(os.path.join(OUTPUT, "submission.csv"), index=False)
print("wrote", os.path.join(OUTPUT, "submission.csv"), submission.shape)
# What the scaffold lets its code see of the model's key (the tests want "none"): printed,
# it would land in the journal or the event log, which are not masked like run.log.
print("key in the environment:", os.environ.get("OPENAI_API_KEY", "none"))
"""

AIDE_PLAN = (
    "Standardise the 13 chemical measurements and fit a multinomial logistic regression; "
    "report the 5-fold cross-validated log loss, then refit on all rows and write the "
    "class probabilities for the test set."
)
OPENHANDS_SCRIPT = "/home/code/solution.py"
OPENHANDS_RUN = (
    f"cd /home && WINE_INPUT=/home/data WINE_OUTPUT=/home/submission python3 {OPENHANDS_SCRIPT}"
    " && /home/validate_submission.sh /home/submission/submission.csv"
)
OPENHANDS_LOOK = (
    "import pandas as pd\n"
    "look = pd.read_csv('/home/submission/submission.csv')\n"
    "print('submission shape', look.shape)"
)


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class FakeLLM:
    """The fake LLM server on 127.0.0.1 (a free port). ``start()``/``stop()`` or ``with``."""

    def __init__(self, refuse_stream_options: bool = False) -> None:
        self.requests: list[dict] = []
        self.usage_served: list[dict] = []
        self.refuse_stream_options = refuse_stream_options
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # /v1/models
                self._send(200, {"object": "list", "data": [{"id": "fake-llm", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    self._send(400, {"error": {"message": "not JSON"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if fake.refuse_stream_options and "stream_options" in body:
                    self._send(400, {"error": {"message": "unknown field: stream_options"}})
                    return
                message = fake.answer(
                    body, self.headers.get("Authorization", ""), self.headers.get("Host", "")
                )
                completion = fake.completion(body, message)
                if body.get("stream") is True:
                    self._stream(body, completion)
                else:
                    self._send(200, completion)

            def _stream(self, body: dict, completion: dict) -> None:
                """The completion as chunks: the role, the content in pieces, the tool
                calls, the finish; then the usage chunk when asked for; then [DONE]."""
                options = body.get("stream_options") or {}
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for chunk in fake.stream_chunks(completion, bool(options.get("include_usage"))):
                    data = f"data: {json.dumps(chunk)}\n\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.write(b"6\r\ndata: \r\n")  # an event split across two chunks
                self.wfile.write(b"8\r\n[DONE]\n\n\r\n")
                self.wfile.write(b"0\r\n\r\n")

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # ------------------------------------------------------------ the script

    def answer(self, body: dict, authorization: str, host: str = "") -> dict:
        """The assistant message for this request."""
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        messages = body.get("messages") or []
        everything = "\n".join(_text(m.get("content")) for m in messages)
        if "submit_review" in tools:
            kind, message = "aide-review", self._aide_review(everything)
        elif "execute_bash" in tools or "<execute_bash>" in everything:
            kind, message = "openhands", self._openhands(messages, tools)
        else:
            kind, message = "aide-code", self._aide_code()
        with self._lock:
            self.requests.append(
                {
                    "kind": kind,
                    "model": body.get("model"),
                    "tools": tools,
                    "authorization": authorization,
                    "host": host,
                    "stream": body.get("stream") is True,
                    "at": time.time(),
                }
            )
        return message

    def _aide_code(self) -> dict:
        return {"role": "assistant", "content": f"{AIDE_PLAN}\n\n```python\n{WINE_SOLUTION}```\n"}

    def _aide_review(self, prompt: str) -> dict:
        found = re.findall(r"Validation log loss: ([0-9.]+)", prompt)
        review = {
            "is_bug": not found,
            "summary": "Logistic regression on standardised features; cross-validated log "
            "loss reported."
            if found
            else "The script printed no validation log loss: fix the error shown.",
            "metric": float(found[-1]) if found else None,
            "lower_is_better": True,
        }
        return _tool_message("submit_review", review)

    def _openhands(self, messages: list[dict], tools: list[str]) -> dict:
        """Write the script, run it, finish: the turn is how many times the agent spoke."""
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if tools:
            if turn == 0:
                return _tool_message(
                    "str_replace_editor",
                    {"command": "create", "path": OPENHANDS_SCRIPT, "file_text": WINE_SOLUTION},
                    "I will write a logistic-regression solution.",
                )
            if turn == 1:
                return _tool_message(
                    "execute_bash", {"command": OPENHANDS_RUN}, "Now I run it and validate."
                )
            return _tool_message(
                "finish", {"message": "The submission is written and valid."}, "Done."
            )
        if turn == 0:
            script = f"mkdir -p /home/code && cat > {OPENHANDS_SCRIPT} << 'MLEBOARD_EOF'\n{WINE_SOLUTION}MLEBOARD_EOF"
            content = f"I will write a logistic-regression solution.\n<execute_bash>\n{script}\n</execute_bash>"
        elif turn == 1:
            content = (
                f"Now I run it and validate.\n<execute_bash>\n{OPENHANDS_RUN}\n</execute_bash>"
            )
        elif turn == 2:
            content = (
                "A last look at the submission.\n"
                f"<execute_ipython>\n{OPENHANDS_LOOK}\n</execute_ipython>"
            )
        else:
            content = "The submission is written and valid.\n<finish></finish>"
        return {"role": "assistant", "content": content}

    def completion(self, body: dict, message: dict) -> dict:
        """The whole answer, with a usage made up from the texts' lengths (and recorded in
        ``usage_served`` unless it is a stream that will not carry it)."""
        prompt = sum(len(_text(m.get("content"))) for m in body.get("messages") or [])
        answer = len(message.get("content") or "") + sum(
            len(c["function"]["arguments"]) for c in message.get("tool_calls") or []
        )
        usage = {
            "prompt_tokens": 7 + prompt // 3,
            "completion_tokens": 3 + answer // 5,
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        options = body.get("stream_options") or {}
        if body.get("stream") is not True or options.get("include_usage"):
            with self._lock:
                self.usage_served.append(usage)
        return {
            "id": f"chatcmpl-fake-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or "fake-llm",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": usage,
        }

    @staticmethod
    def stream_chunks(completion: dict, include_usage: bool) -> list[dict]:
        """``completion`` as OpenAI streams it."""
        choice = completion["choices"][0]
        message = choice["message"]

        def chunk(delta: dict, finish=None, choices=True) -> dict:
            out = {k: completion[k] for k in ("id", "created", "model")}
            out["object"] = "chat.completion.chunk"
            out["choices"] = (
                [{"index": 0, "delta": delta, "finish_reason": finish}] if choices else []
            )
            return out

        chunks = [chunk({"role": "assistant", "content": ""})]
        content = message.get("content") or ""
        for start in range(0, len(content), 40):
            chunks.append(chunk({"content": content[start : start + 40]}))
        for index, call in enumerate(message.get("tool_calls") or []):
            chunks.append(chunk({"tool_calls": [{"index": index, **call}]}))
        chunks.append(chunk({}, finish=choice["finish_reason"]))
        if include_usage:
            last = chunk({}, choices=False)
            last["usage"] = completion["usage"]
            chunks.append(last)
        return chunks


def _tool_message(name: str, arguments: dict, content: str | None = None) -> dict:
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }
