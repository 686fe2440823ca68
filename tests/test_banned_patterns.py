"""Patterns that caused trouble once, banned by rules the suite runs (each with its reason).

* ``time.sleep`` in tests: a fixed sleep standing in for time passing makes a test slow on
  an idle machine and flaky on a busy one (the stale time is not reached yet, the worker
  has not beaten yet). Backdate the heartbeat or the timestamp, inject the clock, or poll
  the condition with a deadline (``tests.polling.wait_until``). The few sleeps that are
  not waits are listed below with why; the programs under ``tests/agents/`` run as agents
  and are not scanned.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
NOT_SCANNED = (TESTS / "agents",)

# (file, enclosing function) -> why a sleep there is not a wait for time to pass.
SLEEP_ALLOWED = {
    ("tests/polling.py", "wait_until"): "the polling helper: bounded by its deadline",
    (
        "tests/webapp/test_hosts.py",
        "test_no_gpu_is_held_twice_under_concurrent_claims.worker",
    ): "random jitter that interleaves concurrent claims in many orders",
}


def sleep_calls(source: str) -> list[tuple[str, int]]:
    """Each call of ``time.sleep`` (or ``sleep`` imported from ``time``) in ``source``:
    (the enclosing functions joined with ".", line)."""
    tree = ast.parse(source)
    sleep_names = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "time"
        for alias in node.names
        if alias.name == "sleep"
    }
    time_names = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == "time"
    }
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, where: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = [*where, child.name]
            if isinstance(child, ast.Call):
                func = child.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr == "sleep"
                    and isinstance(func.value, ast.Name)
                    and func.value.id in time_names
                ) or (isinstance(func, ast.Name) and func.id in sleep_names):
                    found.append((".".join(where), child.lineno))
            visit(child, inner)

    visit(tree, [])
    return found


def _test_files() -> list[Path]:
    return [
        path
        for path in sorted(TESTS.rglob("*.py"))
        if not any(path.is_relative_to(skip) for skip in NOT_SCANNED)
    ]


def test_no_fixed_sleep_stands_in_for_time_passing():
    offenders, used = [], set()
    for path in _test_files():
        rel = path.relative_to(ROOT).as_posix()
        for where, line in sleep_calls(path.read_text(encoding="utf-8")):
            if (rel, where) in SLEEP_ALLOWED:
                used.add((rel, where))
            else:
                offenders.append(f"{rel}:{line} in {where or 'the module'}")
    assert not offenders, (
        "time.sleep in a test: backdate the heartbeat or timestamp, inject the clock, or poll "
        "the condition with tests.polling.wait_until:\n" + "\n".join(offenders)
    )
    assert used == set(SLEEP_ALLOWED), f"allowed but gone (remove): {set(SLEEP_ALLOWED) - used}"


def test_the_rule_sees_every_spelling_of_a_sleep():
    source = (
        "import time\nimport time as clock\nfrom time import sleep\nfrom time import sleep as nap\n"
        "def test_a():\n    time.sleep(5)\n"
        "class TestB:\n    def test_b(self):\n        clock.sleep(1)\n"
        "def test_c():\n    sleep(1); nap(2)\n"
        "CODE = 'import time; time.sleep(60)'  # an agent's program, as text: not a call\n"
    )
    assert sleep_calls(source) == [
        ("test_a", 6),
        ("TestB.test_b", 9),
        ("test_c", 11),
        ("test_c", 11),
    ]


# --- skips ------------------------------------------------------------------------------
# A skipped test proves nothing: a test whose service is missing fails
# (``tests.services.missing``), everywhere.


def test_no_test_skips():
    offenders = [
        f"{path.relative_to(ROOT).as_posix()}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.relative_to(ROOT).as_posix() != "tests/test_banned_patterns.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(banned in line for banned in SKIPS)
    ]
    assert not offenders, (
        "a skipped test passes for one that proved nothing: call "
        "tests.services.missing(what), which fails:\n" + "\n".join(offenders)
    )


SKIPS = ("pytest.skip(", "mark.skip", "importorskip(", "pytest.xfail(", "mark.xfail")


# --- text the project ships ---------------------------------------------------------------


def _tracked_text() -> list[tuple[str, str]]:
    import subprocess

    names = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    files = []
    for name in filter(None, names):
        path = ROOT / name.decode()
        try:
            files.append((name.decode(), path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary files, files deleted in the working tree
    return files


def test_no_shipped_text_names_a_path_of_one_machine():
    """A path of the machine the project was written on means nothing on a newcomer's:
    name a package by its module (``webapp.work``), a file relative to the repository."""
    marker = "/" + "work" + "/"  # spelled so that this file does not match itself
    offenders = [
        f"{name}:{number}"
        for name, text in _tracked_text()
        if not name.startswith("tools/dolos/")
        for number, line in enumerate(text.splitlines(), 1)
        if marker in line or str(ROOT) in line
    ]
    assert not offenders, "a machine's path in shipped text:\n" + "\n".join(offenders)


def test_html_is_made_by_templates_not_marked_safe_in_python():
    """``mark_safe`` on a string built in Python skips the escaping a template gives every
    value: render a template instead (``render_to_string``)."""
    offenders = [
        f"{path.relative_to(ROOT).as_posix()}:{number}"
        for path in sorted((ROOT / "webapp").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "mark_safe" in line
    ]
    assert not offenders, "\n".join(offenders)
