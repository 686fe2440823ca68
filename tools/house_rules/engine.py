"""The engine: a rule's declaration, the files it covers, and running it over the tree
and over its own examples."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Never scanned: generated code, installed packages, other projects' code.
SKIPPED_PARTS = {"migrations", "node_modules", "__pycache__", ".venv", "var"}


@dataclass(frozen=True)
class Finding:
    """One place a rule found: its line, the functions and classes enclosing it (joined
    with "."; empty at module level) and the line's text."""

    line: int
    where: str = ""
    text: str = ""


@dataclass(frozen=True)
class Files:
    """The files a rule covers: under ``roots`` (folders or files relative to the
    repository), named like one of ``names`` (fnmatch patterns), none of whose paths match
    ``exclude``. ``tracked``: every text file git tracks instead."""

    roots: tuple[str, ...] = ()
    names: tuple[str, ...] = ("*.py",)
    exclude: tuple[str, ...] = ()
    tracked: bool = False

    def paths(self, root: Path = ROOT) -> list[str]:
        if self.tracked:
            out = subprocess.run(
                ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
            ).stdout.decode()
            found = [name for name in out.split("\0") if name]
        else:
            found = []
            for top in self.roots:
                base = root / top
                if base.is_file():
                    found.append(top)
                    continue
                for path in sorted(base.rglob("*")):
                    rel = path.relative_to(root).as_posix()
                    if path.is_file() and any(fnmatch(path.name, n) for n in self.names):
                        if not SKIPPED_PARTS & set(path.relative_to(root).parts):
                            found.append(rel)
        return sorted(p for p in found if not any(fnmatch(p, e) for e in self.exclude))

    def covers(self, rel: str) -> bool:
        if any(fnmatch(rel, e) for e in self.exclude):
            return False
        if self.tracked:
            return True
        name = rel.rsplit("/", 1)[-1]
        inside = any(rel == top or rel.startswith(top.rstrip("/") + "/") for top in self.roots)
        return inside and any(fnmatch(name, n) for n in self.names)


@dataclass(frozen=True)
class Rule:
    """A house rule. ``pattern`` (a regular expression searched in each line) or ``find``
    (source -> findings) says what it bans; ``why`` is the message; ``allowed`` maps
    (file, key) to why that place may: the key is the enclosing function of a finding, or
    text its line contains. ``bad`` examples must each give a finding, ``good`` ones none;
    ``example_path`` is the file name the examples are read as."""

    name: str
    why: str
    files: Files | tuple[Files, ...]
    bad: tuple[str, ...]
    good: tuple[str, ...]
    pattern: re.Pattern | None = None
    find: Callable[[str], Iterable[Finding]] | None = None
    allowed: dict[tuple[str, str], str] = field(default_factory=dict)
    example_path: str = "example.py"

    @property
    def file_sets(self) -> tuple[Files, ...]:
        return self.files if isinstance(self.files, tuple) else (self.files,)

    def paths(self, root: Path = ROOT) -> list[str]:
        return sorted({p for files in self.file_sets for p in files.paths(root)})

    def covers(self, rel: str) -> bool:
        return any(files.covers(rel) for files in self.file_sets)

    def findings(self, source: str) -> list[Finding]:
        if self.find is not None:
            return list(self.find(source))
        return [
            Finding(number, "", line)
            for number, line in enumerate(source.splitlines(), 1)
            if self.pattern.search(line)
        ]

    def _allows(self, rel: str, finding: Finding) -> tuple[str, str] | None:
        for where, key in self.allowed:
            if where == rel and (key == finding.where or (key and key in finding.text)):
                return (where, key)
        return None

    def run(self, root: Path = ROOT) -> tuple[list[str], set[tuple[str, str]]]:
        """Each offending place as "file:line: text", and the allowed places seen."""
        offences, used = [], set()
        for rel in self.paths(root):
            try:
                source = (root / rel).read_text(encoding="utf-8")
            except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
                continue  # binary files, files deleted in the working tree
            for finding in self.findings(source):
                allowed = self._allows(rel, finding)
                if allowed:
                    used.add(allowed)
                    continue
                where = f" in {finding.where}" if finding.where else ""
                offences.append(f"{rel}:{finding.line}{where}: {finding.text.strip()[:120]}")
        return offences, used

    def example_failures(self) -> list[str]:
        """What is wrong with the rule's examples: a bad one it does not see, a good one
        it takes for bad, or none of either."""
        problems = []
        if not self.bad or not self.good:
            problems.append("needs at least one bad and one good example")
        if not self.covers(self.example_path):
            problems.append(f"its files do not cover its examples' path {self.example_path}")
        for text in self.bad:
            if not self.findings(text):
                problems.append(f"does not see the bad example {text!r}")
        for text in self.good:
            if self.findings(text):
                problems.append(f"takes the good example for bad: {text!r}")
        return problems


def check(rule: Rule, root: Path = ROOT) -> list[str]:
    """Everything wrong with ``rule`` on the tree at ``root``: its examples, the places that
    break it, the allowed places that are gone."""
    problems = [f"{rule.name}: {p}" for p in rule.example_failures()]
    offences, used = rule.run(root)
    if offences:
        problems.append(f"{rule.name}: {rule.why}\n  " + "\n  ".join(offences))
    gone = set(rule.allowed) - used
    if gone:
        problems.append(f"{rule.name}: allowed but gone (remove from the rule): {sorted(gone)}")
    return problems
