"""``mleboard submit --dry-run`` says what the site will then find: the same verdict on
each run (a run without a submission is graded invalid, with the grading's reason), the
same count of invalid runs, and, when --data-dir is given, never asks for it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmark.catalogue import load_catalogue
from benchmark.grading import grade_submission_run
from benchmark.upload_layout import read_upload
from cli.main import main
from tests.support import demo_builds

# One run of each kind: valid, valid, no submission.csv, too few rows.
VALID, MISSING, SHORT = "valid", "missing", "short"
KINDS = {
    "demo-breast-cancer": VALID,
    "demo-diabetes": VALID,
    "demo-digits": MISSING,
    "demo-wine": SHORT,
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo competitions' prepared data (answers included) and the linear agent's
    submissions."""
    data = tmp_path_factory.mktemp("data")
    return demo_builds.build_demo(data, seeds=1)


def run_group(folder: Path, demo) -> Path:
    """A run group of MLE-bench's layout, its runs as ``KINDS`` says."""
    group = folder / "2024-10-01T00-00-00-GMT_run-group_linear"
    runs = {}
    for index, (cid, kind) in enumerate(KINDS.items()):
        run = group / f"{cid}_{index:08d}-0000-0000-0000-000000000000"
        (run / "submission").mkdir(parents=True)
        submitted = demo.submissions["linear"][0][cid].read_text().splitlines(keepends=True)
        if kind == SHORT:
            submitted = submitted[:3]
        if kind != MISSING:
            (run / "submission" / "submission.csv").write_text("".join(submitted))
        runs[run.name] = {"success": True}
    (group / "metadata.json").write_text(json.dumps({"run_group": group.name, "runs": runs}))
    return group


def dry_run(capsys, group: Path, *extra: str) -> str:
    argv = [
        "submit",
        str(group),
        "--site",
        "http://127.0.0.1:9",
        "--scaffold",
        "s",
        "--model",
        "m",
        "--dry-run",
        *extra,
    ]
    assert main(argv) == 0
    return capsys.readouterr().out


def site_verdicts(group: Path, data_dir: Path) -> dict[str, str]:
    """What the site's grading finds for each run (``webapp.results.grading.services`` calls the
    same function): "" for a valid submission, else its reason."""
    contents = read_upload(group.parent, known_competitions=set(load_catalogue(include_demo=True)))
    return {
        run.competition_id: grade_submission_run(
            run.submission_path, run.competition_id, data_dir, None
        ).error
        or ""
        for run in contents.runs
    }


def test_with_data_dir_the_dry_run_finds_what_the_site_finds(tmp_path, capsys, demo):
    group = run_group(tmp_path, demo)
    out = dry_run(capsys, group, "--data-dir", str(demo.data_dir))
    found = site_verdicts(group, demo.data_dir)
    invalid = [cid for cid, reason in found.items() if reason]
    assert sorted(invalid) == ["demo-digits", "demo-wine"]
    for cid, reason in found.items():
        line = next(line for line in out.splitlines() if line.strip().startswith(cid))
        assert line.endswith(f"invalid: {reason}" if reason else "valid"), line
    assert "2 run(s) would be graded as invalid (1 without a submission)" in out
    assert "Give --data-dir" not in out
    assert "Checked with the graders' own validation" in out


def test_without_data_dir_a_run_without_submission_still_counts_as_invalid(tmp_path, capsys, demo):
    group = run_group(tmp_path, demo)
    out = dry_run(capsys, group)
    assert "invalid: No submission was made." in out
    assert "1 run(s) would be graded as invalid (1 without a submission)" in out
    assert "Give --data-dir" in out


def test_a_data_dir_without_some_answers_says_which_not_to_give_it(tmp_path, capsys, demo):
    data = tmp_path / "data"
    shutil.copytree(demo.data_dir, data)
    shutil.rmtree(data / "demo-wine" / "prepared" / "private")
    out = dry_run(capsys, run_group(tmp_path, demo), "--data-dir", str(data))
    assert "Give --data-dir" not in out
    assert f"{data} has no prepared answers (prepared/private/) for demo-wine" in out
    wine = next(line for line in out.splitlines() if line.strip().startswith("demo-wine"))
    assert "invalid: 2 rows, the sample submission has 36" in wine
