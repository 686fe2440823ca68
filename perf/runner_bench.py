"""How much time the harness itself adds to a run, per backend.

For each backend, runs a trivial agent (``true``) N times and reports, in milliseconds:
``create_to_start`` (container creation requested / process spawn -> the agent's process
started), ``exit_to_collected`` (the agent exited -> outputs collected, container removed,
validation service stopped) and the whole ``run_agent`` call. The Docker backend needs an
engine and the base image (``mleboard images``).

    python perf/runner_bench.py [--runs 10] [--backend docker --backend local]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runner import Outcome, Resources, RunSpec, run_agent  # noqa: E402

COMPETITION = "bench-competition"


def tiny_data(root: Path) -> Path:
    public = root / COMPETITION / "prepared" / "public"
    public.mkdir(parents=True)
    (public / "train.csv").write_text("id,x,target\n1,0.5,1\n")
    (public / "test.csv").write_text("id,x\n2,0.7\n")
    (public / "sample_submission.csv").write_text("id,target\n2,0\n")
    (public / "description.md").write_text("# bench\n")
    return root


def measure(backend: str, runs: int, image: str) -> dict[str, list[float]]:
    command = ("true",) if backend == "docker" else (sys.executable, "-c", "pass")
    spec = RunSpec(
        image=image,
        command=command,
        competition_id=COMPETITION,
        resources=Resources(cpus=1, memory=256 * 1024**2, gpus=0),
        time_limit_s=60,
    )
    numbers: dict[str, list[float]] = {"create_to_start": [], "exit_to_collected": [], "total": []}
    with tempfile.TemporaryDirectory() as tmp:
        data = tiny_data(Path(tmp) / "data")
        for i in range(runs + 1):  # the first run warms caches and is not counted
            started = time.monotonic()
            outcome = run_agent(
                spec, data_dir=data, output_dir=Path(tmp) / f"out{i}", backend=backend
            )
            total = time.monotonic() - started
            if outcome.outcome is not Outcome.COMPLETED:
                raise SystemExit(f"{backend}: run {i} ended {outcome.outcome}: {outcome.detail}")
            if i == 0:
                continue
            numbers["create_to_start"].append(outcome.overhead["create_to_start_s"])
            numbers["exit_to_collected"].append(outcome.overhead["exit_to_collected_s"])
            numbers["total"].append(total)
    return numbers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--backend", action="append", choices=("docker", "local"))
    parser.add_argument("--image", help="image for the docker backend (default: the base image)")
    args = parser.parse_args()
    from runner.images import base_image_ref

    image = args.image or base_image_ref()
    print(f"harness overhead per run, ms (median / p90 / max over {args.runs} runs)")
    for backend in args.backend or ["docker", "local"]:
        numbers = measure(backend, args.runs, image)
        for key, values in numbers.items():
            ordered = sorted(values)
            p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
            print(
                f"{backend:7s} {key:18s} {statistics.median(values) * 1000:8.1f} "
                f"{p90 * 1000:8.1f} {max(values) * 1000:8.1f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
