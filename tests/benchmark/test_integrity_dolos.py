"""Our similarity against Dolos itself (``@dodona/dolos-lib``, pinned in tools/dolos/).

Needs Node and ``npm ci --prefix tools/dolos``, which the README's test command installs
(scripts/test-deps.sh); without them the test fails, it is never skipped.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmark.integrity.winnowing import python_tokens, similarity
from tests.benchmark.integrity_corpus import PAIRS

ROOT = Path(__file__).resolve().parents[2]
DOLOS_DIR = ROOT / "tools" / "dolos"
SCRIPT = DOLOS_DIR / "dolos_pairs.mjs"
TOLERANCE = 0.02


def _dolos(request: dict) -> dict:
    node = shutil.which("node")
    installed = (DOLOS_DIR / "node_modules" / "@dodona" / "dolos-lib").is_dir()
    if node is None or not installed:
        why = "node is not installed" if node is None else "run npm ci --prefix tools/dolos"
        pytest.fail(f"Dolos is missing ({why}): `make test` installs it")
    done = subprocess.run(
        [node, str(SCRIPT)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=DOLOS_DIR,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def dolos_pairs() -> dict:
    names = sorted(PAIRS)
    answer = _dolos({"pairs": [{"a": PAIRS[n][0], "b": PAIRS[n][1]} for n in names]})
    return {
        name: (value, fragments)
        for name, value, fragments in zip(
            names, answer["similarities"], answer["fragments"], strict=True
        )
    }


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_pair_similarity_agrees_with_dolos(dolos_pairs, name):
    expected, _ = dolos_pairs[name]
    ours = similarity(*PAIRS[name], "python").similarity
    assert abs(ours - expected) <= TOLERANCE, (name, ours, expected)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_fragments_agree_with_dolos(dolos_pairs, name):
    _, expected = dolos_pairs[name]
    ours = similarity(*PAIRS[name], "python").fragments
    assert sorted((list(f.a_lines), list(f.b_lines)) for f in ours) == sorted(
        (f["a"], f["b"]) for f in expected
    )


def test_token_streams_are_dolos_own():
    files = [ROOT / "runner" / "agents" / "baseline" / "main.py", ROOT / "benchmark" / "medals.py"]
    texts = [p.read_text(encoding="utf-8") for p in files] + [PAIRS["partial"][1]]
    answer = _dolos({"tokens": texts})
    for text, tokens in zip(texts, answer["tokens"], strict=True):
        assert python_tokens(text)[0] == tokens
