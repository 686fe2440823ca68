"""Run one agent on one (competition, seed): everything around the backend.

``run_agent`` prepares the run's folders, starts the validation service, runs the backend
(which enforces the limits), takes periodic snapshots of ``submission.csv``, collects the
outputs and returns a ``RunOutcome``. It never raises for what the agent does, nor for
infrastructure failures during the run (those are ``harness_error`` outcomes); it raises
``ValueError`` only for a call that cannot describe a run (a non-empty output folder).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path

from runner.agent_definition import AgentDefinition
from runner.backend import Backend, HarnessError, RunControl, Snapshots
from runner.logs import LogSink
from runner.spec import (
    OUTCOME_MESSAGES,
    PAPER_RESOURCES,
    PAPER_TIME_LIMIT_S,
    SUBMISSION_FILENAME,
    NetworkPolicy,
    Outcome,
    Resources,
    RunDirs,
    RunOutcome,
    RunSpec,
    outputs_exceeded_message,
)
from runner.validation_service import RateLimit, ValidationService, Validator

DEFAULT_SNAPSHOT_INTERVAL_S = 3600.0


def make_backend(name: str) -> Backend:
    """The backend called ``name`` (``docker`` or ``local``)."""
    if name == "docker":
        from runner.docker_backend import DockerBackend

        return DockerBackend()
    if name == "local":
        from runner.local_backend import LocalBackend

        return LocalBackend()
    raise ValueError(f"unknown backend {name!r} (docker or local)")


def spec_for_agent(
    agent: AgentDefinition,
    competition_id: str,
    *,
    resources: Resources = PAPER_RESOURCES,
    time_limit_s: float | None = PAPER_TIME_LIMIT_S,
    seed: int = 0,
    host_env: Mapping[str, str] | None = None,
    image: str | None = None,
    obfuscated_description: str | None = None,
) -> RunSpec:
    """The run spec for ``agent``: its image, start command, variables and egress grant.

    Raises ``AgentConfigError`` if a variable the agent needs is not in ``host_env``.
    """
    from runner.images import agent_image_ref

    host_env = os.environ if host_env is None else host_env
    return RunSpec(
        image=image or agent_image_ref(agent),
        command=agent.start,
        competition_id=competition_id,
        env=agent.environment(host_env),
        secret_env=frozenset(agent.secret_names),
        llm_base_url=agent.llm_base_url(host_env),
        resources=resources,
        time_limit_s=time_limit_s,
        network=NetworkPolicy(egress=agent.egress),
        seed=seed,
        agent_name=agent.name,
        local_workdir=agent.directory,
        obfuscated_description=obfuscated_description,
    )


def public_data_dir(data_dir: Path, competition_id: str) -> Path:
    """The competition's public folder in MLE-bench's prepared layout."""
    return Path(data_dir) / competition_id / "prepared" / "public"


def client_script() -> str:
    """``validate_submission.sh``: a ``sh`` wrapper running the stdlib client with python3."""
    source = resources.files("runner").joinpath("validation_client.py").read_text()
    return (
        "#!/bin/sh\n"
        "# Ask mleboard's validation service whether a submission is well formed.\n"
        "# Usage: validate_submission.sh SUBMISSION_FILE\n"
        "exec python3 - \"$@\" <<'MLEBOARD_VALIDATION_CLIENT'\n"
        f"{source}\n"
        "MLEBOARD_VALIDATION_CLIENT\n"
    )


def _prepare_dirs(dirs: RunDirs, spec: RunSpec) -> None:
    """The run's folders, all the harness's own: a container's outputs are copied into
    them at the end (never mounted), the local backend's agent writes them directly.
    A run on an obfuscated description gets MLE-bench's other instructions (no Kaggle
    named) and that description in place of the public folder's."""
    for path in (dirs.submission, dirs.logs, dirs.code, dirs.snapshots, dirs.support):
        path.mkdir(parents=True, exist_ok=True)
    obfuscated = spec.obfuscated_description is not None
    instructions = "instructions_obfuscated.txt" if obfuscated else "instructions.txt"
    (dirs.support / "instructions.txt").write_text(
        resources.files("runner").joinpath(instructions).read_text()
    )
    if obfuscated:
        dirs.description_override.write_text(spec.obfuscated_description, encoding="utf-8")
    script = dirs.support / "validate_submission.sh"
    script.write_text(client_script())
    script.chmod(0o755)


def regular_submission(dirs: RunDirs) -> Path | None:
    """The agent's ``submission.csv`` if it is a regular file, else ``None``.

    A symlink is refused: it would make the harness read a host file of the agent's choice
    (the private answers, say) as the submission.
    """
    path = dirs.submission / SUBMISSION_FILENAME
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    return path if stat.S_ISREG(info.st_mode) else None


def run_agent(
    spec: RunSpec,
    *,
    data_dir: Path,
    output_dir: Path,
    backend: Backend | str = "docker",
    control: RunControl | None = None,
    cancel: threading.Event | None = None,
    heartbeat: Callable[[], None] | None = None,
    snapshot_interval_s: float | None = DEFAULT_SNAPSHOT_INTERVAL_S,
    validator: Validator | None = None,
    validation_rate: RateLimit | None = None,
) -> RunOutcome:
    """Run ``spec`` on ``data_dir``'s competition, writing everything into ``output_dir``.

    ``data_dir`` is MLE-bench's prepared-data root: only its
    ``<competition>/prepared/public`` folder reaches the agent; the validation service
    reads the private answers on the host. ``cancel`` (or ``control.cancel``) stops the
    run; ``heartbeat`` is called periodically while the agent runs. Snapshots of the
    submission are taken every ``snapshot_interval_s`` seconds (``None``: never).
    Returns the outcome; raises ``ValueError`` if ``output_dir`` is not empty.
    """
    backend = make_backend(backend) if isinstance(backend, str) else backend
    control = control or RunControl()
    control.llm_usage = None
    if cancel is not None:
        control.cancel = cancel
    if heartbeat is not None:
        control.heartbeat = heartbeat
    output = Path(output_dir).resolve()
    if output.exists() and any(output.iterdir()):
        raise ValueError(f"output folder {output} is not empty")
    dirs = RunDirs(
        output=output,
        data=public_data_dir(Path(data_dir).resolve(), spec.competition_id),
        # Unix socket paths are limited to ~107 bytes: keep the socket's folder short.
        validation_dir=Path(tempfile.mkdtemp(prefix="mleboard-val-")),
    )
    wall_start = time.monotonic()
    _prepare_dirs(dirs, spec)
    sink = LogSink(dirs.run_log, spec.log_cap_bytes, spec.secret_values)
    # Snapshots share one budget, the outputs' own: the host keeps at most twice it.
    snapshots = Snapshots(
        dirs.snapshots,
        snapshot_interval_s,
        spec.submission_max_bytes,
        spec.output_max_bytes,
        say=sink.write_line,
    )
    user_snapshots = control.snapshots
    control.snapshots = snapshots
    service = ValidationService(
        spec.competition_id,
        Path(data_dir),
        dirs.validation,
        validator=validator,
        rate_limit=validation_rate,
        calls_path=dirs.validation_calls,
    )
    result = None
    detail = ""
    try:
        if not dirs.data.is_dir():
            raise HarnessError(f"no public data for {spec.competition_id} at {dirs.data}")
        with service:
            result = backend.run(spec, dirs, control, sink)
    except Exception as exc:  # any failure of ours is a harness error, recorded not raised
        detail = f"{type(exc).__name__}: {exc}"
        sink.write_line(f"harness error: {detail}")
    finally:
        control.snapshots = user_snapshots
        sink.close()
        shutil.rmtree(dirs.validation, ignore_errors=True)
    llm_usage = control.llm_usage
    if llm_usage is not None:
        dirs.llm_usage.write_text(json.dumps(llm_usage, indent=1) + "\n")
    if snapshots.skipped:
        detail = "; ".join(d for d in (detail, snapshots.skipped) if d)
    submission = regular_submission(dirs)
    if submission is None and (dirs.submission / SUBMISSION_FILENAME).is_symlink():
        detail = (detail + "; " if detail else "") + "submission.csv is a symlink: ignored"
    collected_at = time.time()

    overhead: dict[str, float] = {}
    message = ""
    if result is None:
        outcome, exit_code = Outcome.HARNESS_ERROR, None
        duration = time.monotonic() - wall_start
    else:
        outcome, exit_code = result.outcome, result.exit_code
        detail = "; ".join(d for d in (result.detail, detail) if d)
        if result.outputs_exceeded:
            detail = "; ".join(d for d in (result.outputs_exceeded, detail) if d)
            if outcome is Outcome.COMPLETED or outcome is Outcome.FAILED:
                outcome = Outcome.FAILED
                message = outputs_exceeded_message(result.outputs_limit or spec.output_max_bytes)
        if result.started_at is not None:
            overhead["create_to_start_s"] = result.started_at - result.create_requested_at
        if result.exited_at is not None:
            overhead["exit_to_collected_s"] = collected_at - result.exited_at
        if result.started_at is not None and result.exited_at is not None:
            duration = result.exited_at - result.started_at
        else:
            duration = time.monotonic() - wall_start
    return RunOutcome(
        outcome=outcome,
        message=message or OUTCOME_MESSAGES[outcome],
        exit_code=exit_code,
        duration_s=duration,
        submission_path=submission,
        logs_path=dirs.run_log,
        output_dir=dirs.output,
        backend=backend.name,
        # Granted only if the agent ran with it (a run refused for want of a network did not).
        egress_granted=spec.network.egress and result is not None,
        snapshots=snapshots.taken,
        overhead=overhead,
        detail=detail,
        validation_counts=dict(service.counts),
        llm_usage=llm_usage,
        confinement=result.confinement if result is not None else "",
    )
