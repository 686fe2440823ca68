"""Column metrics against hand-computed values and against scikit-learn / scipy or a
brute-force loop written here. "Equal" means bit-for-bit where we claim identical arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn import metrics as skm

from graders.metrics import classification as cls
from graders.metrics import log_loss as ll
from graders.metrics import ranked_lists as rl
from graders.metrics import regression as reg
from graders.metrics import roc_auc as auc
from graders.results import InvalidSubmission

RNG = np.random.default_rng(2024)


def _random_binary(n, decimals):
    y = RNG.integers(0, 2, n)
    y[:2] = [0, 1]
    return y, np.round(RNG.random(n), decimals)


# --- ROC AUC family ---------------------------------------------------------------------------


def test_roc_auc_by_hand():
    assert auc.roc_auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8])) == 0.75
    # a tie between a positive and a negative counts half
    assert auc.roc_auc(np.array([0, 1]), np.array([0.5, 0.5])) == 0.5


@pytest.mark.parametrize("decimals", [0, 1, 2, 6])
def test_roc_auc_equals_sklearn_with_ties(decimals):
    for n in (2, 17, 500, 20_000):
        y, s = _random_binary(n, decimals)
        assert auc.roc_auc(y, s) == skm.roc_auc_score(y, s)


def test_roc_auc_with_other_label_values_uses_the_larger_as_positive():
    y = np.array([3, 7, 7, 3, 7])
    s = np.array([0.2, 0.9, 0.4, 0.5, 0.1])
    assert auc.roc_auc(y, s) == skm.roc_auc_score(y, s)


def test_roc_auc_one_class_is_invalid():
    with pytest.raises(InvalidSubmission, match="only one class"):
        auc.roc_auc(np.zeros(5), np.arange(5.0))


def test_mean_columnwise_roc_auc_equals_sklearn_macro():
    y = RNG.integers(0, 2, (400, 3))
    s = np.round(RNG.random((400, 3)), 2)
    assert auc.mean_columnwise_roc_auc(y, s) == skm.roc_auc_score(y, s, average="macro")


def _alaska_reference(y, s):
    """The competition's weighted AUC written out with Python lists, as the reference does."""
    fpr, tpr, _ = skm.roc_curve(y, s, pos_label=1)
    fpr, tpr = fpr.tolist(), tpr.tolist()
    thresholds = [0.0, 0.4, 1.0]
    for threshold in thresholds:
        if threshold not in tpr:
            for i, value in enumerate(tpr):
                if value > threshold:
                    fpr.insert(
                        i,
                        fpr[i - 1]
                        + (fpr[i] - fpr[i - 1]) * (threshold - tpr[i - 1]) / (tpr[i] - tpr[i - 1]),
                    )
                    tpr.insert(i, threshold)
                    break
    fpr, tpr = np.array(fpr), np.array(tpr)
    total = 0
    for index, weight in enumerate([2, 1]):
        low, high = thresholds[index], thresholds[index + 1]
        mask = (low <= tpr) & (tpr <= high)
        xs = np.concatenate([fpr[mask], [1]])
        ys = np.concatenate([tpr[mask], [high]]) - low
        total += skm.auc(xs, ys) * weight
    return total / 1.4


def test_alaska_weighted_auc_matches_the_reference_algorithm():
    for n in (50, 3000):
        y, s = _random_binary(n, 3)
        assert auc.alaska_weighted_auc(y, s) == pytest.approx(_alaska_reference(y, s), abs=1e-12)
    y = np.array([0, 0, 1, 1])
    assert auc.alaska_weighted_auc(y, np.array([0.1, 0.2, 0.8, 0.9])) == pytest.approx(1.0)


def test_jigsaw_bias_auc_matches_a_loop_over_groups():
    n = 3000
    toxic = RNG.integers(0, 2, n)
    predicted = RNG.integers(0, 2, n)
    identities = RNG.integers(0, 2, (n, 9))
    expected_parts = []
    for g in range(9):
        m = identities[:, g] == 1
        masks = [
            m,
            ((toxic == 0) & m) | ((toxic == 1) & ~m),
            ((toxic == 1) & m) | ((toxic == 0) & ~m),
        ]
        expected_parts.append([skm.roc_auc_score(toxic[k], predicted[k]) for k in masks])
    means = [(sum(row[i] ** -5 for row in expected_parts) / 9) ** (1 / -5) for i in range(3)]
    expected = 0.25 * skm.roc_auc_score(toxic, predicted) + sum(0.25 * m for m in means)
    assert auc.jigsaw_bias_auc(toxic, predicted, identities) == pytest.approx(expected, abs=1e-12)


# --- log losses ---------------------------------------------------------------------------------


def test_binary_log_loss_by_hand_and_against_sklearn():
    y = np.array([1, 0])
    p = np.array([0.8, 0.3])
    assert ll.binary_log_loss(y, p) == pytest.approx(-(math.log(0.8) + math.log(0.7)) / 2)
    for n in (10, 10_000):
        y, p = _random_binary(n, 4)
        p[:3] = [0.0, 1.0, 0.5]  # clipping at float64 eps
        assert ll.binary_log_loss(y, p) == skm.log_loss(y, p)


def test_multiclass_log_loss_is_not_renormalised_like_sklearn_151():
    truth = np.eye(3)[[0, 1, 2, 1]]
    p = np.array([[0.5, 0.5, 0.5], [0.2, 0.2, 0.6], [0.0, 0.0, 1.0], [0.3, 0.3, 0.3]])
    assert ll.multiclass_log_loss(truth, p) == skm.log_loss(truth, p)
    expected = (
        -(math.log(0.5) + math.log(0.2) + math.log(1 - np.finfo(float).eps) + math.log(0.3)) / 4
    )
    assert ll.multiclass_log_loss(truth, p) == pytest.approx(expected)


def test_multiclass_log_loss_equals_sklearn_on_random_rows():
    for k in (3, 99):
        chosen = RNG.integers(0, k, 5000)
        p = RNG.random((5000, k))
        p /= p.sum(axis=1, keepdims=True)
        assert ll.multiclass_log_loss(np.eye(k)[chosen], p) == skm.log_loss(np.eye(k)[chosen], p)


def test_weighted_binary_log_loss_matches_a_loop():
    y = RNG.integers(0, 2, (30, 8)).astype(float)
    p = RNG.random((30, 8))
    expected = []
    for row_y, row_p in zip(y, p, strict=True):
        w = [(14 if t else 7) if i == 0 else (2 if t else 1) for i, t in enumerate(row_y)]
        losses = [
            -(t * math.log(q) + (1 - t) * math.log(1 - q))
            for t, q in zip(row_y, row_p, strict=True)
        ]
        expected.append(sum(a * b for a, b in zip(w, losses, strict=True)) / sum(w))
    assert ll.weighted_binary_log_loss(y, p) == pytest.approx(np.mean(expected), rel=1e-12)


def test_kl_divergence_by_hand_and_by_loop():
    solution = np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    submission = np.array([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]])
    expected = (0.5 * math.log(0.5 / 0.3) + 0 + math.log(1 / 0.7)) / 2
    assert ll.kl_divergence(solution, submission) == pytest.approx(expected)
    assert ll.kl_divergence(solution, solution) == pytest.approx(0.0, abs=1e-12)


# --- labels -------------------------------------------------------------------------------------


def test_accuracy_by_hand_and_against_sklearn():
    assert cls.accuracy(np.array([1, 2, 3]), np.array([1, 2, 4])) == pytest.approx(2 / 3)
    y, p = RNG.integers(0, 7, 1000), RNG.integers(0, 7, 1000)
    assert cls.accuracy(y, p) == skm.accuracy_score(y, p)
    words = np.array(["cat", "dog", "eel"])
    t, q = words[RNG.integers(0, 3, 300)], words[RNG.integers(0, 3, 300)]
    assert cls.accuracy(pa.array(t), pa.array(q)) == skm.accuracy_score(t, q)


def test_accuracy_text_against_numbers_follows_sklearn():
    # many labels: sklearn compares element-wise and nothing matches
    assert cls.accuracy(np.array([1, 2, 3]), pa.array(["1", "2", "3"])) == 0.0
    # two labels on each side: sklearn fails to sort the union
    with pytest.raises(InvalidSubmission):
        cls.accuracy(np.array([0, 1, 0]), pa.array(["0", "1", "0"]))


def test_f1_macro_against_sklearn():
    y, p = RNG.integers(0, 40, 3000), RNG.integers(0, 45, 3000)
    assert cls.f1_macro(y, p) == skm.f1_score(y, p, average="macro")
    assert cls.f1_macro(np.array([0, 1, 2]), np.array([0, 1, 1])) == pytest.approx(
        (1 + 2 / 3 + 0) / 3
    )


def test_micro_f1_counts_by_hand():
    assert cls.f1_micro_counts(3, 4, 5) == pytest.approx(6 / 9)
    assert cls.f1_micro_counts(0, 0, 0) == 0.0


def test_mcc_and_kappa_against_sklearn():
    y, p = RNG.integers(0, 2, 2000), RNG.integers(0, 2, 2000)
    assert cls.matthews_corrcoef(y, p) == skm.matthews_corrcoef(y, p)
    y, p = RNG.integers(0, 5, 2000), RNG.integers(-1, 6, 2000)
    assert cls.matthews_corrcoef(y, p) == skm.matthews_corrcoef(y, p)
    assert cls.quadratic_weighted_kappa(p, y) == skm.cohen_kappa_score(p, y, weights="quadratic")
    assert cls.quadratic_weighted_kappa(y, y) == 1.0


def test_probabilistic_f1_matches_a_loop():
    labels = RNG.integers(0, 2, 500)
    predictions = RNG.uniform(-0.2, 1.2, 500)
    ctp = cfp = 0.0
    for label, prediction in zip(labels, predictions, strict=True):
        clipped = min(max(prediction, 0), 1)
        if label:
            ctp += clipped
        else:
            cfp += clipped
    precision, recall = ctp / (ctp + cfp), ctp / labels.sum()
    expected = 2 * precision * recall / (precision + recall)
    assert cls.probabilistic_f1(labels, predictions) == expected
    assert cls.probabilistic_f1(labels, np.where(labels == 1, 1.0, 0.0)) == 1.0
    assert cls.probabilistic_f1(labels, np.full(500, np.nan)) == 0.0


# --- regression ---------------------------------------------------------------------------------


def test_error_metrics_equal_sklearn():
    t, p = RNG.normal(size=10_000), RNG.normal(size=10_000)
    assert reg.rmse(t, p) == skm.root_mean_squared_error(t, p)
    assert reg.mae(t, p) == skm.mean_absolute_error(t, p)
    t, p = RNG.uniform(0, 3, 10_000), RNG.uniform(0, 3, 10_000)
    assert reg.rmsle(t, p) == skm.root_mean_squared_log_error(t, p)
    assert reg.rmse(np.array([1.0, 2.0]), np.array([1.0, 4.0])) == pytest.approx(math.sqrt(2))
    with pytest.raises(InvalidSubmission, match="negative"):
        reg.rmsle(np.array([1.0]), np.array([-0.5]))


def test_columnwise_errors_by_loop():
    t, p = RNG.uniform(0, 2, (300, 3)), RNG.uniform(0, 2, (300, 3))
    expected = np.mean([skm.root_mean_squared_error(t[:, c], p[:, c]) for c in range(3)])
    assert reg.mcrmse(t, p) == expected
    two = [skm.root_mean_squared_log_error(t[:, c], p[:, c]) for c in range(2)]
    assert reg.mean_columnwise_rmsle(t[:, :2], p[:, :2]) == (two[0] + two[1]) / 2


def test_log_mae_by_type_by_loop():
    t, p = RNG.normal(size=90), RNG.normal(size=90)
    types = RNG.integers(0, 3, 90)
    expected = np.mean([math.log(np.mean(np.abs(t[types == k] - p[types == k]))) for k in range(3)])
    assert reg.log_mae_by_type(t, p, types) == pytest.approx(expected, rel=1e-12)
    assert reg.log_mae_by_type(t, t, types) == -math.inf


def test_correlations_equal_scipy():
    t, p = RNG.normal(size=500), RNG.normal(size=500)
    assert reg.pearson(t, p) == pearsonr(t, p)[0]
    assert math.isnan(reg.pearson(t, np.ones(500)))
    tt, pp = RNG.normal(size=(200, 3)), RNG.normal(size=(200, 3))
    expected = np.mean([spearmanr(pp[:, c], tt[:, c]).correlation for c in range(3)])
    assert reg.mean_columnwise_spearman(tt, pp) == expected


def test_laplace_log_likelihood_by_hand():
    value = reg.laplace_log_likelihood(np.array([3000.0]), np.array([2900.0]), np.array([50.0]))
    assert value == pytest.approx(-math.sqrt(2) * 100 / 70 - math.log(math.sqrt(2) * 70))
    capped = reg.laplace_log_likelihood(np.array([0.0]), np.array([5000.0]), np.array([100.0]))
    assert capped == pytest.approx(-math.sqrt(2) * 1000 / 100 - math.log(math.sqrt(2) * 100))


def test_mean_angular_error_by_hand():
    az, zen = np.array([0.3]), np.array([1.0])
    assert reg.mean_angular_error(az, zen, az, zen) == pytest.approx(0.0, abs=1e-7)
    assert reg.mean_angular_error(
        np.array([0.0]), np.array([0.0]), np.array([0.0]), np.array([math.pi])
    ) == pytest.approx(math.pi)


def test_haversine_by_hand():
    one_degree = reg.haversine_metres(
        np.array([0.0]), np.array([0.0]), np.array([1.0]), np.array([0.0])
    )
    assert one_degree[0] == pytest.approx(2 * math.pi * 6_371_000 / 360)
    d = np.arange(101, dtype=float)
    assert reg.haversine_p50_p95_mean([d, np.zeros(5)]) == pytest.approx(((50 + 95) / 2 + 0) / 2)


# --- ranked lists -------------------------------------------------------------------------------


def _apk(actual, predicted, k):
    predicted = predicted[:k]
    score, hits = 0.0, 0.0
    for i, p in enumerate(predicted):
        if p in actual and p not in predicted[:i]:
            hits += 1.0
            score += hits / (i + 1.0)
    return score / min(len(actual), k)


def test_map_at_k_by_hand_and_by_loop():
    assert rl.map_at_k(pa.array(["a"]), pa.array(["b a c"]), 5) == 0.5
    assert rl.map_at_k(pa.array(["a b"]), pa.array(["a a b"]), 5) == pytest.approx((1 + 2 / 3) / 2)
    items = [f"i{v}" for v in range(30)]
    actual = [" ".join(RNG.choice(items, RNG.integers(1, 6), replace=False)) for _ in range(300)]
    predicted = [" ".join(RNG.choice(items, RNG.integers(1, 15))) for _ in range(300)]
    for k in (5, 12):
        expected = np.mean(
            [
                _apk(set(a.split(" ")), p.split(" "), k)
                for a, p in zip(actual, predicted, strict=True)
            ]
        )
        assert rl.map_at_k(pa.array(actual), pa.array(predicted), k) == expected


def test_lwlrap_against_sklearn_and_a_loop():
    truth = (RNG.random((200, 8)) < 0.2).astype(int)
    scores = RNG.random((200, 8))
    weight = truth.sum(axis=1)
    keep = weight > 0
    expected = skm.label_ranking_average_precision_score(
        truth[keep] > 0, scores[keep], sample_weight=weight[keep]
    )
    assert rl.lwlrap(truth, scores) == expected
    total = 0.0
    for row_truth, row_scores in zip(truth[keep], scores[keep], strict=True):
        for label in np.flatnonzero(row_truth):
            ranked = row_scores >= row_scores[label]
            total += (ranked & (row_truth > 0)).sum() / ranked.sum()
    assert rl.lwlrap(truth, scores) == pytest.approx(total / weight.sum(), rel=1e-12)
