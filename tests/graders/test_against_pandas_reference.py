"""Differential tests: our graders against a pandas + scikit-learn re-statement of what
MLE-bench's graders do (read with pandas, check, sort by id, call scikit-learn; any
exception means "invalid"), over perfect, shuffled and corrupted submissions.

The references below are written from MLE-bench's documented behaviour (see
METRICS.md / competitions.yaml); they are deliberately plain pandas, as MLE-bench is.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

import graders
from tests.support.synthetic import CompetitionLayout


def _pandas(path):
    return pd.read_csv(path, float_precision="round_trip")


def _sorted_pair(sub, ans, id_col, target, check_length=True):
    if check_length and len(sub) != len(ans):
        raise ValueError("length")
    if target not in sub.columns or id_col not in sub.columns:
        raise ValueError("columns")
    sub = sub.sort_values(id_col)
    ans = ans.sort_values(id_col)
    if (sub[id_col].values != ans[id_col].values).any():
        raise ValueError("ids")
    return ans[target].to_numpy(), sub[target].to_numpy()


def ref_accuracy(sub, ans, id_col, target):
    y_true, y_pred = _sorted_pair(sub, ans, id_col, target)
    return skm.accuracy_score(y_true, y_pred)


def ref_auc(sub, ans, id_col, target):
    if id_col not in sub.columns or target not in sub.columns or len(sub) != len(ans):
        raise ValueError("shape")
    pd.to_numeric(sub[target])
    if sub[target].min() < 0 or sub[target].max() > 1:
        raise ValueError("range")
    y_true, y_score = _sorted_pair(sub, ans, id_col, target)
    return skm.roc_auc_score(y_true, y_score)


def ref_binary_log_loss(sub, ans, id_col, target):
    if set(sub[id_col]) != set(ans[id_col]) or len(sub) != len(ans):
        raise ValueError("ids")
    if not ((sub[target] >= 0) & (sub[target] <= 1)).all():
        raise ValueError("range")
    return skm.log_loss(ans.sort_values(id_col)[target], sub.sort_values(id_col)[target])


def ref_rmse_in_range(sub, ans, id_col, target):
    if not sub[target].between(1, 100).all():
        raise ValueError("range")
    y_true, y_pred = _sorted_pair(sub, ans, id_col, target, check_length=False)
    return skm.root_mean_squared_error(y_true, y_pred)


def ref_kappa(sub, ans, id_col, target):
    if sub.empty or set(sub[id_col]) != set(ans[id_col]):
        raise ValueError("ids")
    y_pred = sub.sort_values(id_col)[target].values
    y_true = ans.sort_values(id_col)[target].values
    return skm.cohen_kappa_score(y_pred, y_true, weights="quadratic")


def ref_f1_macro(sub, ans, id_col, target):
    y_true, y_pred = _sorted_pair(sub, ans, id_col, target)
    return skm.f1_score([int(v) for v in y_true], [int(v) for v in y_pred], average="macro")


def ref_mcc(sub, ans, id_col, target):
    if set(sub[id_col]) != set(ans[id_col]) or len(sub) != len(ans):
        raise ValueError("ids")
    return skm.matthews_corrcoef(ans.sort_values(id_col)[target], sub.sort_values(id_col)[target])


N = 40
RNG = np.random.default_rng(5)

CASES = {
    # competition: (reference, id column, target, answers file, truth, a good prediction)
    "cassava-leaf-disease-classification": (
        ref_accuracy,
        "image_id",
        "label",
        "test.csv",
        list(RNG.integers(0, 5, N)),
        list(RNG.integers(0, 5, N)),
    ),
    "tensorflow-speech-recognition-challenge": (
        ref_accuracy,
        "fname",
        "label",
        "test.csv",
        list(RNG.choice(["yes", "no", "up", "go"], N)),
        list(RNG.choice(["yes", "no", "up"], N)),
    ),
    "spaceship-titanic": (
        ref_accuracy,
        "PassengerId",
        "Transported",
        "test.csv",
        [bool(v) for v in RNG.integers(0, 2, N)],
        [bool(v) for v in RNG.integers(0, 2, N)],
    ),
    "aerial-cactus-identification": (
        ref_auc,
        "id",
        "has_cactus",
        "test.csv",
        [int(v) for v in RNG.integers(0, 2, N)],
        [float(v) for v in np.round(RNG.random(N), 1)],
    ),
    "dogs-vs-cats-redux-kernels-edition": (
        ref_binary_log_loss,
        "id",
        "label",
        "answers.csv",
        [int(v) for v in RNG.integers(0, 2, N)],
        [float(v) for v in RNG.random(N)],
    ),
    "petfinder-pawpularity-score": (
        ref_rmse_in_range,
        "Id",
        "Pawpularity",
        "test.csv",
        [int(v) for v in RNG.integers(1, 101, N)],
        [float(v) for v in RNG.uniform(1, 100, N)],
    ),
    "aptos2019-blindness-detection": (
        ref_kappa,
        "id_code",
        "diagnosis",
        "test.csv",
        [int(v) for v in RNG.integers(0, 5, N)],
        [int(v) for v in RNG.integers(0, 5, N)],
    ),
    "herbarium-2021-fgvc8": (
        ref_f1_macro,
        "Id",
        "Predicted",
        "answers.csv",
        [int(v) for v in RNG.integers(0, 9, N)],
        [int(v) for v in RNG.integers(0, 9, N)],
    ),
    "nfl-player-contact-detection": (
        ref_mcc,
        "contact_id",
        "contact",
        "test.csv",
        [int(v) for v in RNG.integers(0, 2, N)],
        [int(v) for v in RNG.integers(0, 2, N)],
    ),
}


def _variants(id_col, target, ids, good):
    """Submissions MLE-bench accepts and rejects, as column dicts."""
    order = list(RNG.permutation(N))
    base = {id_col: ids, target: good}
    yield "good", base
    yield "shuffled", {k: [v[i] for i in order] for k, v in base.items()}
    yield "short", {k: v[:-1] for k, v in base.items()}
    yield "duplicate", {id_col: [*ids[:-1], ids[0]], target: good}
    yield "foreign id", {id_col: [*ids[:-1], "zzz"], target: good}
    yield "empty cell", {id_col: ids, target: [None, *good[1:]]}
    yield "text cell", {id_col: ids, target: ["oops", *good[1:]]}
    yield (
        "float labels",
        {id_col: ids, target: [float(v) if not isinstance(v, str) else v for v in good]},
    )
    yield "halves", {id_col: ids, target: [0.5 + (i % 2) * 0.25 for i in range(N)]}
    yield "large", {id_col: ids, target: [7.0] * N}
    yield "negative", {id_col: ids, target: [-1] * N}
    yield "ones and zeros", {id_col: ids, target: [i % 2 for i in range(N)]}
    yield "extra column", {**base, "note": ["x"] * N}
    yield "no target", {id_col: ids, "other": good}


def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return round(float(fn()), 5)
        except Exception:  # noqa: BLE001 - MLE-bench turns any exception into "invalid"
            return None


@pytest.mark.parametrize("id_style", ["text", "integer"])
@pytest.mark.parametrize("competition_id", sorted(CASES))
def test_same_acceptance_and_score_as_the_pandas_reference(tmp_path, competition_id, id_style):
    reference, id_col, target, answers_file, truth, good = CASES[competition_id]
    ids = (
        [f"item{i:04d}" for i in range(N)] if id_style == "text" else [i * 37 + 5 for i in range(N)]
    )
    layout = CompetitionLayout(
        tmp_path, competition_id, f"{competition_id}/prepared/private/{answers_file}"
    )
    answers_path = layout.write_answers({id_col: ids, target: truth})
    checked = 0
    for name, columns in _variants(id_col, target, ids, good):
        path = layout.write_submission(f"{name}.csv", columns)
        expected = _outcome(
            lambda path=path: reference(_pandas(path), _pandas(answers_path), id_col, target)
        )
        result = graders.grade_submission(path, competition_id, tmp_path)
        got = result.score if result.valid_submission else None
        assert (got is None) == (expected is None), (name, got, expected, result.error)
        if expected is not None:
            assert got == expected or (np.isnan(got) and np.isnan(expected)), (name, got, expected)
        checked += 1
    assert checked == 14


def test_rounding_follows_the_type_mlebench_returns(tmp_path):
    """accuracy_score returns a Python float, rounded correctly; numpy float64 scores are
    rounded by scaling and rint, which differs on decimal ties like 0.123425."""
    from graders.core import round_score

    assert round_score(0.123455, numpy_style=False) == round(0.123455, 5) == 0.12345
    assert round_score(0.123455, numpy_style=True) == float(round(np.float64(0.123455), 5))
    assert round_score(0.123455, numpy_style=True) == 0.12346

    n = 40_000  # k / 40,000 has six decimals: ties at the fifth are common
    ids = [f"img{i:05d}" for i in range(n)]
    truth = [i % 5 for i in range(n)]
    correct = 4937  # accuracy 0.123425
    prediction = [t if i < correct else (t + 1) % 5 for i, t in enumerate(truth)]
    layout = CompetitionLayout(tmp_path, "cassava-leaf-disease-classification")
    answers = layout.write_answers({"image_id": ids, "label": truth})
    path = layout.write_submission("s.csv", {"image_id": ids, "label": prediction})
    expected = _outcome(lambda: ref_accuracy(_pandas(path), _pandas(answers), "image_id", "label"))
    result = graders.grade_submission(path, "cassava-leaf-disease-classification", tmp_path)
    assert result.score == expected == round(correct / n, 5)
