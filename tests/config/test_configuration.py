"""One way to read configuration (config/): every environment variable read anywhere in the
project is declared once, read through the same parsers, and documented in the docs'
configuration page (docs/configuration.md) as the declaration renders it.

The scan reads the source as a reviewer would: Python (``os.environ``/``getenv`` reads,
``config.env`` calls, and every ``MLEBOARD_*`` name written anywhere), the shell scripts,
compose.yaml, the Dockerfile and the Makefile.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from config import ConfigurationError, check_environment, env, parsers
from config.reference import PAGE, current_block, render_table, rewrite
from config.variables import BY_NAME, VARIABLES

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("benchmark", "cli", "config", "graders", "runner", "webapp", "perf")
NAME = re.compile(r"^[A-Z][A-Z0-9_]*[A-Z0-9]$")
MLEBOARD_NAME = re.compile(r"\bMLEBOARD_[A-Z0-9_]*[A-Z0-9]\b")


def python_files() -> list[Path]:
    files = [ROOT / "manage.py"]
    for top in PACKAGES:
        files += sorted((ROOT / top).rglob("*.py"))
    return files


def _constants() -> dict[str, set[str]]:
    """Module-level ``NAME = "TEXT"`` constants of every scanned file, by name."""
    found: dict[str, set[str]] = {}
    for path in python_files():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found.setdefault(target.id, set()).add(node.value.value)
    return found


def _is_os_environ(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "environ"
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    )


def _mapping_name(node: ast.AST) -> str:
    if _is_os_environ(node):
        return "os.environ"
    return node.id if isinstance(node, ast.Name) else ""


# Mappings of the environment as the code names them: os.environ, and the parameters
# (``environ``, ``host_env``) through which functions are handed an environment to read.
ENVIRON_NAMES = {"os.environ", "environ", "host_env"}
CONFIG_CALLS = {"env", "is_set", "declared"}


def python_reads() -> list[tuple[str, str, bool]]:
    """Every (name, where, raw) read: ``raw`` when read from a mapping of the environment
    directly rather than through ``config.env``."""
    constants = _constants()

    def resolve(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
        values = constants.get(name or "", set())
        return next(iter(values)) if len(values) == 1 else None

    reads = []
    for path in python_files():
        where = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            key, raw = None, True
            if isinstance(node, ast.Call):
                func = node.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("get", "pop", "__getitem__")
                    and _mapping_name(func.value) in ENVIRON_NAMES
                    and node.args
                ):
                    key = node.args[0]
                elif isinstance(func, ast.Attribute) and func.attr == "getenv" and node.args:
                    key = node.args[0]
                elif (
                    getattr(func, "id", getattr(func, "attr", None)) in CONFIG_CALLS
                    and node.args
                    and not where.startswith("config/")
                ):
                    key, raw = node.args[0], False
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                if _mapping_name(node.value) in ENVIRON_NAMES:
                    key = node.slice
            elif isinstance(node, ast.Compare) and len(node.ops) == 1:
                if isinstance(node.ops[0], ast.In | ast.NotIn) and _is_os_environ(
                    node.comparators[0]
                ):
                    key = node.left
            if key is None:
                continue
            name = resolve(key)
            if name and NAME.match(name):
                reads.append((name, f"{where}:{node.lineno}", raw))
    return reads


def literal_names() -> list[tuple[str, str]]:
    """Every ``MLEBOARD_*`` string constant written in the Python source (a name held in a
    constant, a dict or a list is read somewhere)."""
    found = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if re.fullmatch(MLEBOARD_NAME, node.value):
                    found.append((node.value, f"{path.relative_to(ROOT)}:{node.lineno}"))
    return found


def shell_reads() -> list[tuple[str, str]]:
    """``$NAME`` / ``${NAME...}`` in the shell scripts (and CI's), less the names a script
    assigns itself."""
    found = []
    for path in [*sorted((ROOT / "scripts").glob("*.sh")), ROOT / ".ci" / "run"]:
        text = path.read_text(encoding="utf-8")
        own = set(re.findall(r"^\s*(?:export\s+|local\s+)?([A-Z_][A-Z0-9_]*)=", text, re.M))
        own |= set(re.findall(r"\bfor\s+([A-Z_][A-Z0-9_]*)\s+in\b", text))
        for name in re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", text):
            if name not in own and NAME.match(name):
                found.append((name, str(path.relative_to(ROOT))))
    return found


def compose_reads() -> list[tuple[str, str]]:
    """compose.yaml's interpolations (``${NAME}``; ``$${NAME}`` is read by the container's
    shell) and the variables it sets for mleboard's processes (``environment:`` keys)."""
    text = (ROOT / "compose.yaml").read_text(encoding="utf-8")
    found = [(n, "compose.yaml") for n in re.findall(r"\$\$?\{([A-Z][A-Z0-9_]*)", text)]
    services = yaml.safe_load(text)["services"]
    for name, service in services.items():
        if name in ("db", "redis"):  # not ours: the images' own variables
            continue
        for key in service.get("environment") or {}:
            found.append((key, f"compose.yaml: {name}.environment"))
    return found


def dockerfile_and_makefile_reads() -> list[tuple[str, str]]:
    found = []
    docker = (ROOT / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    for line in re.findall(r"^ENV\s+(.+)", docker, re.M):
        found += [(n, "Dockerfile") for n in re.findall(r"([A-Z][A-Z0-9_]*)=", line)]
    # Python's own switches, not ours.
    found = [(n, w) for n, w in found if not n.startswith("PYTHON")]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    found += [(n, "Makefile") for n in MLEBOARD_NAME.findall(makefile)]
    return found


def every_read() -> list[tuple[str, str]]:
    return (
        [(n, w) for n, w, _ in python_reads()]
        + literal_names()
        + shell_reads()
        + compose_reads()
        + dockerfile_and_makefile_reads()
    )


# --- the scan itself ------------------------------------------------------------------


def test_the_scan_finds_reads_in_every_kind_of_file():
    """A scanner that found nothing would pass the tests below: it must see the reads we
    know of, in each kind of file."""
    reads = every_read()
    where = {n: {w.split(":")[0] for m, w in reads if m == n} for n, _ in reads}
    assert "webapp/project/settings.py" in where["MLEBOARD_STALE_AFTER_S"]
    assert "runner/spec.py" in where["MLEBOARD_RUN_SCRATCH_BYTES"]
    assert "runner/agent_definition.py" in where["MLEBOARD_LLM_BASE_URL"]
    assert "runner/agents/aide/run_aide.py" in where["AIDE_STEPS"]
    assert "compose.yaml" in where["MLEBOARD_HOST_DIR"]
    assert "Dockerfile" in where["MLEBOARD_VAR_DIR"]
    assert any(w.startswith("perf/") for w in where["DATABASE_URL"])
    assert any(w.startswith("scripts/") for w in where["MLEBOARD_VAR_DIR"])


def test_every_name_read_anywhere_is_declared():
    undeclared = sorted(
        {f"{name} ({where})" for name, where in every_read() if name not in BY_NAME}
    )
    assert not undeclared, (
        "read but not declared in config/variables.py (declare it there, with its parser, "
        "default and meaning, then run `mleboard config --write docs/configuration.md`):\n"
        + "\n".join(undeclared)
    )


# Programs that run inside an agent's container import none of ours: they read their
# environment as it is (the harness's contract, declared as internal).
RAW_READS_ALLOWED_IN = ("runner/agents/",)


def test_documented_variables_are_read_through_the_declaration():
    """A documented variable read straight from ``os.environ`` skips its parser and its
    default (``MLEBOARD_MAX_SUBMISSION_BYTES=1g`` was accepted by the runner and refused by
    the settings): read it with ``config.env(NAME)``."""
    raw = sorted(
        f"{name} ({where})"
        for name, where, is_raw in python_reads()
        if is_raw
        and name in BY_NAME
        and not BY_NAME[name].internal
        and not where.startswith(RAW_READS_ALLOWED_IN)
    )
    assert not raw, "read without config.env:\n" + "\n".join(raw)


# --- the configuration page ------------------------------------------------------------


def test_the_docs_table_is_the_declaration_rendered():
    page = (ROOT / PAGE).read_text(encoding="utf-8")
    block = current_block(page)
    assert block is not None, f"{PAGE} lost its configuration table markers"
    assert render_table() in block, (
        f"{PAGE}'s configuration table differs from config/variables.py: run "
        f"`mleboard config --write {PAGE}`"
    )


def test_the_readme_holds_no_copy_of_the_table():
    """The table is declared once: a README with its own copy would go stale."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert current_block(readme) is None and "| `MLEBOARD_" not in readme, (
        f"README.md has a configuration table again; it lives in {PAGE} "
        f"(`mleboard config --write {PAGE}`)"
    )


def test_every_documented_variable_is_in_the_table_and_no_internal_one():
    table = render_table()
    for variable in VARIABLES:
        assert (f"| `{variable.name}` |" in table) is (not variable.internal), variable.name
        assert variable.internal or (variable.meaning and variable.shown), variable.name


def test_the_writer_rewrites_only_the_table(tmp_path):
    readme = tmp_path / "configuration.md"
    stale = current_block((ROOT / PAGE).read_text()).replace("| `DEBUG` |", "| `DEBUGS` |")
    readme.write_text("before\n" + stale + "\nafter")
    assert rewrite(readme) is True
    text = readme.read_text()
    assert text.startswith("before\n") and text.endswith("\nafter")
    assert render_table() in text
    assert rewrite(readme) is False
    (tmp_path / "bare.md").write_text("no markers")
    with pytest.raises(ValueError, match="markers"):
        rewrite(tmp_path / "bare.md")


# --- the parsers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,value",
    [
        ("1g", 1024**3),
        ("1G", 1024**3),
        ("1gb", 1024**3),
        ("1GiB", 1024**3),
        ("512MiB", 512 * 1024**2),
        ("512m", 512 * 1024**2),
        ("1.5k", 1536),
        ("1024", 1024),
        (" 2t ", 2 * 1024**4),
    ],
)
def test_sizes(text, value):
    assert parsers.parse_size(text) == value


@pytest.mark.parametrize("text", ["", "1gg", "g", "-1g", "0", "1 PB", "1e9", "2048t", "nan"])
def test_bad_sizes(text):
    with pytest.raises(ValueError):
        parsers.parse_size(text)


def test_size_or_zero():
    assert parsers.parse_size_or_zero("0") == 0 == parsers.parse_size_or_zero("0g")
    assert parsers.parse_size_or_zero("8g") == 8 * 1024**3


@pytest.mark.parametrize(
    "text,seconds",
    [("90", 90), ("90s", 90), ("1.5s", 1.5), ("15m", 900), ("24h", 86400), ("2d", 172800)],
)
def test_durations(text, seconds):
    assert parsers.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "-5s", "5 weeks", "1w", "99999d", "inf"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        parsers.parse_duration(text)


def test_whole_seconds_refuse_fractions():
    assert parsers.parse_whole_seconds("2m") == 120
    with pytest.raises(ValueError, match="whole"):
        parsers.parse_whole_seconds("1.5s")


@pytest.mark.parametrize(
    "text,value",
    [("1", True), ("TRUE", True), ("yes", True), ("on", True), ("0", False), ("Off", False)],
)
def test_booleans(text, value):
    assert parsers.parse_bool(text) is value


@pytest.mark.parametrize("text", ["ture", "2", "y", "enabled", ""])
def test_bad_booleans(text):
    with pytest.raises(ValueError):
        parsers.parse_bool(text)


def test_rates_lists_and_choices():
    assert parsers.parse_rate("30/hour") == "30/hour"
    assert parsers.parse_rate("off") is None
    for bad in ("30", "0/min", "5/fortnight", "a/min", "5/min/x"):
        with pytest.raises(ValueError):
            parsers.parse_rate(bad)
    assert parsers.list_of()("a, b,,c ") == ["a", "b", "c"]
    with pytest.raises(ValueError, match="docker, local"):
        parsers.one_of(("docker", "local"))("podman")


@pytest.mark.parametrize("text", ["mleboard", "site-2.staging", "a_b", "x" * 63])
def test_names(text):
    assert parsers.parse_name(text) == text


@pytest.mark.parametrize("text", ["", "-lead", "a b", "a=b", "x" * 64, "é", "a\x00"])
def test_bad_names(text):
    with pytest.raises(ValueError, match="letters, digits"):
        parsers.parse_name(text)


# --- reading ----------------------------------------------------------------------------


def test_env_reads_the_declared_default_and_parses_what_is_set():
    assert env("MLEBOARD_MAX_SUBMISSION_BYTES", {}) == 1024**3
    assert env("MLEBOARD_MAX_SUBMISSION_BYTES", {"MLEBOARD_MAX_SUBMISSION_BYTES": "1g"}) == 1024**3
    assert env("MLEBOARD_STALE_AFTER_S", {"MLEBOARD_STALE_AFTER_S": "2m"}) == 120
    # Empty is unset (compose passes `${X:-}`), except where empty means something.
    assert env("MLEBOARD_RUN_SLOTS", {"MLEBOARD_RUN_SLOTS": ""}) == 2
    assert env("MLEBOARD_HOST_GPUS", {}) is None
    assert env("MLEBOARD_HOST_GPUS", {"MLEBOARD_HOST_GPUS": ""}) == []
    assert env("MLEBOARD_MEDIA_ROOT", {"MLEBOARD_VAR_DIR": "/x"}) == Path("/x/media")


def test_a_bad_value_names_the_variable_and_what_was_expected():
    with pytest.raises(ConfigurationError, match=r"MLEBOARD_RUN_SLOTS='two': expected a whole"):
        env("MLEBOARD_RUN_SLOTS", {"MLEBOARD_RUN_SLOTS": "two"})
    problems = check_environment({"DEBUG": "ture", "MLEBOARD_UPLOAD_MAX_BYTES": "1gg", "X": "y"})
    assert len(problems) == 2
    assert problems[0].startswith("DEBUG='ture'") and "MLEBOARD_UPLOAD_MAX_BYTES" in problems[1]


def test_an_undeclared_name_cannot_be_read():
    with pytest.raises(ConfigurationError, match="not a declared"):
        env("MLEBOARD_NO_SUCH_THING", {})


def test_every_default_parses_as_its_own_type():
    """The shown defaults and the values agree in kind: a default the parser would refuse if
    written out is a mistake in the declaration."""
    for variable in VARIABLES:
        value = env(variable.name, {})
        if variable.internal or value is None:
            continue
        assert not isinstance(value, str) or value == "" or variable.parse(value) == value, (
            variable.name
        )


def _settings(env_vars: dict[str, str]) -> subprocess.CompletedProcess:
    import os

    clean = {k: v for k, v in os.environ.items() if k not in BY_NAME or BY_NAME[k].internal}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from django.conf import settings; "
            "print(settings.MLEBOARD_MAX_SUBMISSION_BYTES, settings.MLEBOARD_STALE_AFTER_S)",
        ],
        cwd=ROOT,
        env={
            **clean,
            "DJANGO_SETTINGS_MODULE": "webapp.project.settings",
            "SECRET_KEY": "k" * 50,
            **env_vars,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_settings_and_runner_agree_on_sizes(tmp_path):
    """The issue's case: 1g is one size for the runner and the settings alike."""
    from runner.spec import RunSpec

    done = _settings(
        {
            "MLEBOARD_VAR_DIR": str(tmp_path),
            "MLEBOARD_MAX_SUBMISSION_BYTES": "1g",
            "MLEBOARD_STALE_AFTER_S": "3m",
        }
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(1024**3), "180"]
    spec_field = RunSpec.__dataclass_fields__["submission_max_bytes"]
    import os

    os.environ["MLEBOARD_MAX_SUBMISSION_BYTES"] = "1g"
    try:
        assert spec_field.default_factory() == 1024**3
    finally:
        del os.environ["MLEBOARD_MAX_SUBMISSION_BYTES"]


def test_a_bad_value_stops_start_up_naming_every_bad_variable(tmp_path):
    done = _settings(
        {
            "MLEBOARD_VAR_DIR": str(tmp_path),
            "MLEBOARD_RUN_SCRATCH_BYTES": "lots",  # read by the runner, checked at start-up
            "MLEBOARD_LOGIN_LOCKOUT": "ture",
        }
    )
    assert done.returncode != 0
    assert "MLEBOARD_RUN_SCRATCH_BYTES='lots'" in done.stderr
    assert "MLEBOARD_LOGIN_LOCKOUT='ture'" in done.stderr


def test_the_config_command(tmp_path):
    import os

    cli = [sys.executable, "-m", "cli"]
    base = {k: v for k, v in os.environ.items() if k not in BY_NAME or BY_NAME[k].internal}
    shown = subprocess.run(cli + ["config"], cwd=ROOT, capture_output=True, text=True, env=base)
    assert shown.returncode == 0 and shown.stdout == render_table()
    bad = subprocess.run(
        cli + ["config", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**base, "MLEBOARD_RUN_QUEUES": "runs.cpu,runs.tpu"},
    )
    assert bad.returncode == 1 and "MLEBOARD_RUN_QUEUES='runs.cpu,runs.tpu'" in bad.stderr


def test_run_queues_is_one_variable_everywhere():
    """``MLEBOARD_RUN_QUEUES`` is the list of run queues a host's runs worker takes: the
    declaration parses it, the settings hold that list, compose passes it through."""
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    runs_worker = compose["runs-worker"]
    assert "MLEBOARD_RUN_QUEUES" in runs_worker["environment"]
    assert env("MLEBOARD_RUN_QUEUES", {"MLEBOARD_RUN_QUEUES": "runs.cpu,runs.gpu"}) == [
        "runs.cpu",
        "runs.gpu",
    ]


def test_servers_are_compared_where_they_lead():
    from config.endpoints import same_server

    assert same_server("redis://localhost:6379/13", "redis://127.0.0.1:6379/11")
    assert same_server("redis://localhost/0", "redis://[::1]:6379/5")
    assert not same_server("redis://localhost:6380/0", "redis://127.0.0.1:6379/0")
    assert not same_server("redis://192.0.2.1:6379/0", "redis://127.0.0.1:6379/0")
    assert same_server("redis://192.0.2.1:6379/0", "redis://192.0.2.1/4")
    assert not same_server("memcached://localhost:6379", "redis://localhost:6379")
    assert not same_server("redis://localhost:notaport/0", "redis://localhost:6379")
