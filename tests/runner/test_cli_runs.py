"""``mleboard run`` and ``mleboard images`` end to end through the CLI's entry point."""

from __future__ import annotations

import json

import pytest

from cli.main import main

COMPETITION = "demo-breast-cancer"


def run_cli(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_run_prints_the_outcome_and_the_grade_report(demo_data, tmp_path, capsys):
    code, result = run_cli(
        capsys,
        "run",
        "--agent",
        "dummy",
        "--competition",
        COMPETITION,
        "--data-dir",
        str(demo_data),
        "--output-dir",
        str(tmp_path / "out"),
        "--backend",
        "local",
        "--time-limit",
        "60",
        "--memory",
        "2g",
    )
    assert code == 0
    assert result["outcome"] == "completed" and result["exit_code"] == 0
    assert result["agent"] == "dummy" and result["seed"] == 0
    assert result["submission_path"].endswith("submission/submission.csv")
    assert result["logs_path"].endswith("run.log") and result["duration_s"] >= 0
    report = result["grade_report"]
    assert report is not None, result.get("grade_error")
    assert report["valid_submission"] is True and report["submission_exists"] is True
    assert report["score"] == pytest.approx(0.5)  # a constant prediction has an AUC of 0.5


def test_run_from_an_agent_folder_reports_a_failure(demo_data, tmp_path, capsys, copy_agent):
    folder = copy_agent("dummy")
    (folder / "main.py").write_text("import sys\nprint('broken agent')\nsys.exit(4)\n")
    code, result = run_cli(
        capsys,
        "run",
        "--agent-dir",
        str(folder),
        "--competition",
        COMPETITION,
        "--data-dir",
        str(demo_data),
        "--output-dir",
        str(tmp_path / "out"),
        "--backend",
        "local",
        "--memory",
        "2g",
    )
    assert code == 1
    assert result["outcome"] == "failed" and result["exit_code"] == 4
    assert result["submission_path"] is None
    assert result["grade_report"]["submission_exists"] is False


def test_run_refuses_an_unknown_agent_and_a_used_output_folder(demo_data, tmp_path, capsys):
    common = ["--competition", COMPETITION, "--data-dir", str(demo_data), "--backend", "local"]
    assert main(["run", "--agent", "nope", "--output-dir", str(tmp_path / "a"), *common]) == 2
    used = tmp_path / "used"
    used.mkdir()
    (used / "something").write_text("x")
    assert main(["run", "--agent", "dummy", "--output-dir", str(used), *common]) == 2
    assert "not empty" in capsys.readouterr().err


@pytest.mark.docker
def test_images_reports_the_cached_images(agent_images, capsys):
    assert main(["images", "--agent", "dummy"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("mleboard/base:") and lines[0].endswith("up to date")
    assert lines[1] == f"{agent_images['dummy']}\tup to date"
