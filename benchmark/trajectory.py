"""AIDE's search tree, read from the ``journal.json`` its runs leave under ``logs/``.

aideml writes ``{"nodes": [...], "node2parent": {child: parent}, "__version": "2"}``
(``aide/utils/serialize.py``), each node a ``Node`` (``id``, ``step``, ``plan``, ``code``,
``_term_out``, ``exec_time``, ``metric``, ``is_buggy``, ``analysis``, ``ctime``...).
Journals that give ``parent`` as an id or a node, ``children`` as ids, or ``term_out`` as a
string are read too. A node is a *draft* (no parent), a *debug* (its parent is buggy) or an
*improve* (its parent works). Nothing here knows Django.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

MAX_JOURNAL_BYTES = 64 * 1024 * 1024
MAX_NODES = 20_000


class JournalError(ValueError):
    """The journal cannot be read; the message says why."""


@dataclass
class TreeNode:
    id: str
    step: int
    parent: str | None
    kind: str  # draft | debug | improve
    plan: str
    code: str
    term_out: str
    exec_time: float | None
    metric: float | None
    maximize: bool | None
    is_buggy: bool
    analysis: str
    ctime: float | None
    children: list[str] = field(default_factory=list)
    on_best_path: bool = False


@dataclass
class Trajectory:
    nodes: list[TreeNode]
    best: str | None  # the best working node's id
    maximize: bool | None
    best_so_far: list[dict]  # [{"elapsed_s", "metric", "node"}], in creation order
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "nodes": [asdict(n) for n in self.nodes],
            "best": self.best,
            "maximize": self.maximize,
            "best_so_far": self.best_so_far,
            "warnings": self.warnings,
        }


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return str(value)


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _ref(value) -> str | None:
    if isinstance(value, dict):
        value = value.get("id")
    if value is None or value == "":
        return None
    return str(value)


def parse_journal_text(text: str) -> Trajectory:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise JournalError(f"journal.json is not valid JSON: {error}") from None
    return parse_journal(data)


def read_journal(path: Path, max_bytes: int = MAX_JOURNAL_BYTES) -> Trajectory:
    size = path.stat().st_size
    if size > max_bytes:
        raise JournalError(f"journal.json is {size:,} bytes, over the {max_bytes:,} bytes read")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise JournalError(f"journal.json is not UTF-8: {error}") from None
    return parse_journal_text(text)


def parse_journal(data) -> Trajectory:
    """The tree of an AIDE journal already decoded from JSON."""
    if isinstance(data, list):
        raw_nodes = data
        node2parent = {}
    elif isinstance(data, dict) and isinstance(data.get("nodes"), list):
        raw_nodes = data["nodes"]
        node2parent = data.get("node2parent") if isinstance(data.get("node2parent"), dict) else {}
    else:
        raise JournalError('journal.json holds no "nodes" list (AIDE writes {"nodes": [...]})')
    if len(raw_nodes) > MAX_NODES:
        raise JournalError(f"journal.json has {len(raw_nodes):,} nodes, over {MAX_NODES:,}")
    warnings: list[str] = []
    nodes: list[TreeNode] = []
    by_id: dict[str, TreeNode] = {}
    declared_children: dict[str, list[str]] = {}
    skipped = 0
    for position, raw in enumerate(raw_nodes):
        if not isinstance(raw, dict):
            skipped += 1
            continue
        node_id = _ref(raw.get("id")) or f"node-{position}"
        if node_id in by_id:
            node_id = f"{node_id}-{position}"
        metric = raw.get("metric")
        value = maximize = None
        if isinstance(metric, dict):
            value = _number(metric.get("value"))
            maximize = metric.get("maximize") if isinstance(metric.get("maximize"), bool) else None
        else:
            value = _number(metric)
        step = raw.get("step")
        term_out = raw.get("_term_out", raw.get("term_out"))
        node = TreeNode(
            id=node_id,
            step=step if isinstance(step, int) and not isinstance(step, bool) else position,
            parent=_ref(raw.get("parent")) or _ref(node2parent.get(node_id)),
            kind="draft",
            plan=_text(raw.get("plan")),
            code=_text(raw.get("code")),
            term_out=_text(term_out),
            exec_time=_number(raw.get("exec_time")),
            metric=value,
            maximize=maximize,
            is_buggy=bool(raw.get("is_buggy"))
            if raw.get("is_buggy") is not None
            else value is None,
            analysis=_text(raw.get("analysis")),
            ctime=_number(raw.get("ctime")),
        )
        children = raw.get("children")
        if isinstance(children, list) and children:
            declared_children[node_id] = [c for c in (_ref(c) for c in children) if c]
        nodes.append(node)
        by_id[node_id] = node
    if skipped:
        warnings.append(f"{skipped} entries of nodes are not objects and were skipped")
    for parent_id, kids in declared_children.items():
        for kid in kids:
            if kid in by_id and by_id[kid].parent is None:
                by_id[kid].parent = parent_id
    for node in nodes:
        if node.parent is not None and node.parent not in by_id:
            warnings.append(
                f"node {node.id} names parent {node.parent}, which is not in the journal"
            )
            node.parent = None
    _break_cycles(nodes, by_id, warnings)
    for node in nodes:
        if node.parent is None:
            node.kind = "draft"
        else:
            parent = by_id[node.parent]
            parent.children.append(node.id)
            node.kind = "debug" if parent.is_buggy else "improve"
    maximize = next((n.maximize for n in nodes if n.maximize is not None), None)
    best = _best(nodes, maximize)
    if best is not None:
        current: str | None = best.id
        while current is not None:
            by_id[current].on_best_path = True
            current = by_id[current].parent
    return Trajectory(
        nodes=nodes,
        best=best.id if best else None,
        maximize=maximize,
        best_so_far=_best_so_far(nodes, maximize),
        warnings=warnings,
    )


def _break_cycles(nodes: list[TreeNode], by_id: dict[str, TreeNode], warnings: list[str]) -> None:
    for node in nodes:
        seen = {node.id}
        current = node.parent
        while current is not None:
            if current in seen:
                warnings.append(f"node {node.id}'s ancestry loops; it is drawn as a draft")
                node.parent = None
                break
            seen.add(current)
            current = by_id[current].parent


def _better(a: float, b: float, maximize: bool | None) -> bool:
    return a < b if maximize is False else a > b


def _best(nodes: list[TreeNode], maximize: bool | None) -> TreeNode | None:
    best = None
    for node in nodes:
        if node.is_buggy or node.metric is None:
            continue
        if best is None or _better(node.metric, best.metric, maximize):
            best = node
    return best


def _best_so_far(nodes: list[TreeNode], maximize: bool | None) -> list[dict]:
    timed = sorted(
        (n for n in nodes if n.ctime is not None), key=lambda n: (n.ctime, n.step)
    ) or sorted(nodes, key=lambda n: n.step)
    start = timed[0].ctime if timed and timed[0].ctime is not None else None
    points = []
    best: float | None = None
    for node in timed:
        if not node.is_buggy and node.metric is not None:
            if best is None or _better(node.metric, best, maximize):
                best = node.metric
        if best is None:
            continue
        elapsed = node.ctime - start if start is not None and node.ctime is not None else None
        points.append({"elapsed_s": elapsed, "step": node.step, "metric": best, "node": node.id})
    return points
