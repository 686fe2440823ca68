from __future__ import annotations

import json
import math
from datetime import datetime

import pytest

from benchmark.reports import (
    REPORT_KEYS,
    CompetitionReport,
    GradingReportError,
    grading_report_dict,
    grading_report_json,
    read_grading_report,
    submission_path_in_run,
    write_grading_report,
)

# A grading report as MLE-bench's grade_jsonl writes it (json.dump, indent=2): the
# total_* summary, then competition_reports with its 16 keys in its order.
MLEBENCH_REPORT = """{
  "total_runs": 3,
  "total_runs_with_submissions": 2,
  "total_valid_submissions": 2,
  "total_medals": 1,
  "total_gold_medals": 0,
  "total_silver_medals": 1,
  "total_bronze_medals": 0,
  "total_above_median": 1,
  "competition_reports": [
    {
      "competition_id": "spaceship-titanic",
      "score": 0.81234,
      "gold_threshold": 0.8222,
      "silver_threshold": 0.8105,
      "bronze_threshold": 0.80734,
      "median_threshold": 0.79541,
      "any_medal": true,
      "gold_medal": false,
      "silver_medal": true,
      "bronze_medal": false,
      "above_median": true,
      "submission_exists": true,
      "valid_submission": true,
      "is_lower_better": false,
      "created_at": "2024-10-01T13:05:22.123456",
      "submission_path": "runs/rg/spaceship-titanic_1/submission/submission.csv"
    },
    {
      "competition_id": "new-york-city-taxi-fare-prediction",
      "score": NaN,
      "gold_threshold": 2.83377,
      "silver_threshold": 2.88191,
      "bronze_threshold": 2.92371,
      "median_threshold": 3.59741,
      "any_medal": false,
      "gold_medal": false,
      "silver_medal": false,
      "bronze_medal": false,
      "above_median": false,
      "submission_exists": true,
      "valid_submission": true,
      "is_lower_better": true,
      "created_at": "2024-10-01T13:05:23",
      "submission_path": "runs/rg/nyc_1/submission/submission.csv"
    },
    {
      "competition_id": "aerial-cactus-identification",
      "score": null,
      "gold_threshold": 1.0,
      "silver_threshold": 1.0,
      "bronze_threshold": 1.0,
      "median_threshold": 0.9991,
      "any_medal": false,
      "gold_medal": false,
      "silver_medal": false,
      "bronze_medal": false,
      "above_median": false,
      "submission_exists": false,
      "valid_submission": false,
      "is_lower_better": false,
      "created_at": "2024-10-01T13:05:24.000001",
      "submission_path": "None"
    }
  ]
}"""


def report(**changes) -> CompetitionReport:
    fields = {
        "competition_id": "spaceship-titanic",
        "score": 0.8,
        "gold_threshold": 0.82,
        "silver_threshold": 0.81,
        "bronze_threshold": 0.80,
        "median_threshold": 0.79,
        "any_medal": True,
        "gold_medal": False,
        "silver_medal": False,
        "bronze_medal": True,
        "above_median": True,
        "submission_exists": True,
        "valid_submission": True,
        "is_lower_better": False,
        "created_at": datetime(2024, 10, 1, 12, 0, 0, 5),
        "submission_path": "submission.csv",
    }
    fields.update(changes)
    return CompetitionReport(**fields)


def test_mlebench_file_round_trips_byte_for_byte(tmp_path):
    source = tmp_path / "in_grading_report.json"
    source.write_text(MLEBENCH_REPORT)
    reports = read_grading_report(source)
    assert [r.competition_id for r in reports] == [
        "spaceship-titanic",
        "new-york-city-taxi-fare-prediction",
        "aerial-cactus-identification",
    ]
    assert math.isnan(reports[1].score) and reports[2].score is None
    assert reports[0].created_at == datetime(2024, 10, 1, 13, 5, 22, 123456)
    assert grading_report_json(reports) == MLEBENCH_REPORT
    out = tmp_path / "out" / "grading_report.json"
    write_grading_report(out, reports)
    assert out.read_text() == MLEBENCH_REPORT
    assert [p.name for p in out.parent.iterdir()] == ["grading_report.json"]  # no temp left


def test_to_dict_has_mlebench_keys_in_order_and_extras_only_when_set():
    plain = report()
    assert tuple(plain.to_dict()) == REPORT_KEYS
    extra = report(seed=3, error="bad column", grader_version="accuracy/1", percentile=71.5)
    data = extra.to_dict()
    assert tuple(data)[: len(REPORT_KEYS)] == REPORT_KEYS
    assert {k: data[k] for k in ("seed", "error", "grader_version", "percentile")} == {
        "seed": 3,
        "error": "bad column",
        "grader_version": "accuracy/1",
        "percentile": 71.5,
    }
    assert CompetitionReport.from_dict(json.loads(json.dumps(data))) == extra


@pytest.mark.parametrize("score", [math.inf, -math.inf, math.nan, None, 0.0, 1e-300])
def test_unusual_scores_are_kept(tmp_path, score):
    path = tmp_path / "r.json"
    write_grading_report(path, [report(score=score)])
    text = path.read_text()
    if score is not None and math.isinf(score):
        assert ("-Infinity" if score < 0 else "Infinity") in text
    back = read_grading_report(path)[0]
    if score is None:
        assert back.score is None
    elif math.isnan(score):
        assert math.isnan(back.score) and '"score": NaN' in text
    else:
        assert back.score == score


def test_missing_thresholds_are_written_as_null():
    data = report(
        gold_threshold=None, silver_threshold=None, bronze_threshold=None, median_threshold=None
    ).to_dict()
    assert data["gold_threshold"] is None
    assert CompetitionReport.from_dict(data).median_threshold is None


def test_totals_are_mlebench_sums():
    reports = [
        report(gold_medal=True, bronze_medal=False),
        report(),
        report(
            submission_exists=False,
            valid_submission=False,
            score=None,
            above_median=False,
            bronze_medal=False,
            any_medal=False,
        ),
    ]
    totals = {k: v for k, v in grading_report_dict(reports).items() if k != "competition_reports"}
    assert totals == {
        "total_runs": 3,
        "total_runs_with_submissions": 2,
        "total_valid_submissions": 2,
        "total_medals": 2,
        "total_gold_medals": 1,
        "total_silver_medals": 0,
        "total_bronze_medals": 1,
        "total_above_median": 2,
    }
    assert grading_report_dict([])["total_runs"] == 0


def test_malformed_reports(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(GradingReportError, match="not a JSON grading report"):
        read_grading_report(path)
    path.write_text('{"total_runs": 0}')
    with pytest.raises(GradingReportError, match="no `competition_reports` list"):
        read_grading_report(path)
    entry = report().to_dict()
    del entry["valid_submission"]
    path.write_text(json.dumps({"competition_reports": [entry]}))
    with pytest.raises(GradingReportError, match="lacks valid_submission"):
        read_grading_report(path)
    entry = report().to_dict() | {"created_at": "yesterday"}
    path.write_text(json.dumps([entry]))
    with pytest.raises(GradingReportError, match="malformed"):
        read_grading_report(path)
    with pytest.raises(GradingReportError, match="no such grading report"):
        read_grading_report(tmp_path / "absent.json")


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("/srv/media/uploads/7/rg/comp_1/submission/submission.csv", "submission/submission.csv"),
        ("/srv/data/_submissions/aide/seed0/demo-wine/submission.csv", "submission.csv"),
        ("C:\\runs\\rg\\comp_1\\submission\\submission.csv", "submission/submission.csv"),
        ("runs/rg/comp_1/submission/submission.csv", "runs/rg/comp_1/submission/submission.csv"),
        ("", ""),
        (None, ""),
    ],
)
def test_a_submission_path_is_given_relative_to_its_run(stored, shown):
    """A report never says where the grading machine kept the file."""
    assert submission_path_in_run(stored) == shown
