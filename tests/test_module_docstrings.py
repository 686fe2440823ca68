"""Comments say why, not history; a module's docstring is a few lines (at most 12).

How the code came to be belongs in commit messages; a comment that narrates it goes stale
with the next change. Design that takes more than a few lines belongs in docs/.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Python packages whose module docstrings are kept short; migrations are generated.
SOURCE_ROOTS = ("graders", "benchmark", "runner", "cli", "webapp", "perf", "tools", "scripts")
# Comments and docstrings read for history: the sources and the tests.
PROSE_ROOTS = (*SOURCE_ROOTS, "tests")
SKIPPED_PARTS = ("migrations", "node_modules", "__pycache__")
MODULE_DOCSTRING_MAX_LINES = 12

# Phrasings that tell how the code came to be rather than why it is as it is.
HISTORY_PHRASES = (
    r"\b(?:previously|formerly|historically|nowadays)\b",
    r"\b(?:in the past|until recently)\b",
    r"\bbefore (?:this|the) (?:change|commit|fix|patch|rewrite|refactor)\b",
    r"\bwith(?:out)? (?:this|the) (?:fix|change|patch)\b",
    r"\b(?:this|the) (?:commit|patch|pull request)\b",
    r"\b(?:it|we|they|this|that|which|who) used to\b",
    r"\bused to be\b",
    r"\b(?:we|I) (?:replaced|removed|changed|switched|moved|rewrote|dropped|renamed)\b",
    r"\b(?:the|an?) (?:old|previous|former) (?:code|implementation|approach|design)\b",
    r"\b(?:the|an?) (?:old|previous|former) behaviou?r\b",
    r"\b(?:was|were)\b[^.;]{0,60}?[,;(]\s*now\b",
    r"\bnow\b[^.;]{0,60}?\binstead\b",
    r"\b(?:issue|pr|pull request|ticket)\s+#?\d+\b",
    r"(?:^|[\s(])#\d+\b",
)
HISTORY = re.compile("|".join(f"(?:{phrase})" for phrase in HISTORY_PHRASES), re.IGNORECASE)


def _python_files(roots: tuple[str, ...]) -> list[Path]:
    return [
        path
        for root in roots
        for path in sorted((ROOT / root).rglob("*.py"))
        if not set(path.relative_to(ROOT).parts) & set(SKIPPED_PARTS)
    ]


def module_docstring_lines(source: str) -> int:
    """How many source lines the module's docstring spans (0 without one)."""
    body = ast.parse(source).body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[0].end_lineno - body[0].lineno + 1
    return 0


def prose(source: str):
    """(line, text) of each comment and each module, class and function docstring line."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string.lstrip("#")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                for offset, text in enumerate(first.value.value.splitlines()):
                    yield first.lineno + offset, text


def history_phrases(source: str) -> list[tuple[int, str]]:
    """(line, text) of each comment or docstring line that narrates history."""
    if not HISTORY.search(source):
        return []  # the phrases are nowhere in the file: no need to tokenize it
    return [(line, text.strip()) for line, text in prose(source) if HISTORY.search(text)]


def test_module_docstrings_are_a_few_lines():
    long = []
    for path in _python_files(SOURCE_ROOTS):
        lines = module_docstring_lines(path.read_text(encoding="utf-8"))
        if lines > MODULE_DOCSTRING_MAX_LINES:
            long.append(f"{path.relative_to(ROOT).as_posix()}: {lines} lines")
    assert not long, (
        f"module docstrings over {MODULE_DOCSTRING_MAX_LINES} lines: keep what the module is "
        "and why; move design to docs/:\n" + "\n".join(long)
    )


def test_comments_say_why_not_history():
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: {text}"
        for path in _python_files(PROSE_ROOTS)
        for line, text in history_phrases(path.read_text(encoding="utf-8"))
    ]
    assert not found, (
        "history in a comment or docstring: state the present reason (the history goes in "
        "the commit message):\n" + "\n".join(found)
    )


def test_the_scanner_tells_history_from_a_reason():
    history = [
        "# previously this read the whole file",
        "# Formerly a thread per request.",
        "# Before this change the cache kept stale pages.",
        "# It used to crash on empty input.",
        "# The limit used to be 10.",
        "# We replaced the lock with a rename.",
        "# the old implementation sorted twice",
        "# keeps the previous behaviour for old clients",
        "# was a list, now a dict",
        "# now reads the header instead of the body",
        "# see issue 33",
        "# fixes #123",
        "# (PR 45) adds retries",
        "# Historically the grader ran in the web process.",
        "x.join(1.0)  # with the fix it waits for the lock",
        "# Until recently the cache was per process.",
        '"""Reads the rows in chunks (this commit made it stream)."""',
    ]
    reasons = [
        "# validation cannot be used to probe the answers",
        "# a seed used to draw the bootstrap samples",
        "# containers that should no longer exist",
        "# the old one stays for the record",
        "# A sentence stored by an earlier version: it may name a field",
        "# the state as the database holds it now",
        "# a row that was written now counts",
        "# a hash-mark #anchor and a colour #fff",
        "# renamed into place, so readers need no lock",
        "# issues a token",
        "# step 2 of 3",
        "# fix the seed so the draws repeat",
    ]
    for text in history:
        assert history_phrases(text + "\n"), text
    for text in reasons:
        assert not history_phrases(text + "\n"), text
    for phrase in HISTORY_PHRASES:  # each phrase is exercised by an example
        assert any(re.search(phrase, text, re.IGNORECASE) for text in history), phrase
    long = '"""' + "\n".join(["A line."] * 12) + '"""\n'
    assert module_docstring_lines(long) == 12
    assert module_docstring_lines('"""One line."""\nx = 1\n') == 1
    assert module_docstring_lines("x = 1\n") == 0
