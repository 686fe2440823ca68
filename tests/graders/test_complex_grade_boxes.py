"""Box and point competitions end to end: vinbigdata, siim-covid19, kuzushiji, Lyft 3D."""

from __future__ import annotations

import numpy as np

import graders
from tests.support.detection import reference_voc
from tests.support.synthetic import CompetitionLayout, shuffled, string_ids


def layout_for(tmp_path, competition_id) -> CompetitionLayout:
    return CompetitionLayout(tmp_path, competition_id, graders.grader_for(competition_id).answers)


def grade(layout: CompetitionLayout, path):
    return graders.grade_submission(path, layout.competition_id, layout.data_dir)


# --- vinbigdata -----------------------------------------------------------------------------------


def test_vinbigdata_perfect_sample_and_corrupted(tmp_path):
    layout = layout_for(tmp_path, "vinbigdata-chest-xray-abnormalities-detection")
    images = ["img_a", "img_b", "img_c", "img_d"]
    rows = {  # long format, sorted by (image_id, class_id) like MLE-bench's groupby
        "image_id": ["img_a", "img_a", "img_b", "img_c", "img_c", "img_d"],
        "class_name": [
            "Aortic enlargement",
            "Cardiomegaly",
            "No finding",
            "Aortic enlargement",
            "Nodule/Mass",
            "No finding",
        ],
        "class_id": [0, 3, 14, 0, 8, 14],
        "rad_id": ["R1"] * 6,
        "x_min": [100.0, 300.0, 0.0, 120.0, 500.0, 0.0],
        "y_min": [80.0, 500.0, 0.0, 90.0, 510.0, 0.0],
        "x_max": [180.0, 700.0, 1.0, 210.0, 540.0, 1.0],
        "y_max": [150.0, 800.0, 1.0, 160.0, 560.0, 1.0],
    }
    layout.write_answers(rows)
    by_image: dict[str, list[str]] = {}
    for i, image in enumerate(rows["image_id"]):
        box = " ".join(str(rows[k][i]) for k in ("x_min", "y_min", "x_max", "y_max"))
        by_image.setdefault(image, []).append(f"{rows['class_id'][i]} 1.0 {box}")
    gold = {"image_id": images, "PredictionString": [" ".join(by_image[i]) for i in images]}
    result = grade(layout, layout.write_submission("gold.csv", shuffled(gold)))
    # The first answer box (annotation id 0) can never be matched: its exact prediction is a
    # false positive ranked before class 0's other (true positive) box -> AP = 0.5 * 51/101.
    assert result.valid_submission and result.score == round((0.5 * 51 / 101 + 3) / 4, 5)

    sample = layout.write_sample_submission(
        {"image_id": images, "PredictionString": ["14 1 0 0 1 1"] * 4}
    )
    result = grade(layout, sample)
    # "No finding" everywhere: right on 2 of 4 images, all at confidence 1 -> AP 0.5; the three
    # other classes score 0.
    assert result.valid_submission and result.score == round((0 + 0 + 0 + 0.5) / 4, 5)

    empty = layout.write_submission(
        "empty.csv",
        {
            "image_id": images,
            "PredictionString": ["14 1 0 0 1 1", None, "14 1 0 0 1 1", "14 1 0 0 1 1"],
        },
    )
    result = grade(layout, empty)
    assert not result.valid_submission and "img_b" in result.error
    spaces = layout.write_submission(
        "sp.csv", {"image_id": images, "PredictionString": ["14 1 0 0 1  1"] * 4}
    )
    result = grade(layout, spaces)
    assert not result.valid_submission and "groups of 6" in result.error
    missing = layout.write_submission(
        "m.csv", {"image_id": images[:3], "PredictionString": ["14 1 0 0 1 1"] * 3}
    )
    result = grade(layout, missing)
    assert not result.valid_submission and "missing images: 'img_d'" in result.error
    repeated = layout.write_submission(
        "r.csv", {"image_id": [*images, "img_a"], "PredictionString": ["14 1 0 0 1 1"] * 5}
    )
    assert grade(layout, repeated).valid_submission  # only the set of ids is checked


# --- siim-covid19 ---------------------------------------------------------------------------------


def test_siim_perfect_sample_and_corrupted(tmp_path):
    layout = layout_for(tmp_path, "siim-covid19-detection")
    studies = [f"{s}_study" for s in string_ids(6, prefix="s")]
    images = [f"{s}_image" for s in string_ids(8, prefix="i", seed=2)]
    study_labels = ["negative", "typical", "typical", "atypical", "indeterminate", "negative"]
    image_labels = [
        "opacity 1 10 10 60 80 opacity 1 200 40 260 120",
        "none 1 0 0 1 1",
        "opacity 1 5 5 50 50",
        "none 1 0 0 1 1",
        "opacity 1 100 100 300 300",
        "none 1 0 0 1 1",
        "opacity 1 30 30 90 90 opacity 1 95 30 150 90",
        "none 1 0 0 1 1",
    ]
    answers = {
        "id": studies + images,
        "PredictionString": [f"{lab} 1 0 0 1 1" for lab in study_labels] + image_labels,
    }
    layout.write_answers(answers)
    assert grade(layout, layout.write_submission("gold.csv", shuffled(answers))).score == 1.0

    sample = layout.write_sample_submission(
        {
            "id": studies + images,
            "PredictionString": ["negative 1 0 0 1 1"] * 6 + ["none 1 0 0 1 1"] * 8,
        }
    )
    result = grade(layout, sample)
    sample_strings = ["negative 1 0 0 1 1"] * 6 + ["none 1 0 0 1 1"] * 8
    expected = reference_voc(answers["PredictionString"], sample_strings)
    assert result.valid_submission and result.score == round(float(expected), 5)

    odd = layout.write_submission(
        "odd.csv",
        {**answers, "PredictionString": ["negative 1 0 0 1"] + answers["PredictionString"][1:]},
    )
    result = grade(layout, odd)
    assert (
        not result.valid_submission and "groups of 6" in result.error and studies[0] in result.error
    )
    blank = layout.write_submission(
        "blank.csv", {**answers, "PredictionString": [None] + answers["PredictionString"][1:]}
    )
    result = grade(layout, blank)
    assert not result.valid_submission and "empty" in result.error


# --- kuzushiji --------------------------------------------------------------------------------------


def test_kuzushiji_perfect_sample_and_corrupted(tmp_path):
    layout = layout_for(tmp_path, "kuzushiji-recognition")
    pages = ["200003076_00034", "umgy001-010", "brsk001-008", "hnsd005-017"]
    truth = [
        "U+306F 1231 3465 133 53 U+304C 275 1652 84 69 U+3044 1495 1218 143 69",
        "U+003F 100 100 40 40",
        None,
        "U+304C 10 10 30 30 U+304C 12 12 30 30",
    ]
    layout.write_answers({"image_id": pages, "labels": truth})
    gold = []
    for text in truth:
        if text is None:
            gold.append(None)
            continue
        t = text.split()
        gold.append(
            " ".join(f"{t[i]} {int(t[i + 1]) + 1} {int(t[i + 2]) + 1}" for i in range(0, len(t), 5))
        )
    result = grade(layout, layout.write_submission("gold.csv", {"image_id": pages, "labels": gold}))
    assert result.valid_submission and result.score == 1.0
    sample = layout.write_sample_submission(
        {"image_id": pages, "labels": ["U+003F 1 1 U+FF2F 2 2"] * 4}
    )
    result = grade(layout, sample)
    assert result.valid_submission and result.score == 0.0
    bad = layout.write_submission(
        "bad.csv", {"image_id": pages, "labels": ["U+003F 1", None, None, None]}
    )
    result = grade(layout, bad)
    assert (
        not result.valid_submission and "groups of 3" in result.error and pages[0] in result.error
    )


# --- Lyft 3D -------------------------------------------------------------------------------------------


def test_lyft_perfect_sample_and_corrupted(tmp_path):
    layout = layout_for(tmp_path, "3d-object-detection-for-autonomous-vehicles")
    tokens = string_ids(5, prefix="tok")
    rng = np.random.default_rng(5)
    truth = []
    for _ in tokens:
        boxes = []
        for _ in range(rng.integers(1, 4)):
            x, y = rng.uniform(1000, 2000, 2)
            boxes.append(
                f"1.0 {x!r} {y!r} -18.5 1.9 4.6 1.7 {rng.uniform(-3, 3)!r} {rng.choice(['car', 'truck'])}"
            )
        truth.append(" ".join(boxes))
    answers = {"Id": tokens, "PredictionString": truth}
    layout.write_answers(answers)
    assert grade(layout, layout.write_submission("gold.csv", shuffled(answers))).score == 1.0
    sample = layout.write_sample_submission({"Id": tokens, "PredictionString": [""] * 5})
    result = grade(layout, sample)
    assert result.valid_submission and result.score == 0.0
    eight = [t.rsplit(" ", 1)[0] for t in truth]
    result = grade(
        layout, layout.write_submission("bad.csv", {"Id": tokens, "PredictionString": eight})
    )
    assert not result.valid_submission and "9 values per box" in result.error
    negative = [t.replace(" 1.9 4.6 ", " -1.9 4.6 ", 1) for t in truth]
    result = grade(
        layout, layout.write_submission("neg.csv", {"Id": tokens, "PredictionString": negative})
    )
    assert not result.valid_submission and "invalid" in result.error
