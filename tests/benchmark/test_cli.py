"""The ``mleboard`` command line, end to end (subprocess) and through ``main``."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from benchmark.aggregate import aggregate, mlebench_summary, read_reports_in_mlebench_order
from benchmark.catalogue import competitions_in_split
from benchmark.reports import CompetitionReport, write_grading_report
from cli import main as cli

REPO_ROOT = Path(__file__).resolve().parents[2]


def mleboard(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_help_lists_commands_without_loading_the_numerical_libraries():
    done = mleboard("--help")
    assert done.returncode == 0
    for command in ("catalogue", "rank", "aggregate"):
        assert command in done.stdout
    imported = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, cli.main as c; c.build_parser(); "
            "print(sorted(m for m in ('pandas', 'numpy', 'scipy') if m in sys.modules))",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert imported.stdout.strip() == "[]", imported.stderr


def test_catalogue_json_end_to_end():
    done = mleboard("catalogue", "--format", "json")
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)
    assert len(entries) == 82
    assert sum("all" in e["splits"] for e in entries) == 75
    spaceship = next(e for e in entries if e["id"] == "spaceship-titanic")
    assert spaceship["splits"] == ["dev"] and spaceship["metric"] == "accuracy"


@pytest.mark.parametrize(
    ("split", "count"),
    [
        ("low", 22),
        ("lite", 22),
        ("medium", 38),
        ("high", 15),
        ("all", 75),
        ("split75", 75),
        ("systemcard", 30),
        ("systemcard.txt", 30),
        ("dev", 7),
        ("demo", 4),
    ],
)
def test_catalogue_split_counts(capsys, split, count):
    code, out, _ = run_main(capsys, "catalogue", "--split", split, "--format", "json")
    assert code == 0 and len(json.loads(out)) == count
    code, out, _ = run_main(capsys, "catalogue", "--split", split)
    assert code == 0 and out.rstrip().endswith(f"{count} competitions")


def test_catalogue_unknown_split(capsys):
    code, out, err = run_main(capsys, "catalogue", "--split", "huge")
    assert code == 2 and out == "" and "unknown split 'huge'" in err
    assert "systemcard" in err and "split75 = all" in err


def test_aggregate_on_systemcard_by_its_file_name(tmp_path, capsys):
    paths = write_reports(tmp_path, "systemcard", seeds=1, with_seed=True)
    code, out, _ = run_main(
        capsys,
        "aggregate",
        "--reports",
        *map(str, paths),
        "--split",
        "systemcard.txt",
        "--format",
        "json",
    )
    assert code == 0
    printed = json.loads(out)
    assert printed["split"] == "systemcard" and printed["num_competitions_per_seed"] == 30
    code, _, err = run_main(
        capsys, "aggregate", "--reports", *map(str, paths), "--split", "spaceship-titanic"
    )
    assert code == 2 and "it is a competition here, not a split" in err


def leaderboard(tmp_path: Path, scores) -> Path:
    lines = ["scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore"]
    lines += [f"{s},{i},True,2022-01-01,{s},True" for i, s in enumerate(scores)]
    path = tmp_path / "leaderboard.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


MLEBENCH_KEYS = {
    "gold_threshold",
    "silver_threshold",
    "bronze_threshold",
    "median_threshold",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "any_medal",
    "above_median",
}


def test_rank_several_scores_end_to_end(tmp_path):
    path = leaderboard(tmp_path, [i / 10 for i in range(20, 0, -1)])  # 2.0 .. 0.1
    done = mleboard("rank", "--leaderboard", str(path), "--score", "2.0", "1.65", "0.05")
    assert done.returncode == 0, done.stderr
    gold, silver, nothing = json.loads(done.stdout)
    assert set(gold) == MLEBENCH_KEYS | {"percentile"}
    assert gold["gold_medal"] and gold["gold_threshold"] == 1.9
    assert silver["silver_medal"] is False and silver["bronze_medal"] is True
    assert nothing["any_medal"] is False and nothing["percentile"] == 0.0
    assert gold["percentile"] == 97.5


def test_rank_single_score_direction_flags(tmp_path, capsys):
    path = leaderboard(tmp_path, [1.0, 2.0, 3.0, 4.0, 5.0])
    _, out, _ = run_main(capsys, "rank", "--leaderboard", str(path), "--score", "1.0")
    inferred = json.loads(out)
    assert isinstance(inferred, dict) and inferred["gold_medal"]  # inferred lower is better
    _, out, err = run_main(
        capsys,
        "rank",
        "--leaderboard",
        str(path),
        "--score",
        "1.0",
        "--competition",
        "spaceship-titanic",
    )
    from_catalogue = json.loads(out)  # accuracy: higher is better; the file is reversed
    assert from_catalogue["gold_medal"] is False and from_catalogue["gold_threshold"] == 5.0
    assert "worst first" in err and "awarded no medals" in err
    _, out, _ = run_main(
        capsys, "rank", "--leaderboard", str(path), "--score", "1.0", "--lower-is-better"
    )
    assert json.loads(out) == inferred
    code, _, err = run_main(
        capsys, "rank", "--leaderboard", str(path), "--score", "1", "--competition", "nope"
    )
    assert code == 2 and "not in mleboard's catalogue" in err


def test_rank_lfs_pointer_exit_2(mlebench_checkout):
    pointer = mlebench_checkout / "mlebench/competitions/spaceship-titanic/leaderboard.csv"
    done = mleboard("rank", "--leaderboard", str(pointer), "--score", "0.8")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Git LFS pointer" in done.stderr and "git lfs pull" in done.stderr


def write_reports(tmp_path: Path, split: str, seeds: int, with_seed: bool) -> list[Path]:
    paths = []
    for seed in range(seeds):
        reports = []
        for i, facts in enumerate(competitions_in_split(split)):
            medal = (i + seed) % 4
            reports.append(
                CompetitionReport(
                    competition_id=facts.id,
                    score=0.5,
                    gold_threshold=0.9,
                    silver_threshold=0.8,
                    bronze_threshold=0.7,
                    median_threshold=0.4,
                    any_medal=medal > 0,
                    gold_medal=medal == 1,
                    silver_medal=medal == 2,
                    bronze_medal=medal == 3,
                    above_median=(i + seed) % 3 > 0,
                    submission_exists=(i + seed) % 5 > 0,
                    valid_submission=(i + seed) % 5 > 1,
                    is_lower_better=False,
                    created_at=datetime(2024, 10, 1),
                    submission_path="submission.csv",
                    seed=seed if with_seed else None,
                )
            )
        path = tmp_path / f"group-{seed}" / "grading_report.json"
        write_grading_report(path, reports)
        paths.append(path)
    return paths


def test_aggregate_json_is_the_library_result(tmp_path):
    paths = write_reports(tmp_path, "low", seeds=3, with_seed=True)
    done = mleboard(
        "aggregate", "--reports", *map(str, paths), "--split", "low", "--format", "json"
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    expected = aggregate(read_reports_in_mlebench_order(paths), split="low")
    assert printed == json.loads(json.dumps(expected))
    assert printed["seeding"] == "explicit" and printed["num_seeds_averaged"] == 3


def test_aggregate_text_starts_with_mlebench_output(tmp_path, capsys):
    paths = write_reports(tmp_path, "low", seeds=2, with_seed=False)
    code, out, _ = run_main(
        capsys, "aggregate", "--reports", *map(str, paths), "--split", "low", "--pad-missing"
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(
        "Seed 1: SeedMetrics(total_competitions=22, submission_exists_percentage="
    )
    assert lines[2:4] == ["------", "Average metrics across seeds:"]
    block_end = lines.index("}") + 1
    summary = json.loads("\n".join(lines[4:block_end]))
    expected = aggregate(read_reports_in_mlebench_order(paths), split="low", pad_missing=True)
    assert summary == mlebench_summary(expected)
    assert "any_medal_percentage" in summary["metrics"]
    rest = "\n".join(lines[block_end:])
    for section in ("Per category", "Per complexity", "Funnel", "pass@k (any medal, n = 2)"):
        assert section in rest


def test_aggregate_errors_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    code, _, err = run_main(capsys, "aggregate", "--reports", str(bad), "--split", "low")
    assert code == 2 and "not a JSON grading report" in err
    paths = write_reports(tmp_path, "low", seeds=1, with_seed=False)
    code, _, err = run_main(capsys, "aggregate", "--reports", str(paths[0]), "--split", "high")
    assert code == 2 and "missing reports for competitions" in err


def test_every_subcommand_is_registered_by_plain_imports():
    commands = cli.build_parser()._subparsers._group_actions[0].choices
    assert set(commands) >= {
        "catalogue",
        "rank",
        "aggregate",
        "published",
        "grade",
        "grade-sample",
        "validate",
        "run",
        "images",
    }


def test_every_help_shows_percent_signs_as_written():
    """argparse expands ``%`` in an argument's help and in usage, not in a description:
    a "%%" there is printed as it is ("Any Medal %%")."""
    parser = cli.build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for name, command in {"mleboard": parser, **commands}.items():
        text = command.format_help()
        assert "%%" not in text and "%(" not in text, f"{name}:\n{text}"


def test_no_command_prints_help(capsys):
    code, _, err = run_main(capsys)
    assert code == 2 and "usage: mleboard" in err
