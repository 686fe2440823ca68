"""benchmark.integrity.winnowing: Dolos' algorithm on seeded code (no Node needed)."""

from __future__ import annotations

import json

import pytest

from benchmark.integrity.winnowing import (
    KGRAM_LENGTH,
    KGRAMS_IN_WINDOW,
    UnsupportedLanguage,
    compare_corpus,
    fingerprint,
    python_tokens,
    similarity,
    token_hash,
    winnow,
)
from tests.support.integrity_corpus import PAIRS, REFERENCE, UNRELATED, renamed


def test_dolos_defaults():
    assert (KGRAM_LENGTH, KGRAMS_IN_WINDOW) == (23, 17)


def test_identical_and_renamed_copies_score_one():
    assert similarity(REFERENCE, REFERENCE, "python").similarity == 1.0
    copy = similarity(REFERENCE, renamed(REFERENCE), "python")
    assert copy.similarity >= 0.6
    assert copy.fragments and copy.fragments[0].a_lines[0] == 1


def test_unrelated_code_scores_low():
    assert similarity(REFERENCE, UNRELATED, "python").similarity < 0.2


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_pairs_are_symmetric_and_bounded(name):
    a, b = PAIRS[name]
    one = similarity(a, b, "python").similarity
    assert 0.0 <= one <= 1.0
    assert one == pytest.approx(similarity(b, a, "python").similarity)


def test_partial_copy_fragment_points_at_the_copied_lines():
    a, b = PAIRS["partial"]
    result = similarity(a, b, "python")
    longest = max(result.fragments, key=lambda f: f.kgrams)
    start = REFERENCE.split("\n").index("def add_features(frame):") + 1
    assert longest.a_lines[0] <= start + 1 and longest.a_lines[1] > start + 20


def test_tokens_are_the_tree_shape_without_comments():
    tokens, rows = python_tokens("import os\n# c\nx = f(1, a=2)\n")
    assert tokens[:6] == ["(", "module", "(", "import_statement", "(", "dotted_name"]
    assert "comment" not in tokens and "os" not in tokens
    assert len(rows) == len(tokens)


def test_token_hash_and_winnowing_match_dolos_arithmetic():
    # TokenHash: h = ((h + charCode) * 747287) % 33554393
    assert token_hash("(") == (40 * 747287) % 33554393
    selected = winnow(["a", "b", "c"] * 40)
    assert selected and all(0 <= start <= 120 - KGRAM_LENGTH for _, start in selected)
    # every window of 17 k-grams has a selected k-gram in it
    starts = sorted(start for _, start in selected)
    assert all(b - a <= KGRAMS_IN_WINDOW for a, b in zip(starts, starts[1:], strict=False))
    assert winnow(["a"] * (KGRAM_LENGTH - 1)) == []


def test_compare_corpus_indexes_references_once_and_agrees_with_pairs():
    references = {"ref.py": REFERENCE, "other.py": UNRELATED}
    submissions = {"copy.py": renamed(REFERENCE), "own.py": PAIRS["partial"][1]}
    everything = compare_corpus(submissions, references, threshold=0.0)
    assert len(everything) == 4
    for match in everything:
        expected = similarity(submissions[match.submission], references[match.reference], "python")
        assert match.similarity == pytest.approx(expected.similarity)
    flagged = compare_corpus(submissions, references, threshold=0.6)
    # own.py is the unrelated file with the reference's feature code spliced in
    assert [(m.submission, m.reference) for m in flagged] == [
        ("copy.py", "ref.py"),
        ("own.py", "other.py"),
    ]
    assert flagged[0].as_dict()["fragments"]
    assert flagged[0].similarity >= flagged[1].similarity


def test_notebook_code_cells_are_compared():
    cells = [
        {"cell_type": "markdown", "source": ["# Title\n"]},
        {"cell_type": "code", "source": ["!pip install lightgbm\n", "%matplotlib inline\n"]},
        {"cell_type": "code", "source": REFERENCE.splitlines(keepends=True)},
    ]
    notebook = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    [match] = compare_corpus({"run.py": REFERENCE}, {"ref.ipynb": notebook}, threshold=0.6)
    assert match.similarity > 0.9


def test_r_files_use_the_regex_tokenizer():
    script = (
        "library(dplyr)\ntrain <- read.csv('train.csv')\nfit <- glm(y ~ x, data = train)\n" * 10
    )
    renamed_script = script.replace("train", "tr").replace("fit", "model")
    assert similarity(script, renamed_script, "r").similarity == 1.0
    assert fingerprint(script, "r").total > 0


def test_unknown_language_is_refused():
    with pytest.raises(UnsupportedLanguage):
        similarity("a", "b", "cobol")
