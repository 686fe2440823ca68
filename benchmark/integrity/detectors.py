"""Rule-violation detectors over a run folder's ``code/`` and ``logs/``.

One function per question MLE-bench asks of a run's logs and code, each deterministic and
returning :class:`Finding` s (file, line, excerpt) for a person to review:
:func:`hand_written_submission`, :func:`external_llm_use` and
:func:`unauthorized_resources`. Python is read with :mod:`ast`, shell and logs with
regular expressions. Installing packages at run time is allowed (MLE-bench's rules forbid
only other people's solutions, external LLM help and the answers): ``pip install`` is
flagged only for an LLM client or Kaggle's. What each looks for: docs/integrity.md.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

HAND_WRITTEN = "hand_written_submission"
EXTERNAL_LLM = "external_llm"
UNAUTHORIZED = "unauthorized_resource"
CHECKS = (HAND_WRITTEN, EXTERNAL_LLM, UNAUTHORIZED)
# What each check is called on pages and in reasons.
CHECK_LABELS = {
    HAND_WRITTEN: "Hand-written submission",
    EXTERNAL_LLM: "External LLM use",
    UNAUTHORIZED: "Unauthorized resource",
}


def check_label(check: str) -> str:
    """The label of ``check``; an unknown key (an older detector's) in words."""
    return CHECK_LABELS.get(check) or check.replace("_", " ").capitalize()


MAX_FILE_BYTES = 20 * 1024 * 1024  # a longer file is read up to this many bytes
CODE_SUFFIXES = {".py", ".ipynb", ".sh", ".bash", ".r"}
LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".json", ".jsonl", ".md", ".yaml", ".yml"}

LLM_MODULES = {
    "openai",
    "anthropic",
    "google.generativeai",
    "google.genai",
    "cohere",
    "mistralai",
    "litellm",
    "groq",
    "together",
    "replicate",
    "vertexai",
    "langchain_openai",
    "langchain_anthropic",
    "langchain_google_genai",
    "langchain_mistralai",
    "langchain_cohere",
}
LLM_PACKAGES = {
    "openai",
    "anthropic",
    "google-generativeai",
    "google-genai",
    "cohere",
    "mistralai",
    "litellm",
    "groq",
    "together",
    "replicate",
    "langchain-openai",
    "langchain-anthropic",
}
LLM_HOSTS = (
    "api.openai.com",
    "api.anthropic.com",
    "generativelanguage.googleapis.com",
    "aiplatform.googleapis.com",
    "api.cohere.ai",
    "api.cohere.com",
    "api.mistral.ai",
    "api.groq.com",
    "api.together.xyz",
    "api.together.ai",
    "openrouter.ai",
    "api.deepseek.com",
    "api.replicate.com",
)
LLM_KEYS = re.compile(
    r"\b(OPENAI|ANTHROPIC|GOOGLE|GEMINI|COHERE|CO|MISTRAL|GROQ|TOGETHER|OPENROUTER|DEEPSEEK|REPLICATE)_API_(KEY|TOKEN)\b"
)
HTTP_CALLS = {
    "requests.get",
    "requests.post",
    "requests.put",
    "requests.request",
    "requests.head",
    "requests.Session",
    "urllib.request.urlopen",
    "urllib.request.urlretrieve",
    "urlopen",
    "urlretrieve",
    "httpx.get",
    "httpx.post",
    "httpx.Client",
    "httpx.AsyncClient",
    "aiohttp.ClientSession",
    "wget.download",
    "http.client.HTTPConnection",
    "http.client.HTTPSConnection",
}
KAGGLE_MODULES = {"kaggle", "kagglehub", "opendatasets"}

_LOCAL_HOST = r"(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\]|host\.docker\.internal)"
_REMOTE_URL = re.compile(rf"\b(?:https?|ftp)://(?!{_LOCAL_HOST}(?:[:/]|$))[\w.-]+", re.I)
_LLM_HOST = re.compile("|".join(re.escape(host) for host in LLM_HOSTS), re.I)
_SHELL_FETCH = re.compile(
    rf"(?:^|[;&|(`$\s])(?:curl|wget|aria2c)\b[^\n]*?\b(?:https?|ftp)://(?!{_LOCAL_HOST}(?:[:/]|$))",
    re.I,
)
_KAGGLE_CLI = re.compile(
    r"(?:^|[;&|(`\s'\"])kaggle\s+(?:competitions|datasets|kernels|models)\b", re.I
)
_PROMPT = r"^\s*(?:>>>\s*|\.\.\.\s*|\$\s*|In \[\d*\]:\s*)?"  # a REPL or shell prompt
_KAGGLE_PY = re.compile(_PROMPT + r"(?:import|from)\s+(?:kaggle|kagglehub|opendatasets)\b")
_LLM_PY = re.compile(
    _PROMPT
    + r"(?:import|from)\s+(?:"
    + "|".join(re.escape(m) for m in sorted(LLM_MODULES))
    + r")(?:\s|\.|$)"
)
_PIP_INSTALL = re.compile(r"\b(?:pip3?|uv\s+pip|conda|mamba)\s+install\b([^\n;&|]*)", re.I)
# The grader's side of a prepared competition: ``.../prepared/private/...``, ``answers.csv``,
# ``gold_submission.csv``. A path segment ``/private`` is needed, so prose ("private
# methods") is not a finding.
_PRIVATE_PATH = re.compile(
    r"(?:/private(?:/|\b)|\bprivate/[\w.-]+\.(?:csv|json|parquet|zip|npy)\b"
    r"|\banswers?\.csv\b|\bgold_submission\w*)",
    re.I,
)
_ECHO_CSV = re.compile(
    r"(?:\b(?:echo|printf)\b[^\n]*,[^\n]*>>?\s*\S*\.csv\b|\bcat\s*>>?\s*\S*\.csv\s*<<)",
    re.I,
)


@dataclass(frozen=True)
class Finding:
    check: str
    file: str
    line: int
    excerpt: str
    detail: str

    def as_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------- reading a run


@dataclass(frozen=True)
class Source:
    """One file of the run: path relative to the run folder, its text, and for notebooks
    the Python it holds (code cells joined, magics blanked) with a line map back."""

    path: str
    text: str
    kind: str  # "python", "shell", "r", "log"
    python: str | None = None
    shell_lines: tuple[tuple[int, str], ...] = ()


def _read(path: Path) -> str:
    with path.open("rb") as handle:
        data = handle.read(MAX_FILE_BYTES)
    return data.decode("utf-8", errors="replace")


def _notebook(text: str) -> tuple[str, tuple[tuple[int, str], ...]]:
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return "", ()
    lines: list[str] = []
    shell: list[tuple[int, str]] = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        for line in source.split("\n"):
            stripped = line.lstrip()
            if stripped.startswith(("!", "%")):
                shell.append((len(lines) + 1, stripped.lstrip("!%")))
                lines.append("")
            else:
                lines.append(line)
        lines.append("")
    return "\n".join(lines), tuple(shell)


def iter_sources(run_dir: Path) -> Iterator[Source]:
    """The files of ``code/`` and ``logs/`` (sorted), read for the detectors, then the
    agent's own output as a harness captured it (``run.log``), when there is one."""
    yield from _area_sources(run_dir)
    captured = run_dir / "run.log"
    if captured.is_file() and not captured.is_symlink():
        yield Source("run.log", _read(captured), "log")


def _area_sources(run_dir: Path) -> Iterator[Source]:
    for area in ("code", "logs"):
        root = run_dir / area
        if not root.is_dir():
            continue
        for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
            rel = path.relative_to(run_dir).as_posix()
            suffix = path.suffix.lower()
            if any(part in {"__pycache__", ".git", "node_modules"} for part in path.parts):
                continue
            if suffix == ".py":
                yield Source(rel, _read(path), "python", python=_read(path))
            elif suffix == ".ipynb":
                text = _read(path)
                python, shell = _notebook(text)
                yield Source(rel, text, "python", python=python, shell_lines=shell)
            elif suffix in {".sh", ".bash"}:
                text = _read(path)
                yield Source(rel, text, "shell", shell_lines=tuple(enumerate(text.split("\n"), 1)))
            elif suffix == ".r":
                yield Source(rel, _read(path), "r")
            elif area == "logs" and (suffix in LOG_SUFFIXES or not suffix):
                yield Source(rel, _read(path), "log")


def read_sources(run_dir: Path) -> list[Source]:
    return list(iter_sources(Path(run_dir)))


# ---------------------------------------------------------------- Python helpers


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _python_findings(source: Source, check) -> list[Finding]:
    """``check(source, tree)`` on a Python source that parses; nothing otherwise."""
    tree = _parse(source) if source.kind == "python" else None
    return [] if tree is None else list(check(source, tree))


def _parse(source: Source) -> ast.AST | None:
    try:
        return ast.parse(source.python or "")
    except (SyntaxError, ValueError):
        return None


def _line_text(text: str, line: int) -> str:
    lines = text.split("\n")
    return lines[line - 1].strip()[:200] if 0 < line <= len(lines) else ""


def _finding(
    check: str, source: Source, line: int, detail: str, text: str | None = None
) -> Finding:
    return Finding(
        check, source.path, line, _line_text(text or source.python or source.text, line), detail
    )


def _is_constant_literal(node: ast.AST, depth: int = 0) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, str | int | float | bool)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return isinstance(node.operand, ast.Constant)
    if depth < 3 and isinstance(node, ast.List | ast.Tuple):
        return all(_is_constant_literal(e, depth + 1) for e in node.elts)
    if depth < 3 and isinstance(node, ast.Dict):
        return all(k is not None and _is_constant_literal(k, depth + 1) for k in node.keys) and all(
            _is_constant_literal(v, depth + 1) for v in node.values
        )
    return False


def _literal_rows(node: ast.AST) -> int:
    """How many data values a literal table holds (0 when it is not a literal table)."""
    if isinstance(node, ast.Dict) and _is_constant_literal(node):
        return sum(len(v.elts) if isinstance(v, ast.List | ast.Tuple) else 1 for v in node.values)
    if isinstance(node, ast.List | ast.Tuple) and _is_constant_literal(node):
        return sum(
            len(e.elts) if isinstance(e, ast.List | ast.Tuple | ast.Dict) else 1 for e in node.elts
        )
    return 0


def _literal_frame(call: ast.AST) -> bool:
    """``pd.DataFrame(<literal>)`` / ``DataFrame.from_dict(<literal>)`` / ``from_records``
    with at least two literal values."""
    if not isinstance(call, ast.Call):
        return False
    name = _dotted(call.func)
    if not (name.endswith("DataFrame") or name.endswith(("from_dict", "from_records"))):
        return False
    data = (
        call.args[0]
        if call.args
        else next((k.value for k in call.keywords if k.arg == "data"), None)
    )
    return data is not None and _literal_rows(data) >= 2


def _looks_like_csv(value: str) -> bool:
    lines = [line for line in value.strip().split("\n") if line.strip()]
    if len(lines) < 2 or "," not in lines[0]:
        return False
    width = lines[0].count(",")
    return all(line.count(",") == width for line in lines[1:3])


def _constant_strings(node: ast.AST) -> Iterator[tuple[int, str]]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            yield sub.lineno, sub.value
        elif isinstance(sub, ast.JoinedStr):
            parts = [
                v.value
                for v in sub.values
                if isinstance(v, ast.Constant) and isinstance(v.value, str)
            ]
            yield sub.lineno, "".join(parts)


def _command_strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Commands handed to a shell from Python: ``os.system("...")``, ``subprocess.run(
    ["kaggle", ...])`` (constant list elements joined by spaces)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if not (
            name.startswith("subprocess.")
            or name
            in {"os.system", "os.popen", "run", "check_call", "check_output", "Popen", "call"}
        ):
            continue
        for arg in node.args[:1]:
            if isinstance(arg, ast.List | ast.Tuple):
                words = [
                    e.value
                    for e in arg.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
                yield node.lineno, " ".join(words)
            else:
                yield from _constant_strings(arg)


# ---------------------------------------------------------------- (a) hand-written


def hand_written_submission(sources: Iterable[Source]) -> list[Finding]:
    """Submission files written from literals rather than model output."""
    findings: list[Finding] = []
    for source in sources:
        findings.extend(_python_findings(source, _hand_written_python))
        for line, command in _shell_lines(source):
            if _ECHO_CSV.search(command):
                findings.append(
                    _finding(
                        HAND_WRITTEN,
                        source,
                        line,
                        "CSV rows written by a shell command",
                        source.text if source.kind != "python" else None,
                    )
                )
    return findings


def _hand_written_python(source: Source, tree: ast.AST) -> Iterator[Finding]:
    literal_names: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _literal_frame(node.value):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    literal_names[target.id] = node.lineno
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        method = node.func.attr
        owner = node.func.value
        if method in {"to_csv", "to_parquet", "to_json", "to_excel"}:
            if _literal_frame(owner):
                yield _finding(
                    HAND_WRITTEN,
                    source,
                    node.lineno,
                    f"{method} of a DataFrame built from literal values",
                )
            elif isinstance(owner, ast.Name) and owner.id in literal_names:
                yield _finding(
                    HAND_WRITTEN,
                    source,
                    node.lineno,
                    f"{method} of {owner.id}, a DataFrame built from literal values on line {literal_names[owner.id]}",
                )
        elif method in {"write", "write_text", "writelines"} and node.args:
            arg = node.args[0]
            values = []
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                values = [arg.value]
            elif isinstance(arg, ast.List | ast.Tuple) and _is_constant_literal(arg):
                values = ["".join(str(e.value) for e in arg.elts if isinstance(e, ast.Constant))]
            if any(_looks_like_csv(v) for v in values):
                yield _finding(
                    HAND_WRITTEN, source, node.lineno, "CSV text written from a string literal"
                )


# ---------------------------------------------------------------- (b) external LLMs


def external_llm_use(sources: Iterable[Source]) -> list[Finding]:
    """Imports and calls of external LLM APIs, their hosts and API-key variables."""
    findings: list[Finding] = []
    for source in sources:
        findings.extend(_python_findings(source, _llm_python))
        text_lines = _text_lines(source)
        for line, text in text_lines:
            if source.kind == "log" and _LLM_PY.search(text):
                findings.append(
                    _finding(EXTERNAL_LLM, source, line, "an LLM client imported", source.text)
                )
            elif source.kind in ("log", "shell", "r") and _LLM_HOST.search(text):
                findings.append(
                    _finding(
                        EXTERNAL_LLM,
                        source,
                        line,
                        f"an LLM API host ({_LLM_HOST.search(text).group()})",
                        source.text,
                    )
                )
        for line, command in _shell_lines(source):
            packages = _pip_packages(command)
            if packages & LLM_PACKAGES:
                findings.append(
                    _finding(
                        EXTERNAL_LLM,
                        source,
                        line,
                        f"installs {', '.join(sorted(packages & LLM_PACKAGES))}",
                        _shell_text(source),
                    )
                )
    return findings


def _llm_python(source: Source, tree: ast.AST) -> Iterator[Finding]:
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for module in modules:
            if any(module == m or module.startswith(m + ".") for m in LLM_MODULES):
                yield _finding(EXTERNAL_LLM, source, node.lineno, f"imports {module}")
                break
    for line, value in _constant_strings(tree):
        if _LLM_HOST.search(value):
            yield _finding(
                EXTERNAL_LLM, source, line, f"an LLM API host ({_LLM_HOST.search(value).group()})"
            )
        elif LLM_KEYS.search(value):
            yield _finding(EXTERNAL_LLM, source, line, f"reads {LLM_KEYS.search(value).group()}")


# ---------------------------------------------------------------- (c) unauthorized


def unauthorized_resources(sources: Iterable[Source]) -> list[Finding]:
    """Fetches from outside the sandbox, Kaggle's CLI or API, the grader's answers."""
    findings: list[Finding] = []
    for source in sources:
        findings.extend(_python_findings(source, _unauthorized_python))
        if source.kind in ("log", "r"):
            for line, text in _text_lines(source):
                detail = _unauthorized_text(text, log=source.kind == "log")
                if detail:
                    findings.append(_finding(UNAUTHORIZED, source, line, detail, source.text))
        for line, command in _shell_lines(source):
            detail = _unauthorized_shell(command)
            if detail:
                findings.append(_finding(UNAUTHORIZED, source, line, detail, _shell_text(source)))
    return findings


def _unauthorized_python(source: Source, tree: ast.AST) -> Iterator[Finding]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            for name in names:
                if not getattr(node, "level", 0) and name.split(".")[0] in KAGGLE_MODULES:
                    yield _finding(
                        UNAUTHORIZED, source, node.lineno, f"imports {name} (Kaggle's API)"
                    )
                    break
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            urls = [v for _, v in _constant_strings(node) if _REMOTE_URL.search(v)]
            if urls:
                yield _finding(
                    UNAUTHORIZED,
                    source,
                    node.lineno,
                    f"{name or 'a call'} given a remote URL ({_REMOTE_URL.search(urls[0]).group()})",
                )
            elif name in HTTP_CALLS or (name.split(".")[-1] in {"urlopen", "urlretrieve"}):
                argument = node.args[0] if node.args else None
                local = (
                    isinstance(argument, ast.Constant)
                    and isinstance(argument.value, str)
                    and not _REMOTE_URL.search(argument.value)
                )
                if not local:
                    yield _finding(UNAUTHORIZED, source, node.lineno, f"HTTP request with {name}")
    for line, value in _constant_strings(tree):
        if not any(char.isspace() for char in value) and _PRIVATE_PATH.search(value):
            yield _finding(
                UNAUTHORIZED, source, line, f"refers to the grader's answers ({value[:80]})"
            )
    for line, command in _command_strings(tree):
        detail = _unauthorized_shell(command)
        if detail:
            yield _finding(UNAUTHORIZED, source, line, detail)


def _unauthorized_shell(command: str) -> str | None:
    if _SHELL_FETCH.search(command):
        return "downloads from outside the sandbox (curl/wget)"
    if _KAGGLE_CLI.search(command) or command.strip().startswith("kaggle "):
        return "Kaggle's command line"
    packages = _pip_packages(command)
    if packages & KAGGLE_MODULES:
        return f"installs {', '.join(sorted(packages & KAGGLE_MODULES))} (Kaggle's API)"
    if _PRIVATE_PATH.search(command):
        return "refers to the grader's answers"
    return None


def _unauthorized_text(text: str, log: bool) -> str | None:
    if _KAGGLE_PY.search(text):
        return "Kaggle's API imported"
    return (
        _unauthorized_shell(text)
        if log
        else (
            f"remote URL ({_REMOTE_URL.search(text).group()})" if _REMOTE_URL.search(text) else None
        )
    )


# ---------------------------------------------------------------- helpers, entry point


def _text_lines(source: Source) -> list[tuple[int, str]]:
    if source.kind == "python":
        return []
    return list(enumerate(source.text.split("\n"), 1))


def _shell_lines(source: Source) -> tuple[tuple[int, str], ...]:
    if source.kind == "shell" or source.kind == "python":
        return source.shell_lines
    return ()


def _shell_text(source: Source) -> str:
    return source.python if source.kind == "python" and source.python is not None else source.text


def _pip_packages(command: str) -> set[str]:
    packages: set[str] = set()
    for match in _PIP_INSTALL.finditer(command):
        for word in match.group(1).split():
            if word.startswith("-"):
                continue
            name = (
                re.split(r"[<>=!~\[;@ ]", word.strip("'\""), maxsplit=1)[0]
                .lower()
                .replace("_", "-")
            )
            if name:
                packages.add(name)
    return packages


DETECTORS = {
    HAND_WRITTEN: hand_written_submission,
    EXTERNAL_LLM: external_llm_use,
    UNAUTHORIZED: unauthorized_resources,
}


def scan_run(run_dir: Path | str) -> list[Finding]:
    """Every finding of every detector on the run folder's ``code/`` and ``logs/``,
    ordered by check, file and line (duplicates removed)."""
    sources = read_sources(Path(run_dir))
    seen: set[tuple] = set()
    findings = []
    for detector in DETECTORS.values():
        for finding in detector(sources):
            key = (finding.check, finding.file, finding.line, finding.detail)
            if key not in seen:
                seen.add(key)
                findings.append(finding)
    findings.sort(key=lambda f: (CHECKS.index(f.check), f.file, f.line))
    return findings
