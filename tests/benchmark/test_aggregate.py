from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from benchmark.aggregate import (
    METRIC_NAMES,
    AggregationError,
    aggregate,
    mlebench_summary,
    read_reports_in_mlebench_order,
)
from benchmark.catalogue import CompetitionFacts, competitions_in_split
from benchmark.reports import CompetitionReport, write_grading_report


def run(cid: str, seed: int | None = None, outcome: str = "none", **changes) -> CompetitionReport:
    """A report whose outcome is one of none|submitted|valid|median|bronze|silver|gold."""
    stages = ["none", "submitted", "valid", "median", "bronze", "silver", "gold"]
    level = stages.index(outcome)
    medal = {4: "bronze_medal", 5: "silver_medal", 6: "gold_medal"}.get(level)
    fields = {
        "competition_id": cid,
        "score": 0.5 if level >= 2 else None,
        "gold_threshold": 0.9,
        "silver_threshold": 0.8,
        "bronze_threshold": 0.7,
        "median_threshold": 0.4,
        "any_medal": medal is not None,
        "gold_medal": medal == "gold_medal",
        "silver_medal": medal == "silver_medal",
        "bronze_medal": medal == "bronze_medal",
        "above_median": level >= 3,
        "submission_exists": level >= 1,
        "valid_submission": level >= 2,
        "is_lower_better": False,
        "created_at": datetime(2024, 10, 1),
        "submission_path": f"{cid}/submission.csv",
        "seed": seed,
    }
    fields.update(changes)
    return CompetitionReport(**fields)


def facts(cid: str, category: str, complexity: str = "low") -> CompetitionFacts:
    return CompetitionFacts(
        id=cid,
        name=cid,
        category=category,
        complexity=complexity,
        metric="accuracy",
        lower_is_better=False,
        awards_medals=True,
        splits=(complexity, "all"),
        competition_type="simple",
        id_column="id",
        target_columns=("y",),
        answers=f"{cid}/prepared/private/test.csv",
        sample_submission=f"{cid}/prepared/public/sample_submission.csv",
    )


TINY = {
    "a": facts("a", "Tabular"),
    "b": facts("b", "Tabular"),
    "c": facts("c", "Image Classification", "medium"),
    "d": facts("d", "Text Classification", "medium"),
}


def test_hand_computed_explicit_seeds():
    outcomes = {  # seed -> outcome per competition a, b, c, d
        1: ["gold", "none", "median", "valid"],
        2: ["bronze", "silver", "submitted", "valid"],
        3: ["valid", "none", "none", "gold"],
    }
    reports = [
        run(cid, seed, outcome)
        for seed, row in outcomes.items()
        for cid, outcome in zip("abcd", row, strict=True)
    ]
    result = aggregate(reports, split="all", catalogue=TINY)
    assert result["seeding"] == "explicit" and result["num_seeds_averaged"] == 3
    any_medal = [25.0, 50.0, 25.0]  # per seed, over 4 competitions
    figure = result["metrics"]["any_medal_percentage"]
    assert figure["mean"] == pytest.approx(100 / 3)
    sem = np.std(any_medal, ddof=1) / math.sqrt(3)
    assert figure["standard_error"] == pytest.approx(sem)
    assert figure["ci_lower"] == pytest.approx(100 / 3 - 1.96 * sem)
    assert figure["ci_upper"] == pytest.approx(100 / 3 + 1.96 * sem)
    assert result["metrics"]["submission_exists_percentage"]["mean"] == pytest.approx(
        (75 + 100 + 50) / 3
    )
    assert result["metrics"]["valid_submissions_percentage"]["mean"] == pytest.approx(
        (75 + 75 + 50) / 3
    )
    assert result["metrics"]["total_competitions"] == {
        "mean": 4.0,
        "ci_lower": 4.0,
        "ci_upper": 4.0,
        "standard_error": 0.0,
    }
    assert [s["seed"] for s in result["seeds"]] == [1, 2, 3]
    assert result["seeds"][1]["counts"]["any_medal"] == 2
    # Per category: Tabular = a, b.
    tabular = result["by_category"]["Tabular"]
    assert tabular["num_competitions"] == 2
    assert tabular["metrics"]["any_medal_percentage"]["mean"] == pytest.approx((50 + 100 + 0) / 3)
    assert list(result["by_complexity"]) == ["low", "medium"]
    assert list(result["by_category"]) == ["Image Classification", "Tabular", "Text Classification"]
    assert result["by_complexity"]["medium"]["metrics"]["gold_medal_percentage"]["mean"] == (
        pytest.approx((0 + 0 + 50) / 3)
    )
    # Funnel and pass@k.
    assert [s["stage"] for s in result["funnel"]] == [
        "made_submission",
        "valid_submission",
        "above_median",
        "any_medal",
    ]
    assert [s["runs"] for s in result["funnel"]] == [9, 8, 5, 4]
    per = {row["competition_id"]: row for row in result["per_competition"]}
    assert per["a"]["any_medal"] == 2 and per["c"]["any_medal"] == 0
    curve = result["pass_at_k"]["values"]
    assert result["pass_at_k"]["n"] == 3
    assert curve[0]["percentage"] == pytest.approx(figure["mean"])  # pass@1 = mean
    assert curve[-1]["percentage"] == pytest.approx(75.0)  # a, b, d ever medalled
    json.dumps(result, allow_nan=False)  # plain JSON


def test_incomplete_explicit_seeds_dropped_or_padded():
    reports = [run(c, 1, "gold") for c in "abcd"] + [run(c, 2, "bronze") for c in "abc"]
    strict = aggregate(reports, catalogue=TINY)
    assert strict["num_seeds_averaged"] == 1
    assert "seed 2 was left out" in strict["warnings"][0]
    padded = aggregate(reports, catalogue=TINY, pad_missing=True)
    assert padded["num_seeds_averaged"] == 2
    assert padded["seeds"][1]["missing_runs"] == 1
    assert padded["metrics"]["any_medal_percentage"]["mean"] == pytest.approx((100 + 75) / 2)
    assert padded["per_competition"][3]["missing_runs"] == 1


def test_seeding_errors():
    with pytest.raises(AggregationError, match="two reports for a with seed 1"):
        aggregate([run("a", 1), run("a", 1)] + [run(c, 1) for c in "bcd"], catalogue=TINY)
    with pytest.raises(AggregationError, match="have a seed and the others do not"):
        aggregate([run("a", 1), run("b")], catalogue=TINY)
    with pytest.raises(AggregationError, match="explicit seeding needs a seed"):
        aggregate([run("a")], catalogue=TINY, seeding="explicit")
    with pytest.raises(AggregationError, match="no complete seed"):
        aggregate([run("a", 1)], catalogue=TINY)
    with pytest.raises(AggregationError, match="missing reports for competitions: b, c, d"):
        aggregate([run("a")], catalogue=TINY)
    with pytest.raises(AggregationError, match="requested 2 seeds"):
        aggregate([run(c) for c in "abcd"], catalogue=TINY, num_seeds=2)
    with pytest.raises(AggregationError, match="no competitions in split 'dev'"):
        aggregate([], split="dev", catalogue=TINY)


def test_reports_outside_split_are_ignored_with_a_warning():
    reports = [run(c, 1, "gold") for c in "ab"] + [run("c", 1, "gold")]
    result = aggregate(reports, split="low", catalogue=TINY)
    assert result["num_competitions_per_seed"] == 2
    assert "1 reports are for competitions outside split 'low'" in result["warnings"][0]


def test_groups_recombine_into_the_whole():
    rng = random.Random(5)
    stages = ["none", "submitted", "valid", "median", "bronze", "silver", "gold"]
    low = competitions_in_split("all")
    reports = [run(f.id, s, rng.choice(stages)) for s in range(4) for f in low]
    result = aggregate(reports, split="all")
    assert list(result["by_complexity"]) == ["low", "medium", "high"]
    for grouping in ("by_category", "by_complexity"):
        groups = result[grouping].values()
        assert sum(g["num_competitions"] for g in groups) == 75
        for name in METRIC_NAMES[1:]:
            weighted = sum(g["num_competitions"] * g["metrics"][name]["mean"] for g in groups) / 75
            assert weighted == pytest.approx(result["metrics"][name]["mean"])


# ----------------------------------------------------------------------------------------
# MLE-bench's experiments/aggregate_grading_reports.py, restated for the test: files read
# in sorted order, each file's reports sorted by competition id, the i-th report of each
# competition forms seed i; complete seeds only (fewest reports) or zero padding (most).


def mlebench_reference(paths, split_ids, pad_missing=False, num_seeds=-1) -> dict:
    flat = []
    for path in sorted(paths):
        entries = json.loads(Path(path).read_text())["competition_reports"]
        flat += sorted(entries, key=lambda e: str(e["competition_id"]))
    per_comp = defaultdict(list)
    for entry in flat:
        per_comp[entry["competition_id"]].append(entry)
    counts = [len(per_comp[c]) for c in split_ids]
    if not pad_missing and min(counts) == 0:
        raise ValueError("missing")
    available = max(counts) if pad_missing else min(counts)
    n = available if num_seeds == -1 else min(num_seeds, available)
    zero = dict.fromkeys(
        [
            "gold_medal",
            "silver_medal",
            "bronze_medal",
            "above_median",
            "submission_exists",
            "valid_submission",
        ],
        False,
    )
    rows = []
    for i in range(n):
        seed = [per_comp[c][i] if i < len(per_comp[c]) else zero for c in split_ids]
        total = len(seed)

        def pct(test, seed=seed, total=total):
            return sum(1 for e in seed if test(e)) / total * 100

        rows.append(
            {
                "total_competitions": total,
                "submission_exists_percentage": pct(lambda e: e["submission_exists"]),
                "valid_submissions_percentage": pct(lambda e: e["valid_submission"]),
                "above_median_percentage": pct(lambda e: e["above_median"]),
                "gold_medal_percentage": pct(lambda e: e["gold_medal"]),
                "silver_medal_percentage": pct(lambda e: e["silver_medal"]),
                "bronze_medal_percentage": pct(lambda e: e["bronze_medal"]),
                "any_medal_percentage": pct(
                    lambda e: e["gold_medal"] or e["silver_medal"] or e["bronze_medal"]
                ),
            }
        )
    metrics = {}
    for key in rows[0]:
        values = [float(r[key]) for r in rows]
        mean = float(np.mean(values))
        sem = float(stats.sem(values, ddof=1)) if len(values) > 1 else 0.0
        metrics[key] = {
            "mean": mean,
            "ci_lower": mean - 1.96 * sem,
            "ci_upper": mean + 1.96 * sem,
            "standard_error": sem,
        }
    return {
        "num_seeds_averaged": n,
        "num_competitions_per_seed": len(split_ids),
        "metrics": metrics,
    }


def write_run_groups(tmp_path: Path, split: str, rng: random.Random, drop: float) -> list[str]:
    """Run-group report files like MLE-bench's runs/: several seeds per file, some runs
    missing, reports of competitions outside the split mixed in, files listed unsorted."""
    stages = ["none", "submitted", "valid", "median", "bronze", "silver", "gold"]
    ids = [f.id for f in competitions_in_split(split)] + ["spaceship-titanic"]
    paths = []
    for group in rng.sample(range(6), 6):
        reports = [
            run(cid, None, rng.choice(stages))
            for _ in range(rng.randint(1, 2))
            for cid in rng.sample(ids, len(ids))
            if rng.random() > drop
        ]
        path = tmp_path / f"2024-10-0{group}_run-group-{group}" / "grading_report.json"
        write_grading_report(path, reports)
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("split", ["low", "all"])
@pytest.mark.parametrize("trial", range(4))
def test_reproduces_mlebench_aggregation(tmp_path, split, trial):
    rng = random.Random(f"{split}-{trial}")
    paths = write_run_groups(tmp_path, split, rng, drop=0.0 if trial == 0 else 0.15)
    split_ids = [f.id for f in competitions_in_split(split)]
    reports = read_reports_in_mlebench_order(paths)
    for pad_missing in (False, True):
        try:
            expected = mlebench_reference(paths, split_ids, pad_missing)
        except ValueError:
            with pytest.raises(AggregationError):
                aggregate(reports, split=split, seeding="positional", pad_missing=pad_missing)
            continue
        ours = aggregate(reports, split=split, seeding="auto", pad_missing=pad_missing)
        assert ours["seeding"] == "positional"
        assert mlebench_summary(ours) == expected  # bit for bit
    expected = mlebench_reference(paths, split_ids, True, num_seeds=2)
    ours = aggregate(reports, split=split, pad_missing=True, num_seeds=2)
    assert mlebench_summary(ours) == expected


def test_mlebench_names_and_order():
    result = aggregate([run(c, 0) for c in "abcd"], catalogue=TINY)
    assert tuple(result["metrics"]) == METRIC_NAMES
    assert list(result["metrics"]["any_medal_percentage"]) == [
        "mean",
        "ci_lower",
        "ci_upper",
        "standard_error",
    ]
    assert list(mlebench_summary(result)) == [
        "num_seeds_averaged",
        "num_competitions_per_seed",
        "metrics",
    ]
