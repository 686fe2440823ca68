"""``mleboard run``, ``mleboard images`` and ``mleboard reap``: run agents without the web app.

Here ``runner`` (which runs agents) and ``benchmark`` (which grades) meet on the command
line: the run's outcome and, when the data has private answers, its grade report are
printed together as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from cli import CommandError
from config import env

DEFAULT_BACKEND_ENV = "MLEBOARD_RUN_BACKEND"


def register(subparsers) -> None:
    """Add ``run``, ``images`` and ``reap`` to the ``mleboard`` parser."""
    _add_run(subparsers)
    _add_images(subparsers)
    _add_reap(subparsers)


# ---------------------------------------------------------------- run


def _add_run(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run an agent on one (competition, seed) and print the outcome as JSON",
        description=(
            "Run one agent on one competition (one seed), in a container (docker backend) or "
            "as a local process (local backend: confined as well as the host allows, no "
            "container; the outcome's `confinement` says what the agent could read). "
            "Prints a JSON outcome; with private answers in DATA, also the grade report. "
            "Exit code 0 when the agent completed, 1 for any other outcome."
        ),
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--agent", help="a shipped agent (dummy, baseline, aide, openhands)")
    which.add_argument("--agent-dir", type=Path, help="an agent folder (agent.yaml, Dockerfile)")
    parser.add_argument("--competition", required=True, help="competition id")
    parser.add_argument("--data-dir", required=True, type=Path, help="MLE-bench prepared data root")
    parser.add_argument(
        "--output-dir", required=True, type=Path, help="the run's folder (new or empty)"
    )
    parser.add_argument(
        "--backend",
        choices=("docker", "local"),
        default=env(DEFAULT_BACKEND_ENV),
        help=f"execution backend (default: ${DEFAULT_BACKEND_ENV} or docker)",
    )
    parser.add_argument(
        "--time-limit", type=float, default=24 * 3600, help="seconds (default: 86400, the paper's)"
    )
    parser.add_argument("--memory", default="440g", help="memory limit (default: 440g)")
    parser.add_argument(
        "--cpus",
        type=float,
        default=float(min(36, os.cpu_count() or 1)),
        help="CPUs (default: 36, the paper's, or this host's count if smaller)",
    )
    parser.add_argument(
        "--gpus", type=int, default=0, help="GPUs (default: 0; the paper used 1 A10)"
    )
    parser.add_argument("--shm", default="4g", help="shared memory (default: 4g)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default: 0)")
    parser.add_argument(
        "--snapshot-interval",
        type=float,
        default=3600.0,
        help="copy submission.csv every N seconds for time scaling (default: 3600; 0: never)",
    )
    parser.set_defaults(handler=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from runner import AgentConfigError, Resources, find_agent, load_agent, parse_size
    from runner.harness import run_agent, spec_for_agent

    try:
        agent = load_agent(args.agent_dir) if args.agent_dir else find_agent(args.agent)
        resources = Resources(
            cpus=args.cpus,
            memory=parse_size(args.memory),
            shm=parse_size(args.shm),
            gpus=args.gpus,
        )
        spec = spec_for_agent(
            agent,
            args.competition,
            resources=resources,
            time_limit_s=args.time_limit,
            seed=args.seed,
        )
        outcome = run_agent(
            spec,
            data_dir=args.data_dir,
            output_dir=args.output_dir,
            backend=args.backend,
            snapshot_interval_s=args.snapshot_interval or None,
        )
    except (AgentConfigError, ValueError) as error:
        raise CommandError(str(error)) from error
    result = outcome.to_json()
    result.update({"agent": agent.name, "competition_id": args.competition, "seed": args.seed})
    private = args.data_dir / args.competition / "prepared" / "private"
    if private.is_dir():
        try:
            result["grade_report"] = grade_report(
                outcome.submission_path, args.competition, args.data_dir, args.seed
            )
            result["snapshot_grades"] = [
                {
                    "elapsed_s": round(snapshot.elapsed_s, 3),
                    **grade_report(snapshot.path, args.competition, args.data_dir, args.seed),
                }
                for snapshot in outcome.snapshots
            ]
        except Exception as error:  # grading failed (infrastructure): keep the run's outcome
            result["grade_report"] = None
            result["grade_error"] = f"{type(error).__name__}: {error}"
    json.dump(result, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
    return 0 if result["outcome"] == "completed" else 1


def grade_report(submission: Path | None, competition_id: str, data_dir: Path, seed: int) -> dict:
    """MLE-bench's report for a run's submission, with medals from the competition's
    leaderboard when one is found beside the data. ``submission=None``: the agent wrote none."""
    from benchmark.grading import grade_submission_run
    from benchmark.leaderboard import find_leaderboard, read_leaderboard

    path = find_leaderboard(competition_id, data_dir=data_dir)
    leaderboard = read_leaderboard(path) if path else None
    return grade_submission_run(
        submission, competition_id, data_dir, leaderboard, seed=seed
    ).to_dict()


# ---------------------------------------------------------------- images


def _add_images(subparsers) -> None:
    parser = subparsers.add_parser(
        "images",
        help="build the base image (debootstrap) and the agents' images, with no registry",
        description=(
            "Build mleboard's base image (a Debian root filesystem with Python 3, numpy, pandas "
            "and scikit-learn, made by debootstrap and imported into the engine; needs root) and "
            "the agents' images FROM it. Tags are content hashes: what exists is not rebuilt. "
            "An agent that pins wheels (aide, openhands) gets them downloaded once into the "
            "wheelhouse on this host ($MLEBOARD_WHEELHOUSE, default ~/.cache/mleboard/wheelhouse) "
            "and builds with no network. Default: the shipped agents whose build needs no "
            "network (all of them)."
        ),
    )
    parser.add_argument(
        "--agent-dir", type=Path, action="append", default=[], help="an agent folder (repeatable)"
    )
    parser.add_argument(
        "--agent", action="append", default=[], help="a shipped agent by name (repeatable)"
    )
    parser.add_argument("--force", action="store_true", help="rebuild even if the tag exists")
    parser.add_argument(
        "--stack",
        action="store_true",
        help="instead, the images compose.yaml runs, from Debian's packages: the site's base "
        "(Python 3.11 and pyproject.toml's dependencies), PostgreSQL and Redis; prints the "
        "variables that make compose use them (VAR=image lines, for an --env-file)",
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=Path("."),
        help="with --stack: the checkout the Dockerfile builds (default: this folder)",
    )
    parser.set_defaults(handler=cmd_images)


def cmd_images(args: argparse.Namespace) -> int:
    from runner import AgentConfigError, HarnessError, find_agent, load_agent, shipped_agents
    from runner.images import build_images

    try:
        agents = [load_agent(d) for d in args.agent_dir] + [find_agent(n) for n in args.agent]
        if not agents:
            agents = [a for a in shipped_agents().values() if not a.build_network]
    except AgentConfigError as error:
        raise CommandError(str(error)) from error
    client = _engine()

    def progress(message: str) -> None:
        print(f"mleboard images: {message}", file=sys.stderr, flush=True)

    if args.stack:
        return _stack_images(client, args.source, args.force, progress)
    try:
        built = build_images(client, agents, force=args.force, progress=progress)
    except HarnessError as error:
        raise CommandError(str(error)) from error
    for image in built:
        state = f"built in {image.seconds:.1f}s" if image.built else "up to date"
        print(f"{image.ref}\t{state}")
    return 0


def _stack_images(client, source: Path, force: bool, progress) -> int:
    from runner import HarnessError
    from runner.stack_images import build_stack_images, compose_variables

    if not (source / "pyproject.toml").is_file() or not (source / "Dockerfile").is_file():
        raise CommandError(
            f"{source} is not a checkout of mleboard (no pyproject.toml, Dockerfile)"
        )
    try:
        built = build_stack_images(client, source, force=force, progress=progress)
    except HarnessError as error:
        raise CommandError(str(error)) from error
    for image in built:
        state = f"built in {image.seconds:.1f}s" if image.built else "up to date"
        size = client.images.get(image.ref).attrs["Size"] / 1e6
        progress(f"{image.ref}\t{state}\t{size:.0f} MB")
    for name, ref in compose_variables(source).items():
        print(f"{name}={ref}")
    return 0


# ---------------------------------------------------------------- reap


def _add_reap(subparsers) -> None:
    parser = subparsers.add_parser(
        "reap",
        help="remove run containers past their deadline (or exited) from the Docker engine",
        description=(
            "Remove mleboard's run containers that should no longer exist: running past the "
            "deadline in their labels plus the kill grace, exited, or created and never "
            "started. Each container ends itself at that time; this is the second line, for "
            "a container whose watchdog failed. Prints what was removed as JSON."
        ),
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=None,
        help="seconds after a deadline before removing (default: $MLEBOARD_RUN_KILL_GRACE_S or "
        "30), for containers that carry no kill-after label",
    )
    parser.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    parser.set_defaults(handler=cmd_reap)


def cmd_reap(args: argparse.Namespace) -> int:
    from runner.reaper import reap_expired

    client = _engine()
    try:
        removed = reap_expired(client, grace_s=args.grace, dry_run=args.dry_run)
    except ValueError as error:  # a malformed MLEBOARD_RUN_KILL_GRACE_S
        raise CommandError(str(error)) from error
    json.dump({"removed": removed, "dry_run": args.dry_run}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _engine():
    """The Docker engine from the environment; ``CommandError`` if none answers."""
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as error:  # the SDK's several ways of saying "no engine"
        raise CommandError(
            f"no Docker engine reachable ({error}); run scripts/docker-up.sh"
        ) from error
    return client
