"""Small builders of synthetic MLE-bench data folders for grader tests.

    layout = CompetitionLayout(tmp_path, "spaceship-titanic")
    layout.write_answers({"PassengerId": ids, "Transported": labels})
    submission = layout.write_submission("perfect.csv", {"PassengerId": ids, ...})

Files follow MLE-bench's prepared layout: ``<data>/<id>/prepared/{public,private}/``.
Columns are written with Python's csv module, so values appear exactly as given (strings
stay strings, floats use ``repr``), which keeps the tests in control of the bytes.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_IDS = ("demo-digits", "demo-breast-cancer", "demo-diabetes", "demo-wine")


def format_value(value: object) -> str:
    """A cell as pandas' ``to_csv`` would write it (NaN/None -> empty, floats via repr)."""
    if value is None:
        return ""
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return ""
        return repr(float(value))
    if isinstance(value, np.integer):
        return str(int(value))
    if isinstance(value, np.bool_):
        return str(bool(value))
    return str(value)


def write_csv(path: Path, columns: Mapping[str, Sequence[object]]) -> Path:
    """Write ``columns`` (name -> values, all the same length) as a CSV file; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    names = list(columns)
    lengths = {len(values) for values in columns.values()}
    assert len(lengths) <= 1, f"columns differ in length: {lengths}"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(names)
        for row in zip(*(columns[name] for name in names), strict=True):
            writer.writerow([format_value(v) for v in row])
    return path


class CompetitionLayout:
    """One competition's prepared folders under a temporary data directory."""

    def __init__(self, data_dir: Path, competition_id: str, answers: str | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.competition_id = competition_id
        self.root = self.data_dir / competition_id / "prepared"
        self.public = self.root / "public"
        self.private = self.root / "private"
        self.answers_path = self.data_dir / (
            answers or f"{competition_id}/prepared/private/test.csv"
        )
        self.submissions = self.data_dir / "submissions"

    def write_answers(self, columns: Mapping[str, Sequence[object]]) -> Path:
        return write_csv(self.answers_path, columns)

    def write_answers_text(self, text: str) -> Path:
        self.answers_path.parent.mkdir(parents=True, exist_ok=True)
        self.answers_path.write_text(text, encoding="utf-8")
        return self.answers_path

    def write_sample_submission(self, columns: Mapping[str, Sequence[object]]) -> Path:
        return write_csv(self.public / "sample_submission.csv", columns)

    def write_submission(self, name: str, columns: Mapping[str, Sequence[object]]) -> Path:
        return write_csv(self.submissions / self.competition_id / name, columns)

    def write_submission_text(self, name: str, text: str | bytes) -> Path:
        path = self.submissions / self.competition_id / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path


def string_ids(n: int, prefix: str = "id", seed: int = 0) -> list[str]:
    """``n`` distinct text ids in a shuffled order (so alignment by id is exercised)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    return [f"{prefix}_{i:06d}" for i in order]


def int_ids(n: int, start: int = 1, seed: int = 0) -> list[int]:
    """``n`` distinct integer ids, shuffled."""
    rng = np.random.default_rng(seed)
    return [int(start + i) for i in rng.permutation(n)]


def shuffled(columns: Mapping[str, Sequence[object]], seed: int = 1) -> dict[str, list]:
    """The same rows in another order (a correct submission need not follow the answers)."""
    n = len(next(iter(columns.values())))
    order = np.random.default_rng(seed).permutation(n)
    return {name: [values[i] for i in order] for name, values in columns.items()}


def replace_column(
    columns: Mapping[str, Sequence[object]], name: str, values: Sequence[object]
) -> dict[str, list]:
    """A copy of ``columns`` with ``name`` replaced (or added)."""
    result = {k: list(v) for k, v in columns.items()}
    result[name] = list(values)
    return result


def drop_rows(columns: Mapping[str, Sequence[object]], rows: Sequence[int]) -> dict[str, list]:
    """A copy without the given row positions."""
    gone = set(rows)
    return {k: [v for i, v in enumerate(vals) if i not in gone] for k, vals in columns.items()}
