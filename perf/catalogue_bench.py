"""Time to grade every competition's perfect submission on the synthetic catalogue.

    .venv/bin/python perf/catalogue_bench.py                 # n_rows=2000
    .venv/bin/python perf/catalogue_bench.py --rows 20000
    .venv/bin/python perf/catalogue_bench.py --rows 500 spaceship-titanic AI4Code

Each is graded twice in one process: ``first`` with reading the answers and lazy imports,
``again`` with the answers cached (method: docs/benchmarks.md). Prints one line per
competition, the slowest five and the totals; exits 1 if a perfect submission is invalid
or misses its best score.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import graders  # noqa: E402
from tests.support.catalogue_data import build_catalogue, same_score  # noqa: E402


def _submission_rows(path: Path) -> int:
    with path.open("rb") as handle:
        return max(0, sum(1 for _ in handle) - 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("competitions", nargs="*", help="competition ids (default: all)")
    parser.add_argument("--rows", type=int, default=2000, help="n_rows per competition")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    ids = args.competitions or graders.known_competitions()

    with tempfile.TemporaryDirectory(prefix="catalogue-bench-") as folder:
        started = time.perf_counter()
        catalogue = build_catalogue(Path(folder), ids, seed=args.seed, n_rows=args.rows)
        build_seconds = time.perf_counter() - started
        print(f"built {len(catalogue)} competitions, n_rows={args.rows}: {build_seconds:.2f} s")
        print(f"{'competition':58} {'metric':32} {'rows':>7} {'first s':>8} {'again s':>8}")
        timings: dict[str, tuple[float, float]] = {}
        problems = []
        for cid, comp in catalogue.items():
            times = []
            for _ in range(2):
                started = time.perf_counter()
                result = graders.grade_submission(comp.perfect_submission, cid, comp.data_dir)
                times.append(time.perf_counter() - started)
            timings[cid] = (times[0], times[1])
            good = result.valid_submission and (
                comp.best_score is None or same_score(result.score, comp.best_score)
            )
            if not good:
                problems.append(f"{cid}: score {result.score}, error {result.error}")
            metric = graders.grader_for(cid).metric
            rows = _submission_rows(comp.perfect_submission)
            print(f"{cid:58} {metric:32} {rows:7d} {times[0]:8.3f} {times[1]:8.3f}")

    print("\nslowest (first):")
    for cid, (first, again) in sorted(timings.items(), key=lambda kv: -kv[1][0])[:5]:
        print(f"  {cid:58} {first:8.3f} s (again {again:.3f} s)")
    first_total = sum(t[0] for t in timings.values())
    again_total = sum(t[1] for t in timings.values())
    print(
        f"\ntotal: first {first_total:.2f} s, again {again_total:.2f} s, build {build_seconds:.2f} s"
    )
    for problem in problems:
        print(f"PROBLEM {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
