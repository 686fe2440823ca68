"""Every way a submission can be malformed, with the message a person sees.

The demo competitions have the plainest rules, so they carry most of these cases; the
probability and label checks use competitions whose MLE-bench grader makes them.
"""

from __future__ import annotations

import pytest

import graders
from tests.support.synthetic import CompetitionLayout

IDS = [f"t{i:03d}" for i in range(10)]
LABELS = [i % 3 for i in range(10)]


@pytest.fixture
def digits(tmp_path):
    layout = CompetitionLayout(tmp_path, "demo-digits")
    layout.write_answers({"id": IDS, "label": LABELS})
    return layout


def grade(layout: CompetitionLayout, path):
    result = graders.grade_submission(path, layout.competition_id, layout.data_dir)
    validation = graders.validate_submission(path, layout.competition_id, layout.data_dir)
    assert validation.valid == result.valid_submission
    if not result.valid_submission and result.submission_exists:
        assert validation.message == result.error
        assert result.score is None
    return result


def test_valid_submission(digits):
    result = grade(digits, digits.write_submission("ok.csv", {"id": IDS, "label": LABELS}))
    assert result.valid_submission and result.score == 1.0 and result.error is None
    assert result.grader_version == "accuracy/1"


def test_missing_file_is_not_a_submission(digits, tmp_path):
    result = grade(digits, tmp_path / "nowhere.csv")
    assert not result.submission_exists and not result.valid_submission
    assert "No submission file" in result.error


def test_a_file_not_ending_in_csv_is_not_a_submission(digits):
    path = digits.write_submission_text("submission.txt", "id,label\nt000,0\n")
    result = grade(digits, path)
    assert not result.submission_exists
    assert ".csv" in result.error


def test_a_directory_is_not_a_submission(digits, tmp_path):
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    assert not grade(digits, folder).submission_exists


def test_empty_file(digits):
    result = grade(digits, digits.write_submission_text("empty.csv", ""))
    assert result.submission_exists and not result.valid_submission
    assert "empty" in result.error


def test_header_only(digits):
    result = grade(digits, digits.write_submission_text("header.csv", "id,label\n"))
    assert "has 0 rows but the test set has 10" in result.error


def test_not_utf8(digits):
    body = "id,label\n" + "".join(f"t{i:03d},{i % 3}\n" for i in range(9)) + "t009,caf\xe9\n"
    path = digits.write_submission_text("latin1.csv", body.encode("latin-1"))
    result = grade(digits, path)
    assert "not UTF-8" in result.error


def test_binary_file_is_not_a_csv(digits):
    path = digits.write_submission_text("zip.csv", b"PK\x03\x04\x14\x00\x00\x00\x08\x00" * 20)
    result = grade(digits, path)
    assert not result.valid_submission
    assert "UTF-8" in result.error or "CSV" in result.error


def test_ragged_rows(digits):
    path = digits.write_submission_text("ragged.csv", "id,label\nt000,0,7\n")
    assert "Expected 2 columns, got 3" in grade(digits, path).error


def test_missing_column_is_named(digits):
    result = grade(digits, digits.write_submission("nolabel.csv", {"id": IDS, "pred": LABELS}))
    assert "missing 1 column: 'label'" in result.error
    assert "Expected columns: id, label" in result.error


def test_extra_columns_are_named_where_mlebench_forbids_them(tmp_path):
    layout = CompetitionLayout(tmp_path, "icecube-neutrinos-in-deep-ice")
    layout.write_answers({"event_id": [1, 2], "azimuth": [0.1, 0.2], "zenith": [1.0, 1.1]})
    path = layout.write_submission(
        "extra.csv",
        {"event_id": [1, 2], "azimuth": [0.1, 0.2], "zenith": [1.0, 1.1], "notes": ["a", "b"]},
    )
    result = grade(layout, path)
    assert "1 unexpected column: 'notes'" in result.error


def test_extra_columns_are_accepted_where_mlebench_accepts_them(digits):
    path = digits.write_submission("extra.csv", {"id": IDS, "label": LABELS, "note": ["x"] * 10})
    assert grade(digits, path).score == 1.0


def test_wrong_number_of_rows(digits):
    path = digits.write_submission("short.csv", {"id": IDS[:7], "label": LABELS[:7]})
    result = grade(digits, path)
    assert "Submission has 7 rows but the test set has 10" in result.error


def test_ids_missing_and_unknown_are_counted_and_shown(digits):
    ids = IDS[:8] + ["x1", "x2"]
    result = grade(digits, digits.write_submission("ids.csv", {"id": ids, "label": LABELS}))
    assert "2 ids of the test set are missing (first: 't008', 't009')" in result.error
    assert "2 ids are not in the test set (first: 'x1', 'x2')" in result.error


def test_duplicate_ids(digits):
    ids = IDS[:9] + ["t000"]
    result = grade(digits, digits.write_submission("dup.csv", {"id": ids, "label": LABELS}))
    assert "1 id appears more than once (first: 't000')" in result.error
    assert "1 id of the test set is missing (first: 't009')" in result.error


def test_many_unknown_ids_show_only_the_first_few(digits):
    ids = [f"zz{i}" for i in range(10)]
    result = grade(digits, digits.write_submission("ids.csv", {"id": ids, "label": LABELS}))
    assert "10 ids are not in the test set (first: 'zz0', 'zz1', 'zz2', 'zz3', 'zz4', ...)" in (
        result.error
    )


@pytest.fixture
def diabetes(tmp_path):
    layout = CompetitionLayout(tmp_path, "demo-diabetes")
    layout.write_answers({"id": IDS, "target": [float(i) for i in range(10)]})
    return layout


def test_nan_prediction(diabetes):
    values = [1.0] * 9 + [None]
    result = grade(diabetes, diabetes.write_submission("nan.csv", {"id": IDS, "target": values}))
    assert "Column 'target' has 1 empty or NaN value" in result.error


def test_infinite_prediction(diabetes):
    values = [1.0] * 9 + ["inf"]
    result = grade(diabetes, diabetes.write_submission("inf.csv", {"id": IDS, "target": values}))
    assert "infinite" in result.error


def test_non_numeric_prediction(diabetes):
    values = [1.0] * 8 + ["abc", "1,5"]
    result = grade(diabetes, diabetes.write_submission("text.csv", {"id": IDS, "target": values}))
    assert "Column 'target' must hold numbers; 2 values are not (first: 'abc', '1,5')" in (
        result.error
    )


def test_probability_outside_unit_interval(tmp_path):
    layout = CompetitionLayout(tmp_path, "demo-breast-cancer")
    layout.write_answers({"id": IDS, "target": [i % 2 for i in range(10)]})
    scores = [0.5] * 9 + [1.7]
    result = grade(layout, layout.write_submission("p.csv", {"id": IDS, "target": scores}))
    assert "must hold probabilities between 0 and 1; 1 value is outside (first: 1.7)" in (
        result.error
    )


def test_logits_rejected_like_mlebench(tmp_path):
    layout = CompetitionLayout(tmp_path, "aerial-cactus-identification")
    layout.write_answers({"id": IDS, "has_cactus": [i % 2 for i in range(10)]})
    logits = [-2.0 + i * 0.5 for i in range(10)]
    result = grade(layout, layout.write_submission("p.csv", {"id": IDS, "has_cactus": logits}))
    assert not result.valid_submission and "probabilities" in result.error


def test_rows_must_sum_to_one(tmp_path):
    layout = CompetitionLayout(tmp_path, "demo-wine")
    layout.write_answers({"id": IDS, "target": LABELS})
    probabilities = {"class_0": [0.5] * 10, "class_1": [0.3] * 10, "class_2": [0.1] * 10}
    result = grade(layout, layout.write_submission("p.csv", {"id": IDS, **probabilities}))
    assert "sum to 1; 10 rows do not" in result.error


def test_fractional_class_labels_are_rejected(digits):
    labels = [0.5] + LABELS[1:]
    result = grade(digits, digits.write_submission("frac.csv", {"id": IDS, "label": labels}))
    assert "must hold class labels, not scores" in result.error


def test_empty_class_label_is_rejected(digits):
    labels = [None] + LABELS[1:]
    result = grade(digits, digits.write_submission("empty.csv", {"id": IDS, "label": labels}))
    assert "empty, NaN or infinite labels" in result.error


def test_labels_outside_the_allowed_set(tmp_path):
    answers = "plant-seedlings-classification/prepared/private/answers.csv"
    layout = CompetitionLayout(tmp_path, "plant-seedlings-classification", answers=answers)
    species = ["Maize", "Charlock"] * 5
    layout.write_answers({"file": IDS, "species": species})
    result = grade(layout, layout.write_submission("n.csv", {"file": IDS, "species": LABELS}))
    assert "must hold the class names" in result.error


def test_quoted_fields_with_commas_and_newlines(tmp_path):
    layout = CompetitionLayout(tmp_path, "detecting-insults-in-social-commentary")
    comments = ['"hi, you"', "line one\nline two", 'say ""x""', "plain"]
    layout.write_answers({"Comment": comments, "Insult": [0, 1, 0, 1]})
    path = layout.write_submission("q.csv", {"Comment": comments[::-1], "Insult": [1.0, 0, 1, 0]})
    result = grade(layout, path)
    assert result.valid_submission, result.error
    assert result.score == 1.0


def test_missing_answers_is_an_infrastructure_error(tmp_path):
    layout = CompetitionLayout(tmp_path, "demo-digits")
    path = layout.write_submission("ok.csv", {"id": IDS, "label": LABELS})
    with pytest.raises(graders.AnswersMissing, match="prepare the competition"):
        graders.grade_submission(path, "demo-digits", tmp_path)
    assert isinstance(graders.AnswersMissing("x"), graders.GraderError)


def test_unknown_competition(digits, tmp_path):
    with pytest.raises(graders.UnknownCompetition):
        graders.grade_submission(tmp_path / "x.csv", "no-such-competition", tmp_path)


def _csv(header: str, rows) -> str:
    return header + "\n" + "".join(f"{a},{b}\n" for a, b in rows)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("", "unreadable"),
        (_csv("id,guess", zip(IDS, range(10), strict=True)), "columns"),
        (_csv("id,target", zip(IDS[:7], range(7), strict=True)), "row_count"),
        (_csv("id,target", ((f"x{i}", 1) for i in IDS)), "ids"),
        (_csv("id,target", ((i, "many") for i in IDS)), "types"),
        (_csv("id,target", ((i, "") for i in IDS)), "nan"),
    ],
)
def test_each_invalid_submission_says_its_class(diabetes, text, kind):
    """The class of the first error found is part of what grading and validation return
    (the failure table counts invalid submissions by it), so no one parses messages."""
    path = diabetes.write_submission_text("submission.csv", text)
    result = grade(diabetes, path)
    assert not result.valid_submission and result.error_class == kind, result.error
    assert graders.validate_submission(path, "demo-diabetes", diabetes.data_dir).error_class == kind


def test_a_missing_and_a_valid_submission_have_their_class(digits, tmp_path):
    assert grade(digits, tmp_path / "nowhere.csv").error_class == "missing"
    ok = digits.write_submission("ok.csv", {"id": IDS, "label": LABELS})
    assert grade(digits, ok).error_class is None
