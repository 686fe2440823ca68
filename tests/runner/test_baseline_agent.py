"""The baseline agent: task inference on each demo layout, and local runs graded valid."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from runner import Outcome, Resources, RunSpec, find_agent, run_agent, spec_for_agent
from tests.support.runner_demo import write_demo

sys.path.insert(0, str(find_agent("baseline").directory))
from task_inference import TaskError, infer_task, metric_hint  # noqa: E402

DEMOS = ["demo-breast-cancer", "demo-digits", "demo-diabetes", "demo-wine"]


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("demos")
    for competition in DEMOS:
        write_demo(root, competition)
    return root


def _frames(root: Path, competition: str):
    public = root / competition / "prepared" / "public"
    return (
        pd.read_csv(public / "train.csv"),
        pd.read_csv(public / "test.csv"),
        pd.read_csv(public / "sample_submission.csv"),
        (public / "description.md").read_text(),
    )


@pytest.mark.parametrize(
    ("competition", "kind", "output", "metric"),
    [
        ("demo-breast-cancer", "classification", "proba", "roc_auc"),
        ("demo-digits", "classification", "label", "accuracy"),
        ("demo-diabetes", "regression", "value", "rmse"),
        ("demo-wine", "classification", "proba_columns", "log_loss"),
    ],
)
def test_task_is_inferred_from_the_files(demo_root, competition, kind, output, metric):
    task = infer_task(*_frames(demo_root, competition))
    assert task.id_column == "id" and task.metric == metric
    (target,) = task.targets
    assert (target.kind, target.output) == (kind, output)
    assert "id" not in task.features and target.train_column not in task.features
    if competition == "demo-wine":
        assert target.train_column == "target"
        assert target.column_classes == {"class_0": 0, "class_1": 1, "class_2": 2}
    if competition == "demo-digits":
        assert len(task.features) == 64


def test_metric_hints_and_unsolvable_layouts():
    assert metric_hint("Submissions are evaluated on area under the ROC curve.") == "roc_auc"
    assert metric_hint("Mean absolute error between ...") == "mae"
    assert metric_hint("nothing said") is None
    train = pd.DataFrame({"id": [1, 2], "x": [0.1, 0.2]})
    test = pd.DataFrame({"id": [3], "x": [0.3]})
    sample = pd.DataFrame({"id": [3], "mystery": [0]})
    with pytest.raises(TaskError, match="mystery"):
        infer_task(train, test, sample, "")


@pytest.mark.parametrize(
    ("competition", "good_enough"),
    [
        ("demo-breast-cancer", lambda s: s > 0.95),
        ("demo-digits", lambda s: s > 0.9),
        ("demo-diabetes", lambda s: s < 70),
        ("demo-wine", lambda s: s < 0.3),
    ],
)
def test_baseline_solves_each_demo_competition(demo_root, tmp_path, competition, good_enough):
    import graders

    spec = spec_for_agent(
        find_agent("baseline"),
        competition,
        # One CPU: on a busy machine its OpenMP threads (gradient boosting) would spin
        # waiting for each other, tripling the CPU it takes.
        resources=Resources(cpus=1, memory=None, gpus=0),
        time_limit_s=300,
        host_env={},
    )
    spec = RunSpec(**{**spec.__dict__, "env": {**spec.env, "BASELINE_CV_FOLDS": "2"}})
    outcome = run_agent(spec, data_dir=demo_root, output_dir=tmp_path / "out", backend="local")
    log = outcome.logs_path.read_text()
    assert outcome.outcome is Outcome.COMPLETED, log
    assert "falling back" not in log, log
    result = graders.grade_submission(outcome.submission_path, competition, demo_root)
    assert result.valid_submission, result.error
    assert good_enough(result.score), result.score
