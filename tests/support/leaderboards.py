"""A private leaderboard written as MLE-bench ships one, with the ids and labels the
grading tests answer."""

from __future__ import annotations

from pathlib import Path

from tests.support.synthetic import write_csv

IDS = [f"t{i:03d}" for i in range(20)]


LABELS = [i % 4 for i in range(20)]


def write_leaderboard(path: Path, scores: list[float]) -> Path:
    """A leaderboard.csv in MLE-bench's format, best first."""
    return write_csv(
        path,
        {
            "scoreNullable": scores,
            "teamId": list(range(1, len(scores) + 1)),
            "hasTeamName": [True] * len(scores),
            "submissionDate": ["2020-01-01 00:00:00"] * len(scores),
            "score": scores,
            "hasScore": [True] * len(scores),
        },
    )
