"""Edit distances, word Jaccard, pooled Kendall tau and NQ answer vectors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.metrics import jaccard_score
from sklearn.preprocessing import MultiLabelBinarizer

from graders.metrics.edit_distance import (
    levenshtein_distances,
    levenshtein_mean,
    normalized_sequence_levenshtein,
)
from graders.metrics.ranking import count_inversions, kendall_tau_pooled
from graders.metrics.text_overlap import word_jaccard_mean, word_jaccard_per_row


def brute_levenshtein(a, b) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def test_levenshtein_hand_values():
    assert levenshtein_distances(["kitten", "", "abc"], ["sitting", "xy", "abc"]).tolist() == [
        3,
        2,
        0,
    ]
    assert levenshtein_mean(["kitten", "flaw"], ["sitting", "lawn"]) == 2.5


def test_levenshtein_against_brute_force():
    rng = np.random.default_rng(0)
    alphabet = np.array(list("abcdé= /"))
    truth = ["".join(rng.choice(alphabet, rng.integers(0, 12))) for _ in range(200)]
    pred = ["".join(rng.choice(alphabet, rng.integers(0, 12))) for _ in range(200)]
    expected = [brute_levenshtein(a, b) for a, b in zip(truth, pred, strict=True)]
    assert levenshtein_distances(truth, pred).tolist() == expected
    assert levenshtein_mean(truth, pred) == float(np.mean(expected))


def test_sequence_levenshtein_counts_token_edits():
    truth = [[1, 2, 3], [4, 5], [10]]
    pred = [[1, 3], [4, 5, 6, 7], [1, 0]]  # 1 deletion, 2 insertions, 2 edits ("10" != "1", "0")
    assert normalized_sequence_levenshtein(truth, pred) == 5 / 6
    # Whole tokens: 12 vs 1 2 is a substitution plus an insertion, not a character edit.
    assert normalized_sequence_levenshtein([[12]], [[1, 2]]) == 2.0
    with pytest.raises(ZeroDivisionError):
        normalized_sequence_levenshtein([[]], [[1]])


def test_word_jaccard_matches_scikit_learn_samples_average():
    truth = ["The cat sat", "a b c", "", "x", "", "Dog  dog"]
    pred = ["the CAT", "d", "", "x y", "word", "dog"]
    sets_t = [set(t.lower().split()) for t in truth]
    sets_p = [set(p.lower().split()) for p in pred]
    binarizer = MultiLabelBinarizer(classes=list(set.union(*sets_t, *sets_p)), sparse_output=True)
    expected = jaccard_score(
        binarizer.fit_transform(sets_t), binarizer.transform(sets_p), average="samples"
    )
    assert word_jaccard_mean(truth, pred, both_empty=0.0) == expected
    assert word_jaccard_per_row(truth, pred).tolist() == [2 / 3, 0.0, 0.0, 0.5, 0.0, 1.0]


def test_word_jaccard_strict_raises_when_both_sides_are_empty():
    with pytest.raises(ZeroDivisionError, match="row 1"):
        word_jaccard_mean(["a", " "], ["a", ""], both_empty=None)
    assert word_jaccard_mean(["a b", "c"], ["b", "c"], both_empty=None) == 0.75


def brute_inversions(ranks) -> int:
    return sum(1 for i, j in itertools.combinations(range(len(ranks)), 2) if ranks[i] > ranks[j])


def test_inversions_against_brute_force():
    rng = np.random.default_rng(1)
    lengths = np.concatenate([rng.integers(0, 40, 300), [1, 0, 200, 257]])
    groups = [rng.permutation(n) for n in lengths]
    ranks = np.concatenate(groups) if len(groups) else np.zeros(0)
    expected = [brute_inversions(g.tolist()) for g in groups]
    assert count_inversions(ranks, lengths).tolist() == expected


def test_kendall_tau_pooled_hand_values():
    # Perfect, then one notebook fully reversed: 1 - 4*3/(6 + 6) = 0 ... pooled over both.
    assert kendall_tau_pooled(np.array([0, 1, 2, 0, 1, 2]), np.array([3, 3])) == 1.0
    assert kendall_tau_pooled(np.array([2, 1, 0]), np.array([3])) == -1.0
    assert kendall_tau_pooled(np.array([0, 1, 2, 2, 1, 0]), np.array([3, 3])) == 0.0
    assert kendall_tau_pooled(np.array([1, 0, 0, 1, 2]), np.array([2, 3])) == 1 - 4 * 1 / 8


def test_parse_floats_agrees_with_python_float():
    from graders.metrics.tokens import parse_floats

    rng = np.random.default_rng(7)
    tokens = [repr(float(x)) for x in rng.normal(0, 1e6, 2000)]
    tokens += [f"{x:.17g}" for x in rng.random(2000)] + [
        "1e-320",
        "5e-324",
        "1.7976931348623157e308",
    ]
    tokens += [str(int(x)) for x in rng.integers(-(10**15), 10**15, 100)] + [
        "+3",
        "1_0",
        "\t2",
        "nan",
    ]
    values = parse_floats(np.array(tokens, dtype=object))
    expected = np.array([float(t) for t in tokens])
    assert np.array_equal(values, expected, equal_nan=True)
    with pytest.raises(ValueError):
        parse_floats(np.array(["1.5", "one"], dtype=object))
