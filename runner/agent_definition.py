"""Agent definitions: a folder with ``agent.yaml``, a ``Dockerfile`` and the agent's files.

``agent.yaml`` names the agent, its start command, fixed variables, variables and secrets
taken from the harness's environment, whether it gets egress or a model endpoint
(``llm``: ``MLEBOARD_LLM_BASE_URL``/``MLEBOARD_LLM_API_KEY`` seen as ``OPENAI_BASE_URL``/
``OPENAI_API_KEY``), pinned ``wheels`` from the host's wheelhouse, and whether its build
needs a package index. Every key, with an example: docs/agents.md.

The shipped agents live in ``runner/agents/<name>/``; any folder of that shape works.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

import config

SHIPPED_AGENTS_DIR = Path(__file__).resolve().parent / "agents"
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_KNOWN_KEYS = {
    "name",
    "description",
    "start",
    "env",
    "env_from_host",
    "secrets",
    "egress",
    "build_network",
    "llm",
    "wheels",
}
# Where an ``llm: true`` agent's endpoint and key come from, and what the agent sees.
LLM_BASE_URL_ENV = "MLEBOARD_LLM_BASE_URL"
LLM_API_KEY_ENV = "MLEBOARD_LLM_API_KEY"
# Optional: the model name the operator's endpoint serves, passed on as is.
LLM_MODEL_ENV = "MLEBOARD_LLM_MODEL"
AGENT_BASE_URL_ENV = "OPENAI_BASE_URL"
AGENT_API_KEY_ENV = "OPENAI_API_KEY"


class AgentConfigError(ValueError):
    """An agent folder or its ``agent.yaml`` is not usable; the message says why."""


@dataclass(frozen=True)
class AgentDefinition:
    """One agent, as read from its folder."""

    name: str
    description: str
    directory: Path
    start: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    env_from_host: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    egress: bool = False
    build_network: bool = False
    llm: bool = False
    wheels: str = ""

    @property
    def secret_names(self) -> tuple[str, ...]:
        """The variables whose values are masked in logs (the model key included)."""
        return (*self.secrets, AGENT_API_KEY_ENV) if self.llm else self.secrets

    def llm_base_url(self, host_env: Mapping[str, str]) -> str:
        """The operator's model endpoint for an ``llm`` agent (empty for others)."""
        return config.env(LLM_BASE_URL_ENV, host_env) if self.llm else ""

    def missing(self, host_env: Mapping[str, str]) -> list[str]:
        """The variables the agent needs that ``host_env`` does not set (the operator's
        model endpoint and key for an ``llm`` agent)."""
        needed = [*self.env_from_host, *self.secrets]
        if self.llm:
            needed += [LLM_BASE_URL_ENV, LLM_API_KEY_ENV]
        return [n for n in needed if not host_env.get(n, "").strip()]

    def environment(self, host_env: Mapping[str, str]) -> dict[str, str]:
        """The agent's variables: fixed ones plus those taken from ``host_env`` (and, for
        an ``llm`` agent, the endpoint and key as ``OPENAI_BASE_URL``/``OPENAI_API_KEY``).

        Raises ``AgentConfigError`` naming every required variable that is not set.
        """
        missing = self.missing(host_env)
        if missing:
            why = " (the operator's OpenAI-compatible model endpoint)" if self.llm else ""
            raise AgentConfigError(
                f"agent {self.name!r} needs these environment variables{why}: {', '.join(missing)}"
            )
        env = dict(self.env)
        env.update({n: host_env[n] for n in (*self.env_from_host, *self.secrets)})
        if self.llm:
            env[AGENT_BASE_URL_ENV] = self.llm_base_url(host_env)
            env[AGENT_API_KEY_ENV] = config.env(LLM_API_KEY_ENV, host_env).strip()
            if model := config.env(LLM_MODEL_ENV, host_env).strip():
                env[LLM_MODEL_ENV] = model
        return env


def load_agent(directory: Path) -> AgentDefinition:
    """Read the agent in ``directory``. Raises ``AgentConfigError`` if it is malformed."""
    directory = Path(directory).resolve()
    config_path = directory / "agent.yaml"
    if not config_path.is_file():
        raise AgentConfigError(f"{directory} has no agent.yaml")
    if not (directory / "Dockerfile").is_file():
        raise AgentConfigError(f"{directory} has no Dockerfile")
    try:
        raw = yaml.safe_load(config_path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise AgentConfigError(f"{config_path}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise AgentConfigError(f"{config_path}: expected a mapping")
    unknown = set(raw) - _KNOWN_KEYS
    if unknown:
        raise AgentConfigError(f"{config_path}: unknown keys {sorted(unknown)}")
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise AgentConfigError(f"{config_path}: `name` must match {_NAME.pattern}")
    start = raw.get("start")
    if isinstance(start, str):
        start = start.split()
    if not start or not all(isinstance(p, str) for p in start):
        raise AgentConfigError(f"{config_path}: `start` must be a command (list of strings)")
    env = raw.get("env") or {}
    if not isinstance(env, dict):
        raise AgentConfigError(f"{config_path}: `env` must be a mapping")
    for key in ("egress", "build_network", "llm"):
        if not isinstance(raw.get(key, False), bool):
            raise AgentConfigError(f"{config_path}: `{key}` must be true or false")
    wheels = raw.get("wheels") or ""
    if wheels and (
        not isinstance(wheels, str)
        or Path(wheels).is_absolute()
        or ".." in Path(wheels).parts
        or not (directory / wheels).is_file()
    ):
        raise AgentConfigError(
            f"{config_path}: `wheels` must name a requirements file in the folder"
        )
    return AgentDefinition(
        name=name,
        description=str(raw.get("description", "")).strip(),
        directory=directory,
        start=tuple(start),
        env={str(k): str(v) for k, v in env.items()},
        env_from_host=_names(raw, "env_from_host", config_path),
        secrets=_names(raw, "secrets", config_path),
        egress=raw.get("egress", False),
        build_network=raw.get("build_network", False),
        llm=raw.get("llm", False),
        wheels=wheels,
    )


def _names(raw: dict, key: str, where: Path) -> tuple[str, ...]:
    value = raw.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise AgentConfigError(f"{where}: `{key}` must be a list of variable names")
    return tuple(value)


def agents_in(folder: Path) -> dict[str, AgentDefinition]:
    """The agents in ``folder``'s subfolders that hold an ``agent.yaml``, by name (in
    folder order: of two with one name, the later wins). A missing folder holds none.
    Raises ``AgentConfigError`` if one of them is malformed."""
    folder = Path(folder)
    agents = {}
    for candidate in sorted(folder.iterdir()) if folder.is_dir() else []:
        if (candidate / "agent.yaml").is_file():
            agent = load_agent(candidate)
            agents[agent.name] = agent
    return agents


def shipped_agents() -> dict[str, AgentDefinition]:
    """The agents that ship with mleboard, by name."""
    return agents_in(SHIPPED_AGENTS_DIR)


def find_agent(name: str) -> AgentDefinition:
    """The shipped agent called ``name``. Raises ``AgentConfigError`` if there is none."""
    agents = shipped_agents()
    if name not in agents:
        raise AgentConfigError(f"no shipped agent {name!r}; known: {', '.join(sorted(agents))}")
    return agents[name]
