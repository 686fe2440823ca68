"""Nothing outside the ``webapp.work`` package writes the status of work: every move goes through the
calls of ``webapp.work.lifecycle``, which follow the declared transition tables. Before
these rules, 28 places in 7 modules wrote statuses by hand, each resetting different
fields and deciding "attempts spent?" its own way.

The source is read with ``ast``: ``.update(status=…)`` / ``.update(state=…)`` (and the
same keys in ``update_or_create``/``get_or_create`` defaults or ``bulk_update`` field
lists), ``x.status = …`` in a function that saves, and raw SQL that sets a status."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "webapp" / "work"
STATUS_FIELDS = {"status", "state"}
WRITES = {"update", "update_or_create", "get_or_create", "bulk_update"}
RAW_SQL = re.compile(r"\bSET\b[^;]*\b(status|state)\s*=", re.IGNORECASE | re.DOTALL)

# Fields named like a status that are not work: what a reason is about, not a lifecycle.
ALLOWED = {
    # A run host's up/down is its liveness (its runs' statuses move through webapp.work).
    ("webapp/runs/hosts.py", "state"),
}


def _sources() -> list[Path]:
    return sorted(
        p
        for p in (REPO / "webapp").rglob("*.py")
        if WORK not in p.parents and "migrations" not in p.parts
    )


def _keys(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Dict):
        return {k.value for k in node.keys if isinstance(k, ast.Constant)}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return {k.arg for k in node.keywords if k.arg}
    return set()


def status_writes(source: str, path: str) -> list[str]:
    """Each status write in ``source``, as "path:line: what"."""
    tree = ast.parse(source)
    found = []

    def hit(node: ast.AST, what: str, field: str) -> None:
        if (path, field) not in ALLOWED:
            found.append(f"{path}:{node.lineno}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in WRITES:
                for kw in node.keywords:
                    if kw.arg in STATUS_FIELDS:
                        hit(node, f".{name}({kw.arg}=...)", kw.arg)
                    elif kw.arg == "defaults":
                        for key in _keys(kw.value) & STATUS_FIELDS:
                            hit(node, f".{name}(defaults={{{key!r}: ...}})", key)
                    elif kw.arg is None:  # **fields: a dict literal spelled out
                        for key in _keys(kw.value) & STATUS_FIELDS:
                            hit(node, f".{name}(**{{{key!r}: ...}})", key)
                if name == "bulk_update":
                    for arg in node.args[1:2]:
                        if isinstance(arg, ast.List | ast.Tuple):
                            for elt in arg.elts:
                                if isinstance(elt, ast.Constant) and elt.value in STATUS_FIELDS:
                                    hit(node, f"bulk_update([{elt.value!r}])", elt.value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if RAW_SQL.search(node.value):
                hit(node, "raw SQL setting a status", "status")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            saves = any(
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr in {"save", "bulk_update"}
                for n in ast.walk(node)
            )
            if not saves:
                continue
            for n in ast.walk(node):
                if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign):
                    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                    for t in targets:
                        if isinstance(t, ast.Attribute) and t.attr in STATUS_FIELDS:
                            hit(n, f".{t.attr} = ... then save()", t.attr)
    return found


def test_no_status_is_written_outside_webapp_work():
    found = []
    for path in _sources():
        found += status_writes(path.read_text(), str(path.relative_to(REPO)))
    assert not found, (
        "write statuses through webapp.work (claim, finish, fail, release, retry_or_fail, "
        "restart, move) so that the transition tables hold:\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    "source",
    [
        "Run.objects.filter(pk=1).update(status='queued')",
        "Run.objects.filter(pk=1).update(error='', state=State.DONE)",
        "Run.objects.update_or_create(pk=1, defaults={'status': 'queued'})",
        "Run.objects.filter(pk=1).update(**{'status': 'queued'})",
        "Run.objects.bulk_update(rows, ['status'])",
        "def f(run):\n    run.status = 'graded'\n    run.save()",
        "cursor.execute('UPDATE results_run SET error = %s, status = %s WHERE id = %s')",
    ],
)
def test_the_scan_finds_each_way_of_writing_a_status(source):
    assert status_writes(source, "x.py")


@pytest.mark.parametrize(
    "source",
    [
        "Run.objects.filter(status='queued').update(dispatched_at=None)",
        "Response({'error': 'no'}, status=400)",
        "def __init__(self, status):\n    self.status = status",
        "cursor.execute('SELECT status FROM results_run')",
    ],
)
def test_the_scan_lets_reads_and_other_statuses_be(source):
    assert not status_writes(source, "x.py")
