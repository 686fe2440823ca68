"""Timings of the benchmark library's hot paths: `python perf/aggregate_bench.py`.

Prints the median wall time of each operation (no assertions: a measurement, not a test).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark.aggregate import aggregate  # noqa: E402
from benchmark.catalogue import competitions_in_split  # noqa: E402
from benchmark.leaderboard import read_leaderboard  # noqa: E402
from benchmark.medals import medal_thresholds, rank_score  # noqa: E402
from benchmark.reports import CompetitionReport  # noqa: E402


def timed(label: str, function, repeat: int = 7) -> None:
    repeat = 1 if "--quick" in sys.argv[1:] else repeat
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    print(f"{label:<55} {1000 * statistics.median(samples):9.2f} ms")


def reports_for(split: str, seeds: int) -> list[CompetitionReport]:
    rng = random.Random(0)
    out = []
    for seed in range(seeds):
        for facts in competitions_in_split(split):
            medal = rng.random() < 0.2
            out.append(
                CompetitionReport(
                    competition_id=facts.id,
                    score=rng.random(),
                    gold_threshold=0.9,
                    silver_threshold=0.8,
                    bronze_threshold=0.7,
                    median_threshold=0.5,
                    any_medal=medal,
                    gold_medal=medal,
                    silver_medal=False,
                    bronze_medal=False,
                    above_median=rng.random() < 0.4,
                    submission_exists=True,
                    valid_submission=rng.random() < 0.9,
                    is_lower_better=False,
                    created_at=datetime(2024, 1, 1),
                    submission_path="s.csv",
                    seed=seed,
                )
            )
    return out


def main() -> None:
    # --quick: one repeat and the small splits (a smoke run), not a measurement.
    quick = "--quick" in sys.argv[1:]
    scores = sorted((random.random() for _ in range(2000)), reverse=True)
    thresholds = medal_thresholds(scores, False)
    timed("medal_thresholds, N = 2000", lambda: medal_thresholds(scores, False))
    timed("rank_score x 10,000", lambda: [rank_score(0.5, thresholds) for _ in range(10_000)])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "leaderboard.csv"
        rows = ["scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore"]
        rows += [
            f"{s},{i},True,2022-01-01,{s},True" for i, s in enumerate(sorted(scores * 5)[::-1])
        ]
        path.write_text("\n".join(rows))
        timed("read_leaderboard, 10,000 rows", lambda: read_leaderboard(path, False))
    for split, seeds in (("low", 3),) if quick else (("low", 3), ("all", 10), ("all", 100)):
        reports = reports_for(split, seeds)
        timed(
            f"aggregate {split} x {seeds} seeds ({len(reports)} reports)",
            lambda r=reports, s=split: aggregate(r, split=s),
        )


if __name__ == "__main__":
    main()
