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
seen) so that a test can check what reached it. Nothing here leaves 127.0.0.1.
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

    def __init__(self) -> None:
        self.requests: list[dict] = []
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
                message = fake.answer(body, self.headers.get("Authorization", ""))
                self._send(200, fake.completion(body, message))

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

    def answer(self, body: dict, authorization: str) -> dict:
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

    @staticmethod
    def completion(body: dict, message: dict) -> dict:
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
            "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
        }


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
