"""Every column-metric competition: a perfect submission gets the best score, a constant
sample-like submission is valid, and broken submissions are rejected with a useful reason."""

from __future__ import annotations

import math

import numpy as np
import pytest

import graders
from tests.support.core_cases import CASES
from tests.support.synthetic import CompetitionLayout, drop_rows, shuffled

TABLE_CASES = sorted(c for c in CASES if c != "tensorflow2-question-answering")


def _setup(tmp_path, competition_id):
    case = CASES[competition_id](np.random.default_rng(7))
    grader = graders.grader_for(competition_id)
    layout = CompetitionLayout(tmp_path, competition_id, answers=grader.answers)
    layout.write_answers(case.answers)
    return case, layout


def _same(score: float, expected: float) -> bool:
    if math.isinf(expected):
        return score == expected
    return score == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("competition_id", TABLE_CASES)
def test_perfect_submission_gets_the_best_score(tmp_path, competition_id):
    case, layout = _setup(tmp_path, competition_id)
    result = graders.grade_submission(
        layout.write_submission("perfect.csv", case.perfect), competition_id, tmp_path
    )
    assert result.valid_submission, result.error
    assert result.submission_exists
    assert _same(result.score, case.best), (result.score, case.best)
    assert result.grader_version.startswith(graders.grader_for(competition_id).metric)
    if case.id_aligned:
        again = graders.grade_submission(
            layout.write_submission("shuffled.csv", shuffled(case.perfect)),
            competition_id,
            tmp_path,
        )
        assert again.valid_submission, again.error
        assert _same(again.score, case.best)


@pytest.mark.parametrize("competition_id", TABLE_CASES)
def test_constant_sample_submission_is_valid(tmp_path, competition_id):
    case, layout = _setup(tmp_path, competition_id)
    path = layout.write_submission("sample.csv", case.constant)
    result = graders.grade_submission(path, competition_id, tmp_path)
    assert result.valid_submission, result.error
    assert result.score is not None
    validation = graders.validate_submission(path, competition_id, tmp_path)
    assert validation.valid and validation.message == "Submission is valid."


@pytest.mark.parametrize("competition_id", TABLE_CASES)
def test_submission_missing_rows_is_rejected(tmp_path, competition_id):
    case, layout = _setup(tmp_path, competition_id)
    n = len(next(iter(case.perfect.values())))
    broken = drop_rows(case.perfect, range(0, n, 2))
    result = graders.grade_submission(
        layout.write_submission("short.csv", broken), competition_id, tmp_path
    )
    if competition_id == "osic-pulmonary-fibrosis-progression":
        # MLE-bench scores whatever scored weeks are present; nothing is required.
        assert result.valid_submission
        return
    assert not result.valid_submission
    assert result.score is None
    assert result.error
    validation = graders.validate_submission(
        layout.submissions / competition_id / "short.csv", competition_id, tmp_path
    )
    assert not validation.valid and validation.message == result.error


@pytest.mark.parametrize("competition_id", TABLE_CASES)
def test_submission_without_its_prediction_column_is_rejected(tmp_path, competition_id):
    case, layout = _setup(tmp_path, competition_id)
    columns = list(case.perfect)
    dropped = columns[-1]
    broken = {k: v for k, v in case.perfect.items() if k != dropped}
    result = graders.grade_submission(
        layout.write_submission("nocol.csv", broken), competition_id, tmp_path
    )
    assert not result.valid_submission
    assert dropped in result.error or "column" in result.error.lower(), result.error
