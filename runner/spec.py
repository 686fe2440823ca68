"""What a run is (``RunSpec``) and how it ended (``Outcome``, ``RunOutcome``).

A run spec says everything a backend needs to start one agent on one competition:
the image and command, the environment, the resources the engine enforces, the time
limit the harness enforces, the network policy and the host folders the agent sees.
It holds no Docker object so that a Celery task can build it from plain data.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from config import MAX_SIZE, env, parse_size  # noqa: F401 (runner.parse_size)

# A run's folder, as the harness writes it and the run pages read it: MLE-bench's three
# output folders, and what only the harness writes beside them.
SUBMISSION_DIR = "submission"
CODE_DIR = "code"
LOGS_DIR = "logs"
OUTPUT_DIRS = (SUBMISSION_DIR, CODE_DIR, LOGS_DIR)
RUN_LOG = "run.log"  # the agent's stdout/stderr as the harness captured it
VALIDATION_CALLS = "validation_calls.jsonl"  # the validation service's record of calls

# The layout inside an agent's container: MLE-bench's, so agents written for it work.
CONTAINER_DATA_DIR = "/home/data"
CONTAINER_SUBMISSION_DIR = "/home/submission"
CONTAINER_LOGS_DIR = "/home/logs"
CONTAINER_CODE_DIR = "/home/code"
CONTAINER_AGENT_DIR = "/home/agent"
CONTAINER_INSTRUCTIONS = "/home/instructions.txt"
CONTAINER_VALIDATE_SCRIPT = "/home/validate_submission.sh"
# The validation service's socket lives in its own mounted folder: a folder mount (not a
# file mount) keeps working if the service recreates its socket.
CONTAINER_VALIDATION_DIR = "/home/validation"
VALIDATION_SOCKET_NAME = "validate.sock"
SUBMISSION_FILENAME = "submission.csv"

# The uid:gid agents run as in a container: an id no account uses, in the image or (we
# assume; pick another with ``RunSpec.user`` if yours does) on the host, so that nothing the
# agent could reach outside its container belongs to it. It owns nothing in the image: the
# agent reads its folder (``/home/agent``, owned by the image's ``agent`` user, 1000) and
# writes only its output folders and ``$HOME``/``/tmp`` (in-memory file systems).
DEFAULT_USER = "59999:59999"
# Where the agent's ``$HOME`` is in a container: inside the scratch file system ``/tmp``
# (the root file system is read-only).
CONTAINER_SCRATCH_DIR = "/tmp"
CONTAINER_HOME_DIR = "/tmp/home"

# Sizes (``parse_size``, at most ``MAX_SIZE``) are read as every size of the configuration
# is (config.parsers), so "4g" means the same in a resource spec and in a variable.
# The most GPUs one run may ask for: more than any one host has.
MAX_GPUS = 64


# Limits on what a run leaves on the host and how long its container may outlive its
# deadline; each is a variable of the configuration (config/variables.py), read when a
# ``RunSpec`` is made. The submission's is the same variable grading reads.
OUTPUT_MAX_BYTES_ENV = "MLEBOARD_RUN_OUTPUT_MAX_BYTES"
SUBMISSION_MAX_BYTES_ENV = "MLEBOARD_MAX_SUBMISSION_BYTES"
SCRATCH_BYTES_ENV = "MLEBOARD_RUN_SCRATCH_BYTES"
KILL_GRACE_ENV = "MLEBOARD_RUN_KILL_GRACE_S"
# The most files (and folders) the outputs of one run may hold.
OUTPUT_MAX_ENTRIES = 100_000


class Outcome(enum.StrEnum):
    """How a run ended. Each one has its own message (``OUTCOME_MESSAGES``)."""

    COMPLETED = "completed"
    TIMED_OUT = "timed_out"
    OUT_OF_MEMORY = "out_of_memory"
    FAILED = "failed"
    HARNESS_ERROR = "harness_error"
    CANCELLED = "cancelled"


OUTCOME_MESSAGES: dict[Outcome, str] = {
    Outcome.COMPLETED: "The agent finished and exited with code 0.",
    Outcome.TIMED_OUT: "The agent ran past its time limit and was killed by the harness.",
    Outcome.OUT_OF_MEMORY: "The agent used more memory than its limit and was killed (out of memory).",
    Outcome.FAILED: "The agent exited with a non-zero exit code.",
    Outcome.HARNESS_ERROR: "The harness could not run the agent (an infrastructure error, not the agent's fault).",
    Outcome.CANCELLED: "The run was cancelled and the agent was stopped.",
}


def outputs_exceeded_message(limit: int) -> str:
    """The message of a run whose outputs went past a limit (its outcome is ``failed``)."""
    return (
        f"The agent's outputs exceeded {limit} bytes: the run was stopped and what was over "
        "the limit was not kept."
    )


@dataclass(frozen=True)
class Resources:
    """Limits the execution backend enforces on the agent.

    ``cpus`` may be fractional (Docker's ``nano_cpus``). ``memory`` and ``shm`` are bytes
    (use ``parse_size``); ``memory=None`` means no limit (MLE-bench's default; not ours).
    ``gpus`` is a count, or ``gpu_ids`` names the devices (a scheduler that hands out GPUs
    sets it so that no GPU is given to two runs). ``pids`` caps processes+threads.
    """

    cpus: float | None = 36.0
    memory: int | None = 440 * 1024**3
    shm: int | None = 4 * 1024**3
    gpus: int = 1
    gpu_ids: tuple[str, ...] = ()
    pids: int | None = 4096

    def __post_init__(self) -> None:
        if self.cpus is not None and self.cpus <= 0:
            raise ValueError("cpus must be positive")
        if self.gpus < 0:
            raise ValueError("gpus must be zero or more")
        if self.gpu_ids and len(self.gpu_ids) != self.gpus:
            raise ValueError("gpu_ids must name exactly `gpus` devices")


# The paper's protocol: 24 hours, one A10-class GPU, 36 vCPUs, 440 GB RAM.
PAPER_RESOURCES = Resources()
PAPER_TIME_LIMIT_S = 24 * 3600.0


@dataclass(frozen=True)
class NetworkPolicy:
    """Whether the agent may reach the outside world.

    Off by default (Docker ``network_mode="none"``: only a loopback interface). An agent
    definition may be granted egress (e.g. to call an LLM API); then the container joins
    ``egress_network`` (an engine network the operator set up, default ``bridge``) and the
    run's outcome records that egress was granted.
    """

    egress: bool = False
    egress_network: str = "bridge"


@dataclass(frozen=True)
class RunDirs:
    """The host folders of one run.

    ``data`` is the competition's public folder (mounted read-only). ``submission``,
    ``logs`` and ``code`` start empty and receive the agent's outputs: the local backend's
    agent writes them itself, a container's are copied in at the end (bounded, see
    ``runner.outputs``; the container's own are in memory). ``output`` is the run's
    folder, holding those three plus what only the harness writes (the agent's captured
    output ``run.log``, ``snapshots/``, ``instructions.txt``).
    """

    output: Path
    data: Path
    validation_dir: Path | None = None

    @property
    def submission(self) -> Path:
        return self.output / SUBMISSION_DIR

    @property
    def logs(self) -> Path:
        return self.output / LOGS_DIR

    @property
    def code(self) -> Path:
        return self.output / CODE_DIR

    @property
    def run_log(self) -> Path:
        """The agent's stdout/stderr as the harness captured it (outside the agent's reach)."""
        return self.output / RUN_LOG

    @property
    def validation_calls(self) -> Path:
        """The validation service's record of the calls, one JSON line each (harness's own)."""
        return self.output / VALIDATION_CALLS

    @property
    def llm_usage(self) -> Path:
        """What the run asked of its model, counted at the bridge (harness's own, JSON)."""
        return self.output / "llm_usage.json"

    @property
    def snapshots(self) -> Path:
        return self.output / "snapshots"

    @property
    def support(self) -> Path:
        """Read-only files the harness puts into the container (instructions, client)."""
        return self.output / ".support"

    @property
    def description_override(self) -> Path:
        """The description the agent reads instead of the public folder's, when the run
        uses an obfuscated one (written by the harness only then)."""
        return self.support / "description.md"

    @property
    def validation(self) -> Path:
        """The folder holding the validation service's unix socket (kept short: a socket
        path is limited to ~107 bytes)."""
        return self.validation_dir or self.output / ".validation"


@dataclass(frozen=True)
class RunSpec:
    """One agent run on one (competition, seed).

    ``command`` runs in ``workdir`` inside the image. ``env`` is passed as is; the values
    of the variables named in ``secret_env`` are masked in the captured logs. The harness
    kills the agent after ``time_limit_s`` seconds (``None``: no limit); in a container a
    watchdog the agent cannot stop ends everything ``kill_grace_s`` later even if the
    harness is gone.

    ``llm_base_url`` is the operator's OpenAI-compatible endpoint for an agent that needs a
    model (empty: none); a container reaches it only through ``runner.llm_bridge``.

    ``output_max_bytes`` bounds what the run's submission, logs and code folders may hold
    (apparent sizes: a sparse file counts at its full length), ``submission_max_bytes``
    the submission file alone, ``scratch_bytes`` the container's in-memory ``/tmp``
    (``$HOME`` is in it). Defaults come from the environment (``*_ENV`` above).
    """

    image: str
    command: tuple[str, ...]
    competition_id: str
    env: dict[str, str] = field(default_factory=dict)
    secret_env: frozenset[str] = frozenset()
    resources: Resources = PAPER_RESOURCES
    time_limit_s: float | None = PAPER_TIME_LIMIT_S
    network: NetworkPolicy = NetworkPolicy()
    workdir: str = CONTAINER_AGENT_DIR
    user: str = DEFAULT_USER
    seed: int = 0
    agent_name: str = ""
    # Where the local backend runs the command (the agent's folder on the host).
    local_workdir: Path | None = None
    # MLE-bench's obfuscated-description runs: the agent reads this text as
    # ``description.md`` (not the public folder's own) and instructions that do not name
    # Kaggle. ``None``: the competition's own description.
    obfuscated_description: str | None = None
    log_cap_bytes: int = 50 * 1024**2
    llm_base_url: str = ""
    output_max_bytes: int = field(default_factory=lambda: env(OUTPUT_MAX_BYTES_ENV))
    submission_max_bytes: int = field(default_factory=lambda: env(SUBMISSION_MAX_BYTES_ENV))
    scratch_bytes: int = field(default_factory=lambda: env(SCRATCH_BYTES_ENV))
    kill_grace_s: float = field(default_factory=lambda: env(KILL_GRACE_ENV))

    def __post_init__(self) -> None:
        if not self.command:
            raise ValueError("a run needs a command")
        if self.time_limit_s is not None and self.time_limit_s <= 0:
            raise ValueError("time_limit_s must be positive")
        for name in ("output_max_bytes", "submission_max_bytes", "scratch_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.kill_grace_s < 0:
            raise ValueError("kill_grace_s must be zero or more")

    @property
    def secret_values(self) -> list[str]:
        """The values to mask in logs: those of the declared secret variables, if set."""
        return [self.env[name] for name in sorted(self.secret_env) if self.env.get(name)]


@dataclass(frozen=True)
class Snapshot:
    """A copy of ``submission.csv`` taken while the agent ran, ``elapsed_s`` after it started."""

    elapsed_s: float
    path: Path


@dataclass(frozen=True)
class RunOutcome:
    """What happened in one run.

    ``exit_code`` is the agent's exit code, ``None`` when it never ran to an exit (killed
    for time-out or cancel, harness error). ``submission_path`` is ``None`` when the agent
    wrote no (regular-file) ``submission.csv``. ``overhead`` holds the harness's own time
    in seconds: ``create_to_start_s`` (container creation requested -> agent process
    started) and ``exit_to_collected_s`` (agent exited -> outputs collected).
    """

    outcome: Outcome
    message: str
    exit_code: int | None
    duration_s: float
    submission_path: Path | None
    logs_path: Path
    output_dir: Path
    backend: str
    egress_granted: bool
    snapshots: tuple[Snapshot, ...] = ()
    overhead: dict[str, float] = field(default_factory=dict)
    detail: str = ""
    validation_counts: dict[str, int] = field(default_factory=dict)
    # What the agent asked of its model endpoint, counted at the bridge
    # (``runner.llm_meter.Meter.as_dict``); None when the run had no endpoint.
    llm_usage: dict | None = None
    # What the agent could read of the host (``runner.local_confinement``; empty: a container).
    confinement: str = ""

    def to_json(self) -> dict:
        """A JSON-ready dict (paths as strings) for the CLI and task results."""
        return {
            "outcome": self.outcome.value,
            "message": self.message,
            "detail": self.detail,
            "exit_code": self.exit_code,
            "duration_s": round(self.duration_s, 3),
            "submission_path": str(self.submission_path) if self.submission_path else None,
            "logs_path": str(self.logs_path),
            "output_dir": str(self.output_dir),
            "backend": self.backend,
            "egress_granted": self.egress_granted,
            "snapshots": [
                {"elapsed_s": round(s.elapsed_s, 3), "path": str(s.path)} for s in self.snapshots
            ],
            "overhead": {k: round(v, 4) for k, v in self.overhead.items()},
            "validation_counts": dict(self.validation_counts),
            "llm_usage": self.llm_usage,
            "confinement": self.confinement,
        }
