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


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the file's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                found.add(node.module)
    return found


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


# ---------------------------------------------------------------- the apps inside webapp

# The apps of ``webapp``, bottom first: an app imports only the apps before it (imports
# inside functions counted). ``work`` is the machinery of every app's work and names no
# app (its declarations find their models through Django's app registry); liveness holds
# the processes' heartbeats, which any app's pages may ask about; competitions
# are the catalogue everything refers to; results hold experiments, runs and their grading;
# agent runs produce results; integrity checks read graded runs (and agent runs' files).
APPS = ("work", "liveness", "accounts", "competitions", "results", "runs", "integrity")
# Arrows against that direction, each with the reason it is there: none. An app lower down
# learns what one above adds through what that app registers when it is ready
# (``webapp.work.on_end``, ``webapp.results.extensions``, ``aggregates.reviewed_by``).
# The list only shrinks: a new back-arrow fails, and so does one listed that is gone.
KNOWN_BACK_ARROWS: dict[tuple[str, str], set[str]] = {}


def _app(path: Path) -> str | None:
    parts = path.relative_to(ROOT).parts
    if parts[0] != "webapp" or len(parts) < 3 or parts[1] not in APPS:
        return None
    return parts[1]


def _app_arrows() -> dict[tuple[str, str], set[str]]:
    arrows: dict[tuple[str, str], set[str]] = {}
    for path in sorted((ROOT / "webapp").rglob("*.py")):
        source = _app(path)
        if source is None or "migrations" in path.parts:
            continue
        for module in _imported_modules(path):
            parts = module.split(".")
            if parts[0] == "webapp" and len(parts) > 1 and parts[1] in APPS:
                if parts[1] != source:
                    key = (source, parts[1])
                    arrows.setdefault(key, set()).add(str(path.relative_to(ROOT)))
    return arrows


def test_the_apps_import_each_other_in_one_direction():
    back = {
        edge: files
        for edge, files in _app_arrows().items()
        if APPS.index(edge[0]) < APPS.index(edge[1])
    }
    new = {
        f"{a} -> {b}: {', '.join(sorted(files - KNOWN_BACK_ARROWS.get((a, b), set())))}"
        for (a, b), files in back.items()
        if files - KNOWN_BACK_ARROWS.get((a, b), set())
    }
    assert not new, (
        "imports against the apps' direction ("
        + " <- ".join(APPS)
        + "):\n"
        + ("\n".join(sorted(new)))
    )
    gone = {
        f"{a} -> {b}: {path}"
        for (a, b), files in KNOWN_BACK_ARROWS.items()
        for path in files - back.get((a, b), set())
    }
    assert not gone, "no longer imported: take these off KNOWN_BACK_ARROWS\n" + "\n".join(gone)


def test_the_app_arrows_are_seen():
    arrows = _app_arrows()
    for edge in [
        ("results", "competitions"),
        ("runs", "results"),
        ("integrity", "results"),
        ("results", "liveness"),
        ("liveness", "work"),
    ]:
        assert edge in arrows, edge
    assert ("results", "work") in arrows
