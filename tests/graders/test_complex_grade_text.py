"""Text and sequence competitions end to end: perfect, sample-like and corrupted submissions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import graders
from tests.support.synthetic import CompetitionLayout, shuffled, string_ids


def layout_for(tmp_path, competition_id) -> CompetitionLayout:
    return CompetitionLayout(tmp_path, competition_id, graders.grader_for(competition_id).answers)


def grade(layout: CompetitionLayout, path):
    return graders.grade_submission(path, layout.competition_id, layout.data_dir)


def brute_levenshtein(a, b) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


SENTENCES = [
    "the cat sat on the mat .",
    'He said , " quoted , text " .',
    "numbers like 1990 and 3.5 stay text",
    "Ünïcödé wörds àre fine",
    "a b c d e f g",
]


def test_billion_word_perfect_sample_and_corrupted(tmp_path):
    layout = layout_for(tmp_path, "billion-word-imputation")
    ids = list(range(1, 6))
    answers = {"id": ids, "sentence": SENTENCES}
    layout.write_answers(answers)
    assert grade(layout, layout.write_submission("perfect.csv", shuffled(answers))).score == 0.0
    # The sample is the public test file: each sentence with one word removed.
    holed = [" ".join(s.split()[:2] + s.split()[3:]) for s in SENTENCES]
    result = grade(layout, layout.write_submission("sample.csv", {"id": ids, "sentence": holed}))
    expected = np.mean([brute_levenshtein(a, b) for a, b in zip(SENTENCES, holed, strict=True)])
    assert result.valid_submission and result.score == round(float(expected), 5)
    blank = layout.write_submission("blank.csv", {"id": ids, "sentence": [*holed[:4], None]})
    result = grade(layout, blank)
    assert not result.valid_submission and "empty cells" in result.error
    dup = layout.write_submission("dup.csv", {"id": [1, 1, 3, 4, 5], "sentence": holed})
    result = grade(layout, dup)
    assert not result.valid_submission and "'id' values do not match" in result.error


def test_bms_reads_empty_predictions_as_nan_text(tmp_path):
    layout = layout_for(tmp_path, "bms-molecular-translation")
    truth = ["InChI=1S/H2O/h1H2", "InChI=1S/CH4/h1H4", "InChI=1S/C2H6O/c1-2-3/h3H,2H2,1H3"]
    ids = ["000011a64c74", "0000c9f8d3b2", "0001ae5ff4cc"]
    layout.write_answers({"image_id": ids, "InChI": truth})
    result = grade(
        layout,
        layout.write_submission(
            "s.csv", {"image_id": ids, "InChI": ["InChI=1S/H2O/h1H2", None, "x"]}
        ),
    )
    expected = (0 + brute_levenshtein(truth[1], "nan") + brute_levenshtein(truth[2], "x")) / 3
    assert result.valid_submission and result.score == round(expected, 5)


def test_gesture_sequences(tmp_path):
    layout = layout_for(tmp_path, "multi-modal-gesture-recognition")
    truth = ["1 5 3 20", "7", "2 2 9 11 4"]
    ids = [300, 301, 302]
    layout.write_answers({"Id": ids, "Sequence": truth})
    perfect = layout.write_submission("p.csv", {"Id": ids[::-1], "Sequence": truth[::-1]})
    assert grade(layout, perfect).score == 0.0
    result = grade(
        layout, layout.write_submission("s.csv", {"Id": ids, "Sequence": ["1 5 20", "7 7", "12"]})
    )
    assert result.valid_submission and result.score == round((1 + 1 + 5) / 10, 5)
    for bad in (["1 5 3 20", "7", "2 x"], ["1 5 3 20", None, "2"]):
        result = grade(layout, layout.write_submission("b.csv", {"Id": ids, "Sequence": bad}))
        assert not result.valid_submission and "integers separated by spaces" in result.error


# --- word Jaccard ------------------------------------------------------------------------------


def jaccard(a: str, b: str) -> float:
    x, y = set(a.lower().split()), set(b.lower().split())
    return len(x & y) / len(x | y) if x | y else 0.0


def test_chaii_perfect_sample_and_corrupted(tmp_path):
    layout = layout_for(tmp_path, "chaii-hindi-and-tamil-question-answering")
    truth = ["नई दिल्ली", "चेन्नई", "1947", "இந்தியா தலைநகரம்"]
    ids = string_ids(4, prefix="q")
    answers = {"id": ids, "PredictionString": truth}
    layout.write_answers(answers)
    assert grade(layout, layout.write_submission("p.csv", shuffled(answers))).score == 1.0
    preds = ["दिल्ली", None, "1947 AD", "இந்தியா"]
    result = grade(layout, layout.write_submission("s.csv", {"id": ids, "PredictionString": preds}))
    expected = np.mean([jaccard(t, p or "") for t, p in zip(truth, preds, strict=True)])
    assert result.valid_submission and result.score == round(float(expected), 5)
    numbers = layout.write_submission("n.csv", {"id": ids, "PredictionString": [1, 2, 3, 4]})
    result = grade(layout, numbers)
    assert not result.valid_submission and "must hold text" in result.error


def test_tweet_both_empty_row_is_ungradable(tmp_path):
    layout = layout_for(tmp_path, "tweet-sentiment-extraction")
    truth = ["so sad", "I LOVE it", None]
    ids = ["a1", "b2", "c3"]
    layout.write_answers({"textID": ids, "selected_text": truth})
    result = grade(
        layout,
        layout.write_submission("s.csv", {"textID": ids, "selected_text": ["sad", "love IT", "x"]}),
    )
    assert result.valid_submission and result.score == round((1 / 2 + 2 / 3 + 0) / 3, 5)
    result = grade(
        layout,
        layout.write_submission("e.csv", {"textID": ids, "selected_text": ["sad", "love", None]}),
    )
    assert (
        not result.valid_submission and "divides by zero" in result.error and "c3" in result.error
    )


# --- AI4Code ----------------------------------------------------------------------------------------


def test_ai4code_perfect_sample_and_corrupted(tmp_path):
    layout = layout_for(tmp_path, "AI4Code")
    rng = np.random.default_rng(0)
    notebooks = string_ids(30, prefix="nb")
    orders = [[f"{rng.integers(16**8):08x}" for _ in range(rng.integers(1, 12))] for _ in notebooks]
    layout.write_answers({"id": notebooks, "cell_order": [" ".join(o) for o in orders]})
    perfect = {"id": notebooks, "cell_order": [" ".join(o) for o in orders]}
    assert grade(layout, layout.write_submission("p.csv", shuffled(perfect))).score == 1.0

    # Sample-like: code cells first, in a shuffled order.
    guesses = [list(rng.permutation(o)) for o in orders]
    result = grade(
        layout,
        layout.write_submission(
            "s.csv", {"id": notebooks, "cell_order": [" ".join(g) for g in guesses]}
        ),
    )
    inversions = pairs = 0
    for truth, guess in zip(orders, guesses, strict=True):
        ranks = [truth.index(c) for c in guess]
        inversions += sum(
            1 for i, j in itertools.combinations(range(len(ranks)), 2) if ranks[i] > ranks[j]
        )
        pairs += len(truth) * (len(truth) - 1)
    assert result.valid_submission and result.score == round(1 - 4 * inversions / pairs, 5)

    longest = int(np.argmax([len(o) for o in orders]))
    short = [" ".join(o) for o in orders]
    short[longest] = " ".join(orders[longest][1:])
    result = grade(
        layout, layout.write_submission("short.csv", {"id": notebooks, "cell_order": short})
    )
    assert not result.valid_submission and "different number of cells" in result.error
    unknown = [" ".join(o) for o in orders]
    unknown[longest] = " ".join(["deadbeef", *orders[longest][1:]])
    result = grade(
        layout, layout.write_submission("u.csv", {"id": notebooks, "cell_order": unknown})
    )
    assert not result.valid_submission and "unknown ones" in result.error


@pytest.mark.parametrize(
    "competition_id", ["AI4Code", "tweet-sentiment-extraction", "billion-word-imputation"]
)
def test_validation_never_reveals_a_score(tmp_path, competition_id):
    layout = layout_for(tmp_path, competition_id)
    grader = graders.grader_for(competition_id)
    id_column, target = grader.id_column, grader.target_columns[0]
    layout.write_answers({id_column: ["x1", "x2"], target: ["a b", "c d"]})
    path = layout.write_submission("v.csv", {id_column: ["x2", "x1"], target: ["c d", "a b"]})
    result = graders.validate_submission(path, competition_id, layout.data_dir)
    assert result.valid and result.message == "Submission is valid."
