"""The layers import each other only along these arrows, read from the source by parsing
every import (inside functions too):

    webapp -> benchmark, graders, runner, config
    cli    -> benchmark, graders, runner, config
    benchmark -> graders, config
    runner -> graders (validation only), config
    graders -> config

``config`` (every environment variable, declared once, and its parsers) is at the bottom:
it imports none of them, and ``graders`` nothing else. Only ``webapp`` imports Django, DRF
or Celery. The agent folders under ``runner/agents/`` run inside containers and import
none of ours.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("benchmark", "cli", "config", "graders", "runner", "webapp")
FRAMEWORKS = ("django", "rest_framework", "drf_spectacular", "celery", "kombu")
ALLOWED = {
    "webapp": {"benchmark", "graders", "runner", "config"},
    "cli": {"benchmark", "graders", "runner", "config"},
    "benchmark": {"graders", "config"},
    "runner": {"graders", "config"},
    "graders": {"config"},
    "config": set(),
    "agents": set(),
}
# The only modules of runner that may use graders: the validation service the agent calls.
RUNNER_MODULES_USING_GRADERS = {"runner/validation_service.py"}


def _layer(path: Path) -> str:
    parts = path.relative_to(ROOT).parts
    return "agents" if parts[:2] == ("runner", "agents") else parts[0]


def _imported_modules(path: Path, *, names: bool = False) -> set[str]:
    """The modules ``path`` imports (inside functions too); with ``names``, also each
    name taken from a module as a possible submodule (``from webapp.edge import
    page_cache`` imports ``webapp.edge.page_cache``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the file's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            if not module:
                continue
            submodules = {
                f"{module}.{alias.name}"
                for alias in node.names
                if names and _is_module(f"{module}.{alias.name}")
            }
            found |= submodules
            # ``from package import submodule`` depends on the submodule (and only as any
            # import does, on its package's __init__).
            if len(submodules) < len(node.names):
                found.add(module)
    return found


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _source_files():
    for top in OURS:
        yield from sorted((ROOT / top).rglob("*.py"))


def _arrows() -> dict[tuple[str, str], set[str]]:
    arrows: dict[tuple[str, str], set[str]] = {}
    for path in _source_files():
        layer = _layer(path)
        for module in _imported_modules(path):
            top = module.split(".")[0]
            if (top in OURS or top in FRAMEWORKS) and top != layer:
                arrows.setdefault((layer, top), set()).add(str(path.relative_to(ROOT)))
    return arrows


def test_the_source_is_found():
    files = list(_source_files())
    assert len(files) > 100
    assert {_layer(p) for p in files} == set(ALLOWED)


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_along_its_arrows(layer):
    arrows = _arrows()
    allowed = ALLOWED[layer] | (set(FRAMEWORKS) if layer == "webapp" else set())
    wrong = {
        f"{layer} -> {target}: {', '.join(sorted(files))}"
        for (source, target), files in arrows.items()
        if source == layer and target not in allowed
    }
    assert not wrong, "\n".join(sorted(wrong))


def test_runner_uses_graders_for_validation_only():
    using = _arrows().get(("runner", "graders"), set())
    assert using <= RUNNER_MODULES_USING_GRADERS, using


def test_the_expected_arrows_exist():
    """The arrows above are used, so a parser that saw nothing would fail here."""
    arrows = _arrows()
    for edge in [
        ("webapp", "benchmark"),
        ("webapp", "runner"),
        ("cli", "benchmark"),
        ("cli", "runner"),
        ("benchmark", "graders"),
        ("runner", "graders"),
        ("webapp", "django"),
        ("webapp", "config"),
        ("runner", "config"),
        ("cli", "config"),
    ]:
        assert edge in arrows, edge


def test_relative_imports_are_resolved(tmp_path, monkeypatch):
    module = ROOT / "benchmark" / "_arrow_probe.py"
    monkeypatch.setattr(
        Path,
        "read_text",
        lambda self, encoding=None: "from .grading import x\nfrom ..runner import y\n",
    )
    assert _imported_modules(module) == {"benchmark.grading", "runner"}


# ---------------------------------------------------------------- the rooms inside webapp

# webapp's rooms, bottom first. A room imports only rooms below it (imports inside
# functions counted); the apps, one room, also only the apps before them:
#
#   core      policy and presentation every room asks: visibility, roles, refusals, bad
#             input, wording, formatting, rendering, the media space's margin, changes
#   figures   pure functions: data in, a Plotly figure out
#   apps      work <- liveness <- accounts <- competitions <- results <- runs <- integrity
#             <- corrections <- agentsubs
#   pages, edge, ops   pages that combine apps; serving (the page cache); operations
#             (sweeper, processes, status). Side by side: none imports another.
#   project   the wiring: settings, urls, celery, wsgi
#
# ``work`` is the machinery of every app's work and names no app (its declarations are
# registered by the apps); liveness holds the processes' heartbeats; competitions are the
# catalogue everything refers to; results hold experiments, runs and their grading; agent
# runs produce results; integrity checks read graded runs. An app lower down learns what
# one above adds through what that app registers when it is ready (``work.on_end``,
# ``webapp.results.extensions``, ``aggregates.reviewed_by``); apps tell the edge of changes
# through ``webapp.core.changes``.
APPS = (
    "work",
    "liveness",
    "accounts",
    "competitions",
    "results",
    "runs",
    "integrity",
    "corrections",
    "agentsubs",
)
ROOMS: dict[str, int] = {
    "core": 0,
    "figures": 1,
    **dict.fromkeys(APPS, 2),
    "pages": 3,
    "edge": 3,
    "ops": 3,
    "project": 4,
}
# webapp/ itself holds only __init__.py (the Celery app, for ``celery -A webapp``).
ROOT_MODULES = {"webapp/__init__.py"}


def _room(path: Path) -> str | None:
    parts = path.relative_to(ROOT).parts
    return parts[1] if parts[0] == "webapp" and len(parts) > 2 else None


def _webapp_imports(path: Path):
    """The rooms ``path`` imports from: (room, module)."""
    for module in _imported_modules(path):
        parts = module.split(".")
        if parts[0] == "webapp" and len(parts) > 1:
            yield parts[1], module


def _room_arrows() -> dict[tuple[str, str], set[str]]:
    arrows: dict[tuple[str, str], set[str]] = {}
    for path in sorted((ROOT / "webapp").rglob("*.py")):
        source = _room(path)
        if source is None or "migrations" in path.parts:
            continue
        for target, _module in _webapp_imports(path):
            if target != source:
                arrows.setdefault((source, target), set()).add(str(path.relative_to(ROOT)))
    return arrows


def _allowed(source: str, target: str) -> bool:
    if ROOMS[target] < ROOMS[source]:
        return True
    return ROOMS[source] == ROOMS[target] == 2 and APPS.index(target) < APPS.index(source)


def test_every_module_of_webapp_is_in_a_room():
    loose = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "webapp").glob("*.py")
        if str(path.relative_to(ROOT)) not in ROOT_MODULES
    }
    assert not loose, f"modules at webapp/ root, give each a room: {sorted(loose)}"
    rooms = {path.name for path in (ROOT / "webapp").iterdir() if (path / "__init__.py").exists()}
    assert rooms == set(ROOMS), f"packages of webapp/ not in ROOMS (or gone): {rooms ^ set(ROOMS)}"


def test_the_rooms_import_only_downwards():
    wrong = {
        f"{a} -> {b}: {', '.join(sorted(files))}"
        for (a, b), files in _room_arrows().items()
        if b in ROOMS and not _allowed(a, b)
    }
    assert not wrong, (
        "imports against webapp's layers (core <- figures <- apps <- pages/edge/ops <- "
        "project; apps " + " <- ".join(APPS) + "):\n" + "\n".join(sorted(wrong))
    )


def test_no_import_cycle_in_webapp():
    """Counting imports inside functions: a cycle of modules is a knot no layer unties."""
    graph: dict[str, set[str]] = {}
    modules = {}
    for path in sorted((ROOT / "webapp").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        rel = path.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        modules[".".join(parts)] = path
    for name, path in modules.items():
        found = set()
        for module in _imported_modules(path, names=True):
            while module and module not in modules:
                module = module.rpartition(".")[0]
            # (The package webapp/ itself is only the Celery app.)
            if module and module != name and module != "webapp":
                found.add(module)
        graph[name] = found
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                group.append(other)
                if other == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_room_arrows_are_seen():
    arrows = _room_arrows()
    for edge in [
        ("results", "competitions"),
        ("runs", "results"),
        ("integrity", "results"),
        ("results", "liveness"),
        ("liveness", "work"),
        ("results", "core"),
        ("pages", "runs"),
        ("edge", "results"),
        ("ops", "work"),
        ("project", "pages"),
    ]:
        assert edge in arrows, edge
