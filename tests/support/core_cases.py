"""Synthetic answers and perfect submissions for every competition graded by column metrics.

``CASES[competition_id](rng)`` returns a ``Case``: the answers' columns, a perfect
submission, the best possible score, and a constant submission built like MLE-bench's sample
submissions (always valid). Facts (columns, label kinds) come from the catalogue.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from graders.competitions.auc import JIGSAW_IDENTITIES
from tests.support.synthetic import int_ids, string_ids

N = 60


@dataclass
class Case:
    answers: dict
    perfect: dict
    best: float
    constant: dict
    answers_file: str = "test.csv"
    id_aligned: bool = True  # rows may be shuffled and still score the same
    extra: dict = field(default_factory=dict)


def _labels(rng, values, n=N):
    return [values[i % len(values)] for i in rng.permutation(n)]


def label_case(id_col, target, ids, labels, best=1.0, answers_file="test.csv", constant=None):
    answers = {id_col: ids, target: labels}
    return Case(
        answers,
        dict(answers),
        best,
        {id_col: ids, target: [constant if constant is not None else labels[0]] * len(ids)},
        answers_file,
    )


def binary_case(id_col, target, ids, rng, answers_file="test.csv", best=1.0, constant=0.5):
    truth = _labels(rng, [0, 1], len(ids))
    return Case(
        {id_col: ids, target: truth},
        {id_col: ids, target: [float(t) for t in truth]},
        best,
        {id_col: ids, target: [constant] * len(ids)},
        answers_file,
    )


def one_hot_case(classes, rng, answers_file="test.csv", id_col="id"):
    ids = string_ids(N, "doc")
    chosen = rng.integers(0, len(classes), N)
    answers = {id_col: ids, **{c: [int(k == i) for k in chosen] for i, c in enumerate(classes)}}
    perfect = {id_col: ids, **{c: [float(v) for v in answers[c]] for c in classes}}
    constant = {id_col: ids, **{c: [1 / len(classes)] * N for c in classes}}
    return Case(answers, perfect, 0.0, constant, answers_file)


def columns_case(id_col, ids, columns, best, answers_file="test.csv", constant_value=0.5):
    answers = {id_col: ids, **columns}
    constant = {id_col: ids, **{c: [constant_value] * len(ids) for c in columns}}
    return Case(answers, dict(answers), best, constant, answers_file)


# --- per competition ------------------------------------------------------------------------


def _tf_speech(rng):
    words = ["yes", "no", "up", "down", "silence", "unknown"]
    return label_case("fname", "label", string_ids(N, "clip"), _labels(rng, words))


def _text_norm(rng):
    words = ["one", "twenty", "sil", "2 0 1 6", "kilogram", ","]
    return label_case(
        "id", "after", [f"0_{i}" for i in range(N)], _labels(rng, words), answers_file="answers.csv"
    )


def _inaturalist(rng):
    ids = int_ids(N)
    truth = [int(v) for v in rng.integers(0, 1000, N)]
    case = label_case("id", "predicted", ids, truth, best=0.0, answers_file="answers.csv")
    case.perfect = {"id": ids, "predicted": [f"{t} 5 17 42 7" for t in truth]}
    return case


def _multilabel(id_col, target, answers_file, vocabulary, ids):
    def build(rng):
        rows = [
            " ".join(rng.choice(vocabulary, size=rng.integers(1, 4), replace=False))
            for _ in range(N)
        ]
        return label_case(
            id_col,
            target,
            ids,
            rows,
            answers_file=answers_file,
            constant=f"{vocabulary[0]} {vocabulary[1]}",
        )

    return build


def _map_at_k(id_col, target, answers_file, k):
    def build(rng):
        ids = string_ids(N, "img")
        rows = [
            " ".join(f"{v:010d}" for v in rng.choice(10**6, size=rng.integers(1, k), replace=False))
            for _ in range(N)
        ]
        return label_case(
            id_col, target, ids, rows, answers_file=answers_file, constant="0000000001"
        )

    return build


def _hotel(rng):
    ids = string_ids(N, "hotel_img")
    truth = [int(v) for v in rng.integers(100, 200, N)]
    case = label_case("image", "hotel_id", ids, truth, constant="100 101 102 103 104")
    case.perfect = {"image": ids, "hotel_id": [f"{t} 1 2 3 4" for t in truth]}
    return case


def _jigsaw_toxic(rng):
    classes = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
    ids = [f"{v:016x}" for v in rng.integers(0, 2**60, N)]
    labels = {c: _labels(rng, [0, 1]) for c in classes}
    for c in classes:
        for row in range(5):  # unscored rows: every label -1
            labels[c][row] = -1
    perfect = {"id": ids, **{c: [float(max(v, 0)) for v in labels[c]] for c in classes}}
    case = columns_case("id", ids, labels, 1.0)
    case.perfect = perfect
    return case


def _columnwise(id_col, classes, extra_answer_columns=()):
    def build(rng):
        ids = string_ids(N, "study")
        labels = {c: _labels(rng, [0, 1]) for c in classes}
        case = columns_case(id_col, ids, labels, 1.0)
        case.perfect = {id_col: ids, **{c: [float(v) for v in labels[c]] for c in classes}}
        for column in extra_answer_columns:
            case.answers[column] = _labels(rng, [0, 1])
        return case

    return build


def _jigsaw_bias(rng):
    n = 200
    ids = int_ids(n)
    toxicity = [float(v) for v in rng.choice([0.0, 0.2, 0.6, 1.0], n)]
    answers = {"id": ids, "toxicity": toxicity}
    for name in JIGSAW_IDENTITIES:
        answers[name] = [float(v) for v in rng.choice([0.0, 0.7], n)]
    perfect = {"id": ids, "prediction": toxicity}
    return Case(answers, perfect, 1.0, {"id": ids, "prediction": [0.5] * n})


def _freesound(rng):
    classes = [
        "Accelerating_and_revving_and_vroom",
        "Accordion",
        "Acoustic_guitar",
        "Applause",
        "Bark",
    ]
    ids = string_ids(N, "clip")
    truth = {c: _labels(rng, [0, 0, 1]) for c in classes}
    case = columns_case("fname", ids, truth, 1.0, constant_value=0.2)
    case.perfect = {"fname": ids, **{c: [float(v) for v in truth[c]] for c in classes}}
    return case


def _rsna_2022(rng):
    studies = [f"1.2.826.0.1.{v}" for v in rng.integers(10**6, 10**7, 20)]
    targets = ["patient_overall", "C1", "C2", "C3", "C4", "C5", "C6", "C7"]
    ids = [f"{s}_{t}" for s in studies for t in targets]
    truth = _labels(rng, [0, 1], len(ids))
    return Case(
        {"row_id": ids, "fractured": truth},
        {"row_id": ids, "fractured": [float(v) for v in truth]},
        0.0,
        {"row_id": ids, "fractured": [0.5] * len(ids)},
        "answers.csv",
    )


HMS_VOTES = ["seizure_vote", "lpd_vote", "gpd_vote", "lrda_vote", "grda_vote", "other_vote"]


def _hms(rng):
    eeg = [int(v) for v in rng.integers(10**8, 10**9, 20)]
    ids = [eeg[i % 20] for i in range(N)]  # every eeg_id three times, same votes
    votes = {c: [0] * N for c in HMS_VOTES}
    for row in range(N):
        seed = ids[row] % 6
        votes[HMS_VOTES[seed]][row] = 3
        votes[HMS_VOTES[(seed + 1) % 6]][row] = 1
    perfect = {"eeg_id": ids, **{c: [v / 4 for v in votes[c]] for c in HMS_VOTES}}
    constant = {"eeg_id": ids, **{c: [1 / 6] * N for c in HMS_VOTES}}
    return Case({"eeg_id": ids, **votes}, perfect, 0.0, constant)


def _regression(
    id_col, target, answers_file="test.csv", ids=None, low=0.0, high=100.0, integers=False
):
    def build(rng):
        row_ids = ids(rng) if ids else string_ids(N, "row")
        values = rng.uniform(low, high, N)
        values = [int(v) for v in values] if integers else [float(v) for v in values]
        return label_case(
            id_col, target, row_ids, values, best=0.0, answers_file=answers_file, constant=values[0]
        )

    return build


def _ventilator(rng):
    case = _regression("id", "pressure", ids=lambda r: int_ids(N))(rng)
    case.answers["u_out"] = _labels(rng, [0, 1])
    return case


def _nomad(rng):
    ids = list(range(1, N + 1))
    cols = {
        "formation_energy_ev_natom": [float(v) for v in rng.uniform(0, 0.5, N)],
        "bandgap_energy_ev": [float(v) for v in rng.uniform(0, 5, N)],
    }
    case = columns_case("id", ids, cols, 0.0, constant_value=0.1)
    case.id_aligned = False
    return case


def _covid(rng):
    ids = [f"id_{s:05x}_{p}" for s in range(6) for p in range(10)]
    cols = {
        c: [float(v) for v in rng.uniform(0, 2, N)]
        for c in ["reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C"]
    }
    case = columns_case("id_seqpos", ids, cols, 0.0)
    case.answers["keep"] = [p < 7 for s in range(6) for p in range(10)]
    case.id_aligned = False
    return case


def _champs(rng):
    ids = int_ids(N, start=4_000_000)
    types = _labels(rng, ["1JHC", "2JHH", "3JHN"])
    values = [float(v) for v in rng.normal(0, 10, N)]
    answers = {"id": ids, "type": types, "scalar_coupling_constant": values}
    perfect = {"id": ids, "scalar_coupling_constant": values}
    constant = {"id": ids, "scalar_coupling_constant": [0.0] * N}
    return Case(answers, perfect, -math.inf, constant, "answers.csv")


def _google_quest(rng):
    classes = [
        "question_asker_intent_understanding",
        "question_body_critical",
        "answer_helpful",
        "answer_relevance",
    ]
    ids = int_ids(N)
    cols = {c: [float(v) for v in rng.choice([0.0, 0.333333, 0.666667, 1.0], N)] for c in classes}
    case = columns_case("qa_id", ids, cols, 1.0)
    case.constant = {"qa_id": ids, **{c: [float(v) for v in rng.random(N)] for c in classes}}
    case.id_aligned = False
    return case


def _icecube(rng):
    ids = int_ids(N, start=2000)
    cols = {
        "azimuth": [float(v) for v in rng.uniform(0, 6.28, N)],
        "zenith": [float(v) for v in rng.uniform(0, 3.14, N)],
    }
    return columns_case("event_id", ids, cols, 0.0, constant_value=1.0)


def _smartphone(rng):
    trips = ["2022-04-01-US-SJC-1/GooglePixel4", "2022-04-25-US-SJC-2/SamsungS20"]
    rows = {"tripId": [], "UnixTimeMillis": [], "LatitudeDegrees": [], "LongitudeDegrees": []}
    for trip in trips:
        for step in range(N // 2):
            rows["tripId"].append(trip)
            rows["UnixTimeMillis"].append(1648000000000 + step * 1000)
            rows["LatitudeDegrees"].append(float(37.4 + rng.normal(0, 0.01)))
            rows["LongitudeDegrees"].append(float(-122.1 + rng.normal(0, 0.01)))
    constant = dict(rows)
    constant["LatitudeDegrees"] = [37.4] * N
    constant["LongitudeDegrees"] = [-122.1] * N
    return Case(rows, dict(rows), 0.0, constant, id_aligned=False)


def _osic(rng):
    patients = [f"ID00{v:021d}" for v in rng.integers(10**15, 10**16, 5)]
    weeks = list(range(-3, 30))
    ans = {"Patient_Week": [], "Patient": [], "FVC": []}
    for patient in patients:
        measured = set(rng.choice(weeks, 6, replace=False).tolist())
        for week in weeks:
            ans["Patient_Week"].append(f"{patient}_{week}")
            ans["Patient"].append(patient)
            ans["FVC"].append(float(rng.integers(1500, 4000)) if week in measured else None)
    pw = ans["Patient_Week"]
    perfect = {
        "Patient_Week": pw,
        "FVC": [v if v is not None else 2000.0 for v in ans["FVC"]],
        "Confidence": [70.0] * len(pw),
    }
    constant = {"Patient_Week": pw, "FVC": [2000.0] * len(pw), "Confidence": [100.0] * len(pw)}
    best = -math.log(math.sqrt(2) * 70)
    return Case(ans, perfect, best, constant, id_aligned=True)


def _natural_questions(rng):
    return Case({}, {}, 1.0, {}, "test.jsonl", extra={"jsonl": True})


def _wine(rng):
    ids = string_ids(N, "t")
    target = _labels(rng, [0, 1, 2])
    classes = ["class_0", "class_1", "class_2"]
    perfect = {"id": ids, **{c: [float(t == i) for t in target] for i, c in enumerate(classes)}}
    constant = {"id": ids, **{c: [1 / 3] * N for c in classes}}
    return Case({"id": ids, "target": target}, perfect, 0.0, constant)


def _ints(rng, low, high):
    return [int(v) for v in rng.integers(low, high, N)]


CASES: dict[str, Callable[[np.random.Generator], Case]] = {
    "cassava-leaf-disease-classification": lambda r: label_case(
        "image_id", "label", string_ids(N, "img"), _ints(r, 0, 5)
    ),
    "cdiscount-image-classification-challenge": lambda r: label_case(
        "_id",
        "category_id",
        int_ids(N),
        _ints(r, 1000010000, 1000010100),
        answers_file="answers.csv",
    ),
    "iwildcam-2020-fgvc7": lambda r: label_case(
        "Id", "Category", string_ids(N, "cam"), _ints(r, 0, 50), answers_file="answers.csv"
    ),
    "ml2021spring-hw2": lambda r: label_case(
        "Id", "ClassId", int_ids(N, start=0), _ints(r, 0, 39), answers_file="answers.csv"
    ),
    "movie-review-sentiment-analysis-kernels-only": lambda r: label_case(
        "PhraseId", "Sentiment", int_ids(N), _ints(r, 0, 5), answers_file="answers.csv"
    ),
    "paddy-disease-classification": lambda r: label_case(
        "image_id", "label", string_ids(N, "paddy"), _labels(r, ["normal", "blast", "tungro"])
    ),
    "spaceship-titanic": lambda r: label_case(
        "PassengerId", "Transported", [f"{i:04d}_01" for i in range(N)], _labels(r, [True, False])
    ),
    "tabular-playground-series-dec-2021": lambda r: label_case(
        "Id", "Cover_Type", int_ids(N), _ints(r, 1, 8)
    ),
    "tensorflow-speech-recognition-challenge": _tf_speech,
    "text-normalization-challenge-english-language": _text_norm,
    "text-normalization-challenge-russian-language": _text_norm,
    "inaturalist-2019-fgvc6": _inaturalist,
    "aptos2019-blindness-detection": lambda r: label_case(
        "id_code", "diagnosis", string_ids(N, "eye"), _ints(r, 0, 5)
    ),
    "learning-agency-lab-automated-essay-scoring-2": lambda r: label_case(
        "essay_id", "score", string_ids(N, "essay"), _ints(r, 1, 7), answers_file="answers.csv"
    ),
    "nfl-player-contact-detection": lambda r: label_case(
        "contact_id", "contact", string_ids(N, "58168_003392"), _labels(r, [0, 1])
    ),
    "herbarium-2020-fgvc7": lambda r: label_case(
        "Id", "Predicted", int_ids(N), _ints(r, 0, 30), answers_file="answers.csv"
    ),
    "herbarium-2021-fgvc8": lambda r: label_case(
        "Id", "Predicted", int_ids(N), _ints(r, 0, 30), answers_file="answers.csv"
    ),
    "herbarium-2022-fgvc9": lambda r: label_case(
        "Id", "Predicted", int_ids(N), _ints(r, 0, 30), answers_file="answers.csv"
    ),
    "iwildcam-2019-fgvc6": lambda r: label_case(
        "Id", "Category", string_ids(N, "cam"), _ints(r, 0, 23), answers_file="answers.csv"
    ),
    "facebook-recruiting-iii-keyword-extraction": _multilabel(
        "Id",
        "Tags",
        "test.csv",
        ["c#", "java", "php", "javascript", "android", "jquery"],
        int_ids(N),
    ),
    "imet-2020-fgvc7": _multilabel(
        "id",
        "attribute_ids",
        "answers.csv",
        ["13", "147", "189", "671", "813", "1092"],
        string_ids(N, "art"),
    ),
    "plant-pathology-2021-fgvc8": _multilabel(
        "image",
        "labels",
        "answers.csv",
        ["scab", "healthy", "rust", "complex", "powdery_mildew"],
        string_ids(N, "leaf"),
    ),
    "plant-seedlings-classification": lambda r: label_case(
        "file",
        "species",
        string_ids(N, "seed"),
        _labels(r, ["Black-grass", "Charlock", "Maize"]),
        answers_file="answers.csv",
    ),
    "tensorflow2-question-answering": _natural_questions,
    "h-and-m-personalized-fashion-recommendations": _map_at_k(
        "customer_id", "prediction", "answers.csv", 12
    ),
    "hotel-id-2021-fgvc8": _hotel,
    "whale-categorization-playground": lambda r: label_case(
        "Image",
        "Id",
        string_ids(N, "whale"),
        _labels(r, ["w_1a2b3c4", "w_5d6e7f8", "new_whale"]),
        constant="new_whale w_1a2b3c4 w_5d6e7f8 w_0000000 w_1111111",
    ),
    "rsna-breast-cancer-detection": lambda r: binary_case(
        "prediction_id",
        "cancer",
        [f"{i}_{s}" for i in range(N // 2) for s in "LR"],
        r,
        answers_file="answers.csv",
    ),
    "aerial-cactus-identification": lambda r: binary_case("id", "has_cactus", string_ids(N), r),
    "detecting-insults-in-social-commentary": lambda r: binary_case(
        "Comment", "Insult", [f'"you, number {i}" said ""me""' for i in range(N)], r
    ),
    "histopathologic-cancer-detection": lambda r: binary_case(
        "id", "label", string_ids(N), r, answers_file="answers.csv"
    ),
    "invasive-species-monitoring": lambda r: binary_case(
        "name", "invasive", int_ids(N), r, answers_file="answers.csv"
    ),
    "mlsp-2013-birds": lambda r: binary_case(
        "Id",
        "Probability",
        [rec * 100 + s for rec in range(3) for s in range(19)],
        r,
        answers_file="answers.csv",
    ),
    "random-acts-of-pizza": lambda r: binary_case(
        "request_id", "requester_received_pizza", string_ids(N, "t3"), r
    ),
    "rsna-miccai-brain-tumor-radiogenomic-classification": lambda r: binary_case(
        "BraTS21ID", "MGMT_value", int_ids(N), r
    ),
    "seti-breakthrough-listen": lambda r: binary_case("id", "target", string_ids(N), r),
    "siim-isic-melanoma-classification": lambda r: binary_case(
        "image_name", "target", string_ids(N, "ISIC"), r
    ),
    "tabular-playground-series-may-2022": lambda r: binary_case("id", "target", int_ids(N), r),
    "the-icml-2013-whale-challenge-right-whale-redux": lambda r: binary_case(
        "clip", "probability", string_ids(N, "clip"), r
    ),
    "jigsaw-toxic-comment-classification-challenge": _jigsaw_toxic,
    "plant-pathology-2020-fgvc7": _columnwise(
        "image_id", ["healthy", "multiple_diseases", "rust", "scab"]
    ),
    "playground-series-s3e18": _columnwise("id", ["EC1", "EC2"]),
    "ranzcr-clip-catheter-line-classification": _columnwise(
        "StudyInstanceUID",
        [
            "ETT - Abnormal",
            "ETT - Borderline",
            "ETT - Normal",
            "NGT - Abnormal",
            "NGT - Borderline",
            "NGT - Incompletely Imaged",
            "NGT - Normal",
            "CVC - Abnormal",
            "CVC - Borderline",
        ],
        extra_answer_columns=("CVC - Normal", "Swan Ganz Catheter Present"),
    ),
    "alaska2-image-steganalysis": lambda r: binary_case("Id", "Label", string_ids(N), r),
    "jigsaw-unintended-bias-in-toxicity-classification": _jigsaw_bias,
    "freesound-audio-tagging-2019": _freesound,
    "dog-breed-identification": lambda r: one_hot_case(
        ["affenpinscher", "afghan_hound", "beagle", "yorkshire_terrier"], r
    ),
    "leaf-classification": lambda r: one_hot_case(["Acer_Capillipes", "Quercus_Agrifolia"], r),
    "lmsys-chatbot-arena": lambda r: one_hot_case(
        ["winner_model_a", "winner_model_b", "winner_tie"], r, "answers.csv"
    ),
    "spooky-author-identification": lambda r: one_hot_case(["EAP", "HPL", "MWS"], r),
    "dogs-vs-cats-redux-kernels-edition": lambda r: binary_case(
        "id", "label", int_ids(N), r, "answers.csv", best=0.0
    ),
    "statoil-iceberg-classifier-challenge": lambda r: binary_case(
        "id", "is_iceberg", string_ids(N), r, best=0.0
    ),
    "rsna-2022-cervical-spine-fracture-detection": _rsna_2022,
    "hms-harmful-brain-activity-classification": _hms,
    "denoising-dirty-documents": _regression(
        "id", "value", "answers.csv", ids=lambda r: [f"1_{i}_1" for i in range(N)], high=1.0
    ),
    "new-york-city-taxi-fare-prediction": _regression(
        "key", "fare_amount", ids=lambda r: [f"2015-01-27 13:08:{i:02d}.0000002" for i in range(N)]
    ),
    "petfinder-pawpularity-score": _regression("Id", "Pawpularity", low=1, high=100, integers=True),
    "predict-volcanic-eruptions-ingv-oe": _regression(
        "segment_id",
        "time_to_eruption",
        ids=lambda r: int_ids(N, start=10**8),
        high=5e7,
        integers=True,
    ),
    "ventilator-pressure-prediction": _ventilator,
    "nomad2018-predict-transparent-conductors": _nomad,
    "stanford-covid-vaccine": _covid,
    "champs-scalar-coupling": _champs,
    "us-patent-phrase-to-phrase-matching": lambda r: label_case(
        "id", "score", string_ids(N), _labels(r, [0.0, 0.25, 0.5, 0.75, 1.0]), best=1.0
    ),
    "google-quest-challenge": _google_quest,
    "icecube-neutrinos-in-deep-ice": _icecube,
    "smartphone-decimeter-2022": _smartphone,
    "osic-pulmonary-fibrosis-progression": _osic,
    "demo-digits": lambda r: label_case("id", "label", string_ids(N, "t"), _ints(r, 0, 10)),
    "demo-breast-cancer": lambda r: binary_case("id", "target", string_ids(N, "t"), r),
    "demo-diabetes": _regression("id", "target", high=300.0),
    "demo-wine": _wine,
}
