"""Patterns that caused trouble once, banned by rules the suite runs (each with its reason).

* ``time.sleep`` in tests: a fixed sleep standing in for time passing makes a test slow on
  an idle machine and flaky on a busy one (the stale time is not reached yet, the worker
  has not beaten yet). Backdate the heartbeat or the timestamp, inject the clock, or poll
  the condition with a deadline (``tests.support.polling.wait_until``). The few sleeps that are
  not waits are listed below with why; the programs under ``tests/agents/`` run as agents
  and are not scanned.
* An assertion on a measured speed (``assert took_ms < 1000``): a busy machine makes it
  fail while nothing is wrong (a run page's tree "drawn within a second" took 2.1 s with
  the request, on two cores kept busy). Speed is measured by the scripts in ``perf/``,
  which print it; a test prints a figure, or checks a deadline the system itself promises
  (listed below with why).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
NOT_SCANNED = (TESTS / "agents",)

# (file, enclosing function) -> why a sleep there is not a wait for time to pass.
SLEEP_ALLOWED = {
    ("tests/support/polling.py", "wait_until"): "the polling helper: bounded by its deadline",
    (
        "tests/webapp/runs/test_hosts.py",
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
    return [
        (where, node.lineno)
        for node, where in _nodes_where(tree)
        if isinstance(node, ast.Call)
        and (
            (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "sleep"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in time_names
            )
            or (isinstance(node.func, ast.Name) and node.func.id in sleep_names)
        )
    ]


def _nodes_where(tree: ast.AST, where: tuple[str, ...] = ()):
    """Every node under ``tree`` with the names of the functions and classes enclosing it,
    joined with "."."""
    for child in ast.iter_child_nodes(tree):
        yield child, ".".join(where)
        inner = where
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = (*where, child.name)
        yield from _nodes_where(child, inner)


def _test_files() -> list[Path]:
    return [
        path
        for path in sorted(TESTS.rglob("*.py"))
        if not any(path.is_relative_to(skip) for skip in NOT_SCANNED)
    ]


def _offenders(find, allowed: dict) -> tuple[list[str], set]:
    """Each place ``find(source)`` names in the test files that ``allowed`` does not list
    ("file:line in function"), and the listed places seen."""
    offenders, used = [], set()
    for path in _test_files():
        rel = path.relative_to(ROOT).as_posix()
        for where, line in find(path.read_text(encoding="utf-8")):
            if (rel, where) in allowed:
                used.add((rel, where))
            else:
                offenders.append(f"{rel}:{line} in {where or 'the module'}")
    return offenders, used


def test_no_fixed_sleep_stands_in_for_time_passing():
    offenders, used = _offenders(sleep_calls, SLEEP_ALLOWED)
    assert not offenders, (
        "time.sleep in a test: backdate the heartbeat or timestamp, inject the clock, or poll "
        "the condition with tests.support.polling.wait_until:\n" + "\n".join(offenders)
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


# --- speed asserted ----------------------------------------------------------------------

# (file, enclosing function) -> the deadline the system promises, which the assertion checks.
TIMED_ALLOWED = {
    (
        "tests/runner/test_adversary.py",
        "test_a_huge_sparse_submission_is_never_copied_and_ends_the_run",
    ): "the run ends at its time limit (20 s) instead of copying 10 GiB",
    (
        "tests/runner/test_adversary.py",
        "test_slow_snapshots_never_delay_the_time_limit",
    ): "slow snapshots never delay the time limit",
    (
        "tests/runner/test_docker_backend.py",
        "test_sleeping_past_the_time_limit_is_killed_and_timed_out",
    ): "a run is killed at its time limit",
    (
        "tests/runner/test_docker_backend.py",
        "test_cancel_stops_the_container_within_seconds",
    ): "a cancel stops the run within seconds",
    (
        "tests/runner/test_docker_backend.py",
        "test_a_reaper_can_remove_a_run_container_by_name",
    ): "the reaper removes a run's container at once, not after its time limit",
    (
        "tests/runner/test_local_backend.py",
        "test_sleeping_past_the_limit_is_timed_out_and_the_group_killed",
    ): "a run is killed at its time limit",
    (
        "tests/runner/test_local_backend.py",
        "test_cancel_stops_the_agent_within_seconds",
    ): "a cancel stops the run within seconds",
    (
        "tests/runner/test_local_backend.py",
        "test_a_huge_sparse_submission_is_never_copied_and_ends_the_run",
    ): "the run ends at its limit instead of copying 10 GiB",
    (
        "tests/runner/test_validation_service.py",
        "test_stop_is_prompt_with_connections_open",
    ): "open connections never hold the validation service's stop",
}
# Names that hold a measured time: a figure for perf/, not a bound for a test.
MEASURED = ("elapsed", "took")
CLOCKS = ("monotonic", "perf_counter", "time", "process_time")


def _measured(expr: ast.AST) -> bool:
    """``expr`` is a measured time: a name ending in ``_ms`` or named ``elapsed`` /
    ``took`` (or an attribute so named), or ``clock() - start``."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Sub):
        call = expr.left
        if isinstance(call, ast.Call):
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            return name in CLOCKS
        return False
    name = (
        expr.id
        if isinstance(expr, ast.Name)
        else expr.attr
        if isinstance(expr, ast.Attribute)
        else ""
    )
    return name.endswith("_ms") or name in MEASURED


def timed_assertions(source: str) -> list[tuple[str, int]]:
    """Each ``assert`` in ``source`` that orders a measured time (``<``, ``<=``, ``>``,
    ``>=``): (the enclosing functions joined with ".", line)."""
    ordering = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
    return [
        (where, node.lineno)
        for node, where in _nodes_where(ast.parse(source))
        if isinstance(node, ast.Assert)
        and any(
            isinstance(compare, ast.Compare)
            and any(isinstance(op, ordering) for op in compare.ops)
            and any(_measured(side) for side in [compare.left, *compare.comparators])
            for compare in ast.walk(node.test)
        )
    ]


def test_no_test_asserts_a_measured_speed():
    offenders, used = _offenders(timed_assertions, TIMED_ALLOWED)
    assert not offenders, (
        "a speed asserted in a test fails on a busy machine: print the figure (and measure "
        "it in perf/), or list a deadline the system promises in TIMED_ALLOWED:\n"
        + "\n".join(offenders)
    )
    assert used == set(TIMED_ALLOWED), f"allowed but gone (remove): {set(TIMED_ALLOWED) - used}"


def test_the_rule_sees_every_spelling_of_a_timed_assertion():
    source = (
        "import time\n"
        "def test_a():\n    assert render_ms < 1000 and total_ms < 1000\n"
        "def test_b():\n    assert elapsed < 5\n"
        "def test_c():\n    assert 2 > time.monotonic() - started\n"
        "def test_d():\n    assert page.took <= 3\n"
        "def test_e():\n    assert size < 5 and count == 2\n"  # not a time: ignored
        "def test_f():\n    assert elapsed == 5\n"  # not an ordering: ignored
    )
    assert timed_assertions(source) == [("test_a", 3), ("test_b", 5), ("test_c", 7), ("test_d", 9)]


# --- skips ------------------------------------------------------------------------------
# A skipped test proves nothing: a test whose service is missing fails
# (``tests.support.services.missing``), everywhere.


# What skips or expects a failure: pytest's skip, skipif, xfail and importorskip (called,
# as a mark, or imported by name) and unittest's skip decorators and skipTest.
SKIP_NAMES = {"skip", "skipif", "xfail", "importorskip", "skipTest", "skipIf", "skipUnless"}


def skips(source: str) -> list[tuple[str, int]]:
    """(enclosing function, line) of each skip in ``source``."""
    found = []
    for node, where in _nodes_where(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in SKIP_NAMES:
            found.append((where, node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module in ("pytest", "unittest"):
            if any(alias.name in SKIP_NAMES for alias in node.names):
                found.append((where, node.lineno))
    return sorted(found, key=lambda place: place[1])


def test_no_test_skips():
    offenders, _ = _offenders(skips, {})
    assert not offenders, (
        "a skipped test passes for one that proved nothing: call "
        "tests.support.services.missing(what), which fails:\n" + "\n".join(offenders)
    )


def test_the_rule_sees_every_spelling_of_a_skip():
    source = (
        "import pytest, unittest\n"
        "from pytest import importorskip as imp\n"
        "@pytest.mark.skipif(True, reason='r')\n"
        "def test_a():\n    pytest.skip('r')\n"
        "def test_b():\n    pytest.xfail('r')\n"
        "class T(unittest.TestCase):\n    def test_c(self):\n        self.skipTest('r')\n"
        "def test_d():\n    skip = 1\n    pytest.fail('not a skip')\n"
    )
    # A decorator counts in the function it decorates.
    expected = [("", 2), ("test_a", 3), ("test_a", 5), ("test_b", 7), ("T.test_c", 10)]
    assert skips(source) == expected


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


_DIGIT_TESTS = ("isdigit", "isnumeric", "isdecimal")


def unguarded_digit_tests(source: str) -> list[int]:
    """Lines calling ``x.isdigit()`` (or isnumeric, isdecimal) where the same ``and`` does
    not first ask ``x.isascii()``: those accept digits ``int`` refuses (``"²".isdigit()``),
    and a header ``Upload-Length: ²`` reached a 500."""
    tree = ast.parse(source)
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            ascii_of = set()
            for value in node.values:
                for call in ast.walk(value):
                    if (
                        isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Attribute)
                        and call.func.attr == "isascii"
                    ):
                        ascii_of.add(ast.dump(call.func.value))
                    elif (
                        isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Attribute)
                        and call.func.attr in _DIGIT_TESTS
                        and ast.dump(call.func.value) in ascii_of
                    ):
                        guarded.add(id(call))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _DIGIT_TESTS
        and id(node) not in guarded
    ]


def test_no_digit_test_takes_non_ascii_digits():
    offenders = [
        f"{path.relative_to(ROOT).as_posix()}:{line}"
        for package in ("webapp", "benchmark", "graders", "runner", "cli", "config")
        for path in sorted((ROOT / package).rglob("*.py"))
        for line in unguarded_digit_tests(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, (
        "a digit test that takes '²' (int() refuses it): ask x.isascii() and x.isdigit(), "
        "or match [0-9]:\n" + "\n".join(offenders)
    )


def test_the_digit_rule_sees_unguarded_tests():
    assert unguarded_digit_tests("ok = s.isdigit()\n") == [1]
    assert unguarded_digit_tests("ok = s.strip().isnumeric()\n") == [1]
    assert unguarded_digit_tests("ok = t.isascii() and s.isdigit()\n") == [1]
    assert unguarded_digit_tests("ok = s.isascii() and s.isdigit()\n") == []
    assert unguarded_digit_tests("ok = not (p[1].isascii() and p[1].isdecimal())\n") == []
