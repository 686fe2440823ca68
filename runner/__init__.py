"""Run agents on competitions: specs, execution backends, the validation service, agents.

Pure Python (no Django). The one entry point a caller needs is ``run_agent``::

    cancel = threading.Event()  # set it from a revoke/cancel handler
    spec = spec_for_agent(find_agent("baseline"), "demo-wine", resources=..., seed=1)
    outcome = run_agent(spec, data_dir=DATA, output_dir=RUN_DIR, backend="docker",
                        cancel=cancel, heartbeat=record_heartbeat,
                        control=RunControl(on_started=record_container_name))

The caller grades ``outcome.submission_path`` itself; a reaper whose run's worker died
removes the container by its recorded name (``runner.reaper.remove_run_container``)."""

from runner.agent_definition import (
    AgentConfigError,
    AgentDefinition,
    find_agent,
    load_agent,
    shipped_agents,
)
from runner.backend import HarnessError, RunControl
from runner.harness import make_backend, run_agent, spec_for_agent
from runner.spec import (
    OUTCOME_MESSAGES,
    PAPER_RESOURCES,
    PAPER_TIME_LIMIT_S,
    NetworkPolicy,
    Outcome,
    Resources,
    RunOutcome,
    RunSpec,
    Snapshot,
    parse_size,
)

__all__ = [
    "OUTCOME_MESSAGES",
    "PAPER_RESOURCES",
    "PAPER_TIME_LIMIT_S",
    "AgentConfigError",
    "AgentDefinition",
    "HarnessError",
    "NetworkPolicy",
    "Outcome",
    "Resources",
    "RunControl",
    "RunOutcome",
    "RunSpec",
    "Snapshot",
    "find_agent",
    "load_agent",
    "make_backend",
    "parse_size",
    "run_agent",
    "shipped_agents",
    "spec_for_agent",
]
