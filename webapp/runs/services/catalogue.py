"""The agents a site can run and the backend it runs them on (the operator's choice)."""

import logging
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from runner.agent_definition import AgentConfigError, AgentDefinition, agents_in, shipped_agents

log = logging.getLogger(__name__)


class LaunchRefused(ValueError):
    pass


# Apps above this one that add agents (approved, built submissions), registered when
# they are ready: each a function giving agents by name.
_AGENT_SOURCES: list[Callable[[], dict[str, AgentDefinition]]] = []


def agent_source(source: Callable[[], dict[str, AgentDefinition]]) -> None:
    if source not in _AGENT_SOURCES:
        _AGENT_SOURCES.append(source)


def site_agents() -> dict[str, AgentDefinition]:
    """The agents this site can run: the shipped ones, every agent folder found in the
    folders of MLEBOARD_AGENT_DIRS (an operator's own agents), and those the registered
    sources add (submitted agents once built)."""
    agents = shipped_agents()
    for folder in settings.MLEBOARD_AGENT_DIRS:
        agents.update(agents_in(Path(folder)))
    for source in _AGENT_SOURCES:
        agents.update(source())
    return agents


def agent_unusable_reason(agent: AgentDefinition) -> str:
    """Why this site cannot run ``agent`` now (empty when it can): a variable it needs,
    the model endpoint of an ``llm`` agent above all, is not set."""
    import os

    try:
        agent.environment(os.environ)
    except AgentConfigError as exc:
        return str(exc)
    return ""


def find_site_agent(name: str) -> AgentDefinition:
    agents = site_agents()
    if name not in agents:
        raise AgentConfigError(
            f"no agent {name!r} on this site; known: {', '.join(sorted(agents))}"
        )
    return agents[name]


def site_backend(asked: str | None = None) -> str:
    """The backend this site runs agents with: the operator's setting. A launch asking for
    another one, or ``local`` while unisolated runs are not allowed, is refused."""
    backend = settings.MLEBOARD_RUN_BACKEND
    if asked and asked != backend:
        raise LaunchRefused(
            f"this site runs agents with the {backend} backend; isolation is the operator's "
            f"choice (MLEBOARD_RUN_BACKEND), not a launch's: leave backend out or ask for {backend}"
        )
    if backend == "local" and not settings.MLEBOARD_ALLOW_UNISOLATED_RUNS:
        raise LaunchRefused(
            "this site is set to run agents as local processes, which are not isolated from "
            "the host; the operator must use the docker backend or turn on "
            "MLEBOARD_ALLOW_UNISOLATED_RUNS"
        )
    return backend


def backend_confinement(backend: str) -> str:
    """What an agent run by ``backend`` on this host can read of it, for people (empty for
    containers: the Docker backend's isolation is the same everywhere)."""
    if backend != "local":
        return ""
    from runner.local_confinement import local_confinement

    return local_confinement().summary
