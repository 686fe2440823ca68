"""Every seek the server makes goes through ``benchmark.file_seek.seek_clamped``: an
unclamped ``.seek(`` to an offset a person gave (``?offset=`` on the timeline) answered
a 500 once. Only seeks with literal arguments (``seek(0, os.SEEK_END)``) may be written
raw. The command-line client (``cli/``) seeks in files it reads itself and is left out."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELPER = ROOT / "benchmark" / "file_seek.py"


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    # os.SEEK_END and friends
    return isinstance(node, ast.Attribute) and node.attr.startswith("SEEK_")


def _offences(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "seek"
            and not all(_literal(arg) for arg in node.args)
        ):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_computed_seek_is_clamped():
    offences = [
        offence
        for folder in ("webapp", "benchmark", "runner", "graders")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != HELPER
        for offence in _offences(path)
    ]
    assert not offences, (
        "seek to a computed offset with benchmark.file_seek.seek_clamped (an offset past "
        "the end or past what the system can seek to is a server error):\n" + "\n".join(offences)
    )


def test_the_rule_sees_a_raw_seek(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f(h, n):\n    h.seek(0, 2)\n    h.seek(n)\n")
    assert [o.rsplit(":", 1)[1] for o in _offences_at(sample)] == ["3"]


def _offences_at(path: Path) -> list[str]:
    global ROOT
    saved, ROOT = ROOT, path.parent
    try:
        return _offences(path)
    finally:
        ROOT = saved
