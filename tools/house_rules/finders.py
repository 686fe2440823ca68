"""What the rules that read Python's syntax tree find: each function takes a module's
source and yields a ``Finding`` per place."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator

from tools.house_rules.engine import Finding


def nodes_where(tree: ast.AST, where: tuple[str, ...] = ()) -> Iterator[tuple[ast.AST, str]]:
    """Every node under ``tree`` with the names of the functions and classes enclosing it,
    joined with "."."""
    for child in ast.iter_child_nodes(tree):
        yield child, ".".join(where)
        inner = where
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = (*where, child.name)
        yield from nodes_where(child, inner)


def _line(source: str, number: int) -> str:
    lines = source.splitlines()
    return lines[number - 1] if 0 < number <= len(lines) else ""


def _findings(source: str, places) -> list[Finding]:
    return [Finding(line, where, _line(source, line)) for where, line in places]


# --- tests -------------------------------------------------------------------------------


def sleep_calls(source: str) -> list[Finding]:
    """Each call of ``time.sleep`` (or ``sleep`` imported from ``time``)."""
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
    return _findings(
        source,
        [
            (where, node.lineno)
            for node, where in nodes_where(tree)
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
        ],
    )


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


def timed_assertions(source: str) -> list[Finding]:
    """Each ``assert`` that orders a measured time (``<``, ``<=``, ``>``, ``>=``)."""
    ordering = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
    return _findings(
        source,
        [
            (where, node.lineno)
            for node, where in nodes_where(ast.parse(source))
            if isinstance(node, ast.Assert)
            and any(
                isinstance(compare, ast.Compare)
                and any(isinstance(op, ordering) for op in compare.ops)
                and any(_measured(side) for side in [compare.left, *compare.comparators])
                for compare in ast.walk(node.test)
            )
        ],
    )


# What skips or expects a failure: pytest's skip, skipif, xfail and importorskip (called,
# as a mark, or imported by name) and unittest's skip decorators and skipTest.
SKIP_NAMES = {"skip", "skipif", "xfail", "importorskip", "skipTest", "skipIf", "skipUnless"}


def skips(source: str) -> list[Finding]:
    """Each skip; a decorator counts in the function it decorates."""
    found = []
    for node, where in nodes_where(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in SKIP_NAMES:
            found.append((where, node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module in ("pytest", "unittest"):
            if any(alias.name in SKIP_NAMES for alias in node.names):
                found.append((where, node.lineno))
    return _findings(source, sorted(found, key=lambda place: place[1]))


# --- the code ------------------------------------------------------------------------------

_DIGIT_TESTS = ("isdigit", "isnumeric", "isdecimal")


def unguarded_digit_tests(source: str) -> list[Finding]:
    """Calls of ``x.isdigit()`` (or isnumeric, isdecimal) where the same ``and`` does not
    first ask ``x.isascii()``: those accept digits ``int`` refuses (``"²".isdigit()``)."""
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
    return _findings(
        source,
        [
            ("", node.lineno)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _DIGIT_TESTS
            and id(node) not in guarded
        ],
    )


ERROR_LOOKUP = re.compile(r"\berror__i?(contains|startswith|endswith|regex|exact)\b")


def error_text_reads(source: str) -> list[Finding]:
    """A lookup on an error's text (``error__icontains=``) or ``"..." in x.error``."""
    found = [
        Finding(number, "", line)
        for number, line in enumerate(source.splitlines(), 1)
        if ERROR_LOOKUP.search(line)
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(
            isinstance(op, ast.In | ast.NotIn) for op in node.ops
        ):
            if any(isinstance(s, ast.Attribute) and s.attr == "error" for s in node.comparators):
                found.append(Finding(node.lineno, "", _line(source, node.lineno)))
    return found


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    return isinstance(node, ast.Attribute) and node.attr.startswith("SEEK_")  # os.SEEK_END


def raw_seeks(source: str) -> list[Finding]:
    """Each ``.seek(`` whose arguments are not all literals (``seek(0, os.SEEK_END)``)."""
    return _findings(
        source,
        [
            (where, node.lineno)
            for node, where in nodes_where(ast.parse(source))
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "seek"
            and not all(_literal(arg) for arg in node.args)
        ],
    )


STATUS_FIELDS = {"status", "state"}
_WRITES = {"update", "update_or_create", "get_or_create", "bulk_update"}
_RAW_SQL = re.compile(r"\bSET\b[^;]*\b(status|state)\s*=", re.IGNORECASE | re.DOTALL)


def _keys(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Dict):
        return {k.value for k in node.keys if isinstance(k, ast.Constant)}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return {k.arg for k in node.keywords if k.arg}
    return set()


def status_writes(source: str) -> list[Finding]:
    """``.update(status=…)`` / ``.update(state=…)`` (and the same keys in
    ``update_or_create``/``get_or_create`` defaults or ``bulk_update`` field lists),
    ``x.status = …`` in a function that saves, and raw SQL that sets a status. A finding's
    text names the field written (``state=``) and what wrote it."""
    found = []

    def hit(node: ast.AST, what: str) -> None:
        found.append(Finding(node.lineno, "", f"{what}: {_line(source, node.lineno).strip()}"))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in _WRITES:
                for kw in node.keywords:
                    if kw.arg in STATUS_FIELDS:
                        hit(node, f".{name}({kw.arg}=...)")
                    elif kw.arg == "defaults":
                        for key in _keys(kw.value) & STATUS_FIELDS:
                            hit(node, f".{name}(defaults={{{key}=...}})")
                    elif kw.arg is None:  # **fields: a dict literal spelled out
                        for key in _keys(kw.value) & STATUS_FIELDS:
                            hit(node, f".{name}(**{{{key}=...}})")
                if name == "bulk_update":
                    for arg in node.args[1:2]:
                        if isinstance(arg, ast.List | ast.Tuple):
                            for elt in arg.elts:
                                if isinstance(elt, ast.Constant) and elt.value in STATUS_FIELDS:
                                    hit(node, f"bulk_update([{elt.value}=])")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _RAW_SQL.search(node.value):
                hit(node, "raw SQL setting status=")
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
                            hit(n, f".{t.attr}= ... then save()")
    return found


def posted_reads(source: str) -> list[Finding]:
    """``request.POST[...]``, ``request.data.get(...)`` and the like: posted text read
    outside a form or serializer."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        target = None
        if isinstance(node, ast.Subscript):
            target = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "getlist", "dict", "items", "values", "lists")
        ):
            target = node.func.value
        if (
            isinstance(target, ast.Attribute)
            and target.attr in ("POST", "data")
            and isinstance(target.value, ast.Name)
            and target.value.id == "request"
        ):
            lines.append(("", node.lineno))
    return _findings(source, lines)


# --- prose -----------------------------------------------------------------------------

MODULE_DOCSTRING_MAX_LINES = 12


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


def long_module_docstring(source: str) -> list[Finding]:
    lines = module_docstring_lines(source)
    if lines > MODULE_DOCSTRING_MAX_LINES:
        return [Finding(1, "", f"a module docstring of {lines} lines")]
    return []


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


def prose(source: str) -> Iterator[tuple[int, str]]:
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


def history_phrases(source: str) -> list[Finding]:
    """Each comment or docstring line that narrates history."""
    if not HISTORY.search(source):
        return []  # the phrases are nowhere in the file: no need to tokenize it
    return [Finding(line, "", text.strip()) for line, text in prose(source) if HISTORY.search(text)]
