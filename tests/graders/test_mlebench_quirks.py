"""MLE-bench's leniencies and oddities that the graders reproduce on purpose.

Each test states what MLE-bench's grade.py does and checks the same outcome here; every
grader with such behaviour lists it in ``quirks``.
"""

from __future__ import annotations

import json
import math

import pytest

import graders
from graders.competitions.auc import JIGSAW_IDENTITIES
from tests.support.synthetic import CompetitionLayout


def setup(tmp_path, competition_id, answers: dict):
    layout = CompetitionLayout(tmp_path, competition_id, graders.grader_for(competition_id).answers)
    layout.write_answers(answers)
    return layout


def grade(layout, name, columns):
    path = layout.write_submission(name, columns)
    return graders.grade_submission(path, layout.competition_id, layout.data_dir)


def test_every_column_grader_documents_quirks_as_text():
    for competition_id in graders.known_competitions():
        grader = graders.grader_for(competition_id)
        assert isinstance(grader.quirks, tuple)


def test_numeric_ids_match_by_value_like_pandas(tmp_path):
    # pandas reads "00012" and "12" as the same integer
    layout = setup(
        tmp_path,
        "rsna-miccai-brain-tumor-radiogenomic-classification",
        {"BraTS21ID": ["00012", "00005", "00301"], "MGMT_value": [1, 0, 1]},
    )
    result = grade(layout, "s.csv", {"BraTS21ID": [12, 5, 301], "MGMT_value": [0.9, 0.1, 0.8]})
    assert result.valid_submission and result.score == 1.0


def test_spaceship_accepts_one_and_zero_for_booleans(tmp_path):
    layout = setup(
        tmp_path,
        "spaceship-titanic",
        {"PassengerId": ["0001_01", "0002_01", "0003_01"], "Transported": [True, False, True]},
    )
    result = grade(
        layout,
        "s.csv",
        {"PassengerId": ["0001_01", "0002_01", "0003_01"], "Transported": [1, 0, 0]},
    )
    assert result.valid_submission and result.score == pytest.approx(2 / 3, abs=1e-5)


def test_text_normalization_compares_missing_values_as_nan_text(tmp_path):
    layout = setup(
        tmp_path,
        "text-normalization-challenge-english-language",
        {"id": ["0_0", "0_1"], "after": ["NA", "two"]},
    )
    # "null" and "NA" both become NaN in pandas and then the text "nan"
    result = grade(layout, "s.csv", {"id": ["0_0", "0_1"], "after": ["null", "two"]})
    assert result.score == 1.0


def test_paddy_empty_prediction_counts_as_wrong_not_invalid(tmp_path):
    layout = setup(
        tmp_path,
        "paddy-disease-classification",
        {"image_id": ["a", "b", "c"], "label": ["blast", "normal", "blast"]},
    )
    result = grade(
        layout, "s.csv", {"image_id": ["a", "b", "c"], "label": ["blast", None, "hispa"]}
    )
    assert result.valid_submission and result.score == pytest.approx(1 / 3, abs=1e-5)


def test_string_labels_with_an_empty_cell_are_invalid_elsewhere(tmp_path):
    layout = setup(
        tmp_path,
        "tensorflow-speech-recognition-challenge",
        {"fname": ["a", "b", "c"], "label": ["yes", "no", "up"]},
    )
    result = grade(layout, "s.csv", {"fname": ["a", "b", "c"], "label": ["yes", None, "up"]})
    assert not result.valid_submission


def test_imet_single_numeric_label_per_row_is_invalid(tmp_path):
    layout = setup(tmp_path, "imet-2020-fgvc7", {"id": ["a", "b"], "attribute_ids": ["13 51", "7"]})
    result = grade(layout, "s.csv", {"id": ["a", "b"], "attribute_ids": [13, 7]})
    assert not result.valid_submission and "as text" in result.error
    result = grade(layout, "t.csv", {"id": ["a", "b"], "attribute_ids": ["13 51", "7 99"]})
    # 99 is not an answer label: ignored, so precision stays perfect
    assert result.score == 1.0


def test_taxi_keys_are_not_compared(tmp_path):
    layout = setup(
        tmp_path,
        "new-york-city-taxi-fare-prediction",
        {"key": ["k1", "k2", "k3"], "fare_amount": [5.0, 7.0, 9.0]},
    )
    result = grade(layout, "s.csv", {"key": ["x1", "x2", "x3"], "fare_amount": [5.0, 7.0, 9.0]})
    assert result.valid_submission and result.score == 0.0
    short = grade(layout, "t.csv", {"key": ["k1", "k2"], "fare_amount": [5.0, 7.0]})
    assert not short.valid_submission


def test_nomad_pairs_rows_by_position(tmp_path):
    answers = {
        "id": [1, 2],
        "formation_energy_ev_natom": [0.1, 0.2],
        "bandgap_energy_ev": [1.0, 2.0],
    }
    layout = setup(tmp_path, "nomad2018-predict-transparent-conductors", answers)
    swapped = {
        "id": [2, 1],
        "formation_energy_ev_natom": [0.2, 0.1],
        "bandgap_energy_ev": [2.0, 1.0],
    }
    assert grade(layout, "same.csv", answers).score == 0.0
    assert grade(layout, "swapped.csv", swapped).score > 0
    negative = dict(answers, bandgap_energy_ev=[-1.0, 2.0])
    assert not grade(layout, "neg.csv", negative).valid_submission


def test_jigsaw_toxic_scores_columns_by_position(tmp_path):
    classes = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
    ids = ["a", "b", "c", "d"]
    labels = {c: [0, 1, 0, 1] if i % 2 else [1, 0, 1, 0] for i, c in enumerate(classes)}
    layout = setup(tmp_path, "jigsaw-toxic-comment-classification-challenge", {"id": ids, **labels})
    perfect = {"id": ids, **{c: [float(v) for v in labels[c]] for c in classes}}
    assert grade(layout, "p.csv", perfect).score == 1.0
    reordered = {"id": ids, **{c: perfect[c] for c in [classes[1], classes[0], *classes[2:]]}}
    assert grade(layout, "r.csv", reordered).score < 1.0  # columns paired by position
    extra = dict(perfect, note=[0.0] * 4)
    assert not grade(layout, "e.csv", extra).valid_submission


def test_stanford_covid_keep_flags_follow_file_position(tmp_path):
    ids = [f"id_{i}" for i in range(4)]
    cols = ["reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C"]
    answers = {
        "id_seqpos": ids,
        **{c: [1.0, 2.0, 3.0, 4.0] for c in cols},
        "keep": [True, True, False, False],
    }
    layout = setup(tmp_path, "stanford-covid-vaccine", answers)
    same = {"id_seqpos": ids, **{c: [1.0, 2.0, 3.0, 4.0] for c in cols}}
    assert grade(layout, "same.csv", same).score == 0.0
    # Same rows, reversed file order: MLE-bench keeps rows 0 and 1 *of the file* (ids 3, 2)
    # and pairs them with the answers' kept ids 0 and 1 after sorting.
    reverse = {"id_seqpos": ids[::-1], **{c: [4.0, 3.0, 2.0, 1.0] for c in cols}}
    result = grade(layout, "rev.csv", reverse)
    assert result.valid_submission and result.score == pytest.approx(2.0)


def test_hms_nan_cells_cost_nothing(tmp_path):
    votes = ["seizure_vote", "lpd_vote", "gpd_vote", "lrda_vote", "grda_vote", "other_vote"]
    answers = {
        "eeg_id": [10, 20],
        **{
            v: [1, 0] if v == "seizure_vote" else [0, 1] if v == "lpd_vote" else [0, 0]
            for v in votes
        },
    }
    layout = setup(tmp_path, "hms-harmful-brain-activity-classification", answers)
    submission = {"eeg_id": [10, 20], **{v: [None, None] for v in votes}}
    submission["other_vote"] = [1.0, 1.0]  # all mass on a class with no votes
    result = grade(layout, "nan.csv", submission)
    assert result.valid_submission and result.score == 0.0


def test_volcanic_repeated_ids_are_scored_twice_and_rounded(tmp_path):
    layout = setup(
        tmp_path,
        "predict-volcanic-eruptions-ingv-oe",
        {"segment_id": [1, 2], "time_to_eruption": [100, 200]},
    )
    result = grade(layout, "s.csv", {"segment_id": [1, 2, 2], "time_to_eruption": [100, 203, 200]})
    assert result.valid_submission and result.score == 1.0  # mean(0, 3, 0) rounded


def test_champs_exact_type_gives_minus_infinity(tmp_path):
    layout = setup(
        tmp_path,
        "champs-scalar-coupling",
        {
            "id": [1, 2, 3],
            "type": ["1JHC", "1JHC", "2JHH"],
            "scalar_coupling_constant": [80.0, 90.0, -10.0],
        },
    )
    result = grade(
        layout, "s.csv", {"id": [1, 2, 3], "scalar_coupling_constant": [80.0, 90.0, -9.0]}
    )
    assert result.valid_submission and result.score == -math.inf


def test_constant_prediction_correlation_is_nan_but_valid(tmp_path):
    layout = setup(
        tmp_path,
        "us-patent-phrase-to-phrase-matching",
        {"id": ["a", "b", "c"], "score": [0.0, 0.5, 1.0]},
    )
    result = grade(layout, "s.csv", {"id": ["a", "b", "c"], "score": [0.5, 0.5, 0.5]})
    assert result.valid_submission and math.isnan(result.score)


def test_breast_cancer_nan_prediction_scores_zero(tmp_path):
    layout = setup(
        tmp_path,
        "rsna-breast-cancer-detection",
        {"prediction_id": ["1_L", "1_R"], "cancer": [1, 0]},
    )
    result = grade(layout, "s.csv", {"prediction_id": ["1_L", "1_R"], "cancer": [None, 0.2]})
    assert result.valid_submission and result.score == 0.0


def test_jigsaw_bias_accepts_toxicity_and_treats_nan_as_non_toxic(tmp_path):
    ids = list(range(8))
    toxicity = [0.9, 0.1, 0.8, 0.2, 0.7, 0.0, 1.0, 0.3]
    answers = {
        "id": ids,
        "toxicity": toxicity,
        **{g: [1.0, 1.0, 1.0, 1.0, 0, 0, 0, 0] for g in JIGSAW_IDENTITIES},
    }
    layout = setup(tmp_path, "jigsaw-unintended-bias-in-toxicity-classification", answers)
    assert grade(layout, "t.csv", {"id": ids, "toxicity": toxicity}).score == 1.0
    with_nan = [0.9, None, 0.8, 0.2, 0.7, 0.0, 1.0, 0.3]
    assert grade(layout, "n.csv", {"id": ids, "prediction": with_nan}).score == 1.0
    both = {"id": ids, "prediction": toxicity, "toxicity": toxicity}
    assert not grade(layout, "b.csv", both).valid_submission


def test_osic_scores_only_the_last_three_measured_weeks(tmp_path):
    weeks = ["P1_-2", "P1_5", "P1_7", "P1_9", "P1_11", "P1_13"]
    answers = {
        "Patient_Week": weeks,
        "Patient": ["P1"] * 6,
        "FVC": [3000.0, 2900.0, None, 2800.0, 2700.0, None],
    }
    layout = setup(tmp_path, "osic-pulmonary-fibrosis-progression", answers)
    # wrong FVC on unscored weeks (-2, 7, 13) does not matter
    fvc = [0.0, 2900.0, 0.0, 2800.0, 2700.0, 0.0]
    result = grade(layout, "s.csv", {"Patient_Week": weeks, "FVC": fvc, "Confidence": [None] * 6})
    assert result.score == pytest.approx(-math.log(math.sqrt(2) * 70), abs=1e-5)
    unknown = grade(layout, "u.csv", {"Patient_Week": ["P1_99"], "FVC": [1.0], "Confidence": [70]})
    assert not unknown.valid_submission and "P1_99" in unknown.error


def test_smartphone_rows_pair_by_position_within_each_trip(tmp_path):
    answers = {
        "tripId": ["t1", "t1", "t2"],
        "UnixTimeMillis": [1, 2, 1],
        "LatitudeDegrees": [37.0, 37.001, 40.0],
        "LongitudeDegrees": [-122.0, -122.0, -75.0],
    }
    layout = setup(tmp_path, "smartphone-decimeter-2022", answers)
    reordered = {k: [v[2], v[0], v[1]] for k, v in answers.items()}  # trips interleaved
    assert grade(layout, "r.csv", reordered).score == 0.0
    wrong_count = {k: [v[0], v[0], v[1]] for k, v in answers.items()}
    assert "trip" in grade(layout, "w.csv", wrong_count).error


def _nq_answers(layout):
    examples = [
        {
            "example_id": "101",
            "annotations": [
                {
                    "long_answer": {"start_token": 5, "end_token": 20},
                    "short_answers": [{"start_token": 7, "end_token": 9}],
                    "yes_no_answer": "NONE",
                }
            ],
        },
        {
            "example_id": "202",
            "annotations": [
                {
                    "long_answer": {"start_token": -1, "end_token": -1},
                    "short_answers": [],
                    "yes_no_answer": "NONE",
                }
            ],
        },
        {
            "example_id": "303",
            "annotations": [
                {
                    "long_answer": {"start_token": 1, "end_token": 4},
                    "short_answers": [],
                    "yes_no_answer": "YES",
                }
            ],
        },
    ]
    text = "".join(json.dumps({**e, "document_text": "a b c"}) + "\n" for e in examples)
    layout.write_answers_text(text)


def test_natural_questions_agreement_rate(tmp_path):
    layout = CompetitionLayout(
        tmp_path,
        "tensorflow2-question-answering",
        "tensorflow2-question-answering/prepared/private/test.jsonl",
    )
    _nq_answers(layout)
    ids = ["101_long", "101_short", "202_long", "202_short", "303_long", "303_short"]
    perfect = {"example_id": ids, "PredictionString": ["5:20", "7:9", "", "", "1:4", "YES"]}
    assert grade(layout, "p.csv", perfect).score == 1.0
    sample = {"example_id": ids, "PredictionString": [""] * 6}
    assert grade(layout, "s.csv", sample).score == pytest.approx(2 / 6, abs=1e-5)
    wrong = dict(perfect, PredictionString=["5:21", "NO", "3:4", "", "1:4", "YES"])
    assert grade(layout, "w.csv", wrong).score == pytest.approx(3 / 6, abs=1e-5)
    bad = dict(perfect, PredictionString=["maybe", "", "", "", "", ""])
    assert "PredictionString" in grade(layout, "b.csv", bad).error
    assert not grade(
        layout, "short.csv", {"example_id": ids[:4], "PredictionString": [""] * 4}
    ).valid_submission
