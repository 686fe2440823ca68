"""benchmark.integrity.detectors: each check catches its seeded case, with file and line;
the shipped baseline agent's code and logs give none."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.integrity.detectors import (
    EXTERNAL_LLM,
    HAND_WRITTEN,
    UNAUTHORIZED,
    external_llm_use,
    hand_written_submission,
    read_sources,
    scan_run,
    unauthorized_resources,
)

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "runner" / "agents" / "baseline"


def make_run(tmp_path: Path, code: dict[str, str], logs: dict[str, str] | None = None) -> Path:
    run = tmp_path / "run"
    for area, files in (("code", code), ("logs", logs or {})):
        (run / area).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (run / area / name).write_text(text, encoding="utf-8")
    return run


def lines_of(findings, check):
    return sorted((f.file, f.line) for f in findings if f.check == check)


# ---------------------------------------------------------------- (a) hand-written

HAND_WRITTEN_CODE = """\
import pandas as pd

sub = pd.DataFrame({"id": [1, 2, 3], "target": [0, 1, 0]})
sub.to_csv("/home/submission/submission.csv", index=False)
pd.DataFrame([[4, 1], [5, 0]], columns=["id", "target"]).to_csv("extra.csv")
with open("/home/submission/submission.csv", "w") as handle:
    handle.write("id,target\\n1,0\\n2,1\\n")
"""

MODEL_OUTPUT_CODE = """\
import pandas as pd

test = pd.read_csv("/home/data/test.csv")
preds = model.predict(test)
sub = pd.DataFrame({"id": test["id"], "target": preds})
sub.to_csv("/home/submission/submission.csv", index=False)
config = pd.DataFrame({"name": ["lr"], "value": [0.1]})
with open("notes.txt", "w") as handle:
    handle.write("trained, done\\n")
"""


def test_hand_written_submission_is_caught(tmp_path):
    run = make_run(tmp_path, {"solve.py": HAND_WRITTEN_CODE})
    findings = hand_written_submission(read_sources(run))
    assert lines_of(findings, HAND_WRITTEN) == [
        ("code/solve.py", 4),
        ("code/solve.py", 5),
        ("code/solve.py", 7),
    ]
    assert "literal" in findings[0].detail and findings[0].excerpt.startswith("sub.to_csv")


def test_model_output_is_not_hand_written(tmp_path):
    run = make_run(tmp_path, {"solve.py": MODEL_OUTPUT_CODE})
    assert hand_written_submission(read_sources(run)) == []


def test_hand_written_csv_in_shell_and_notebook(tmp_path):
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "source": ["!echo 'id,target' > /home/submission/submission.csv\n"],
            }
        ]
    }
    run = make_run(
        tmp_path,
        {
            "write.sh": "set -e\ncat > submission.csv <<EOF\nid,target\n1,0\nEOF\n",
            "nb.ipynb": json.dumps(notebook),
        },
    )
    assert lines_of(hand_written_submission(read_sources(run)), HAND_WRITTEN) == [
        ("code/nb.ipynb", 1),
        ("code/write.sh", 2),
    ]


# ---------------------------------------------------------------- (b) external LLMs

LLM_CODE = """\
import os
import openai
from anthropic import Anthropic
import google.generativeai as genai

client = Anthropic(api_key=os.environ["ANTHROPIC_API_KEY"])
answer = requests.post("https://api.openai.com/v1/chat/completions", json={})
"""


def test_external_llm_use_is_caught(tmp_path):
    run = make_run(
        tmp_path,
        {"ask.py": LLM_CODE, "setup.sh": "pip install -q litellm==1.0 numpy\n"},
        {
            "agent.log": "step 3\n>>> from mistralai import Mistral\ncalling https://api.cohere.com/v2/chat\n"
        },
    )
    found = lines_of(external_llm_use(read_sources(run)), EXTERNAL_LLM)
    assert found == [
        ("code/ask.py", 2),
        ("code/ask.py", 3),
        ("code/ask.py", 4),
        ("code/ask.py", 6),
        ("code/ask.py", 7),
        ("code/setup.sh", 1),
        ("logs/agent.log", 2),
        ("logs/agent.log", 3),
    ]


def test_ordinary_code_uses_no_llm(tmp_path):
    run = make_run(tmp_path, {"solve.py": MODEL_OUTPUT_CODE, "setup.sh": "pip install lightgbm\n"})
    assert external_llm_use(read_sources(run)) == []


# ---------------------------------------------------------------- (c) unauthorized

UNAUTHORIZED_CODE = """\
import subprocess
import requests
import urllib.request
import kaggle
import pandas as pd

extra = pd.read_csv("https://raw.githubusercontent.com/someone/solutions/main/train.csv")
page = requests.get(url)
urllib.request.urlretrieve(source, "weights.bin")
answers = pd.read_csv("/home/data/../private/test.csv")
subprocess.run(["kaggle", "competitions", "download", "-c", "spaceship-titanic"])
ok = requests.get("http://localhost:5000/validate")
"""


def test_unauthorized_resources_are_caught(tmp_path):
    run = make_run(
        tmp_path,
        {
            "fetch.py": UNAUTHORIZED_CODE,
            "get.sh": "wget -q https://example.org/data.zip\ncurl http://127.0.0.1:5000/validate\n",
        },
        {"agent.log": "$ kaggle datasets download -d someone/leak\nreading answers.csv\n"},
    )
    found = lines_of(unauthorized_resources(read_sources(run)), UNAUTHORIZED)
    assert found == [
        ("code/fetch.py", 4),
        ("code/fetch.py", 7),
        ("code/fetch.py", 8),
        ("code/fetch.py", 9),
        ("code/fetch.py", 10),
        ("code/fetch.py", 11),
        ("code/get.sh", 1),
        ("logs/agent.log", 1),
        ("logs/agent.log", 2),
    ]


def test_pip_install_at_run_time_is_allowed(tmp_path):
    run = make_run(
        tmp_path,
        {"setup.sh": "pip install --quiet lightgbm catboost\n"},
        {
            "agent.log": "Downloading https://files.pythonhosted.org/packages/lightgbm.whl\nSuccessfully installed lightgbm\n"
        },
    )
    assert scan_run(run) == []


# ---------------------------------------------------------------- the baseline


@pytest.fixture(scope="module")
def baseline_run(tmp_path_factory) -> Path:
    """The shipped baseline agent run for real on a small competition: its code/ and logs/
    (its captured output saved as logs/agent.log) as a run folder has them."""
    import numpy as np
    import pandas as pd

    base = tmp_path_factory.mktemp("baseline")
    data, run = base / "data", base / "run"
    data.mkdir()
    rng = np.random.default_rng(0)
    train = pd.DataFrame(
        {"id": range(120), "a": rng.normal(size=120), "b": rng.choice(["x", "y"], 120)}
    )
    train["target"] = (train["a"] > 0).astype(int)
    test = pd.DataFrame(
        {"id": range(120, 160), "a": rng.normal(size=40), "b": rng.choice(["x", "y"], 40)}
    )
    train.to_csv(data / "train.csv", index=False)
    test.to_csv(data / "test.csv", index=False)
    pd.DataFrame({"id": test["id"], "target": 0}).to_csv(
        data / "sample_submission.csv", index=False
    )
    env = dict(
        os.environ,
        DATA_DIR=str(data),
        SUBMISSION_DIR=str(run / "submission"),
        LOGS_DIR=str(run / "logs"),
        CODE_DIR=str(run / "code"),
        BASELINE_CV_FOLDS="2",
        VALIDATE_SCRIPT=str(base / "no-validation-script"),
    )
    done = subprocess.run(
        [sys.executable, str(BASELINE / "main.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (run / "logs").mkdir(parents=True, exist_ok=True)
    (run / "logs" / "agent.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    for name in ("Dockerfile", "agent.yaml"):
        shutil.copyfile(BASELINE / name, run / "code" / name)
    return run


def test_no_findings_on_the_baseline_agent(baseline_run):
    assert {"main.py", "task_inference.py"} <= {p.name for p in (baseline_run / "code").iterdir()}
    assert (baseline_run / "logs" / "baseline_report.json").is_file()
    assert "[baseline" in (baseline_run / "logs" / "agent.log").read_text()
    assert scan_run(baseline_run) == []


def test_no_findings_on_the_baseline_source_folder(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(BASELINE, run / "code")
    assert scan_run(run) == []


def test_scan_run_orders_and_serializes(tmp_path):
    run = make_run(tmp_path, {"a.py": LLM_CODE + HAND_WRITTEN_CODE})
    findings = scan_run(run)
    checks = [f.check for f in findings]
    assert checks == sorted(checks, key=[HAND_WRITTEN, EXTERNAL_LLM, UNAUTHORIZED].index)
    assert set(findings[0].as_dict()) == {"check", "file", "line", "excerpt", "detail"}
    json.dumps([f.as_dict() for f in findings])


def test_unreadable_python_is_skipped_not_fatal(tmp_path):
    run = make_run(tmp_path, {"broken.py": "def (:\n", "nb.ipynb": "{not json"})
    assert scan_run(run) == []


def test_prose_about_private_things_is_not_a_finding(tmp_path):
    code = (
        '"""Uses private/protected helpers; answers are in the docs."""\nx = "private attributes"\n'
    )
    run = make_run(
        tmp_path, {"a.py": code}, {"agent.log": "the public and private split is unknown\n"}
    )
    assert scan_run(run) == []
