"""Validation tells an agent nothing about the private answers beyond the test ids and
their number (both public through the sample submission).

An agent asks the validation service as often as it likes while it runs, so a message that
quotes an answer, or a verdict that flips with the answers, is a way to read them. For every
competition in the catalogue the synthetic answers are turned into two variants that keep
the ids, the row count and every public column (image sizes, keys):

- *planted*: distinctive sentinels (a word, a number) in the answer values;
- *permuted*: the planted answers moved between rows (which rows hold which answer).

A set of broken submissions (and the two reference ones) is then validated against the
original answers and both variants: no message may contain a sentinel, and the verdict and
message must be the same for all three. Then specific regressions, tweet-sentiment-extraction
first: validation named the ids of the rows whose private answer is empty.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import graders
from tests.support.catalogue_data import build_competition
from tests.support.synthetic import CompetitionLayout

COMPETITIONS = graders.known_competitions()

SENTINEL_TEXT = "Zqxsentinel"
SENTINEL_INT = 8675309
SENTINEL_FLOAT = 8675309.25
SENTINELS = ("zqxsentinel", "8675309")

# Answer columns that are not private answers - the test images' sizes (public with the
# images, in contrails' sample submission too) and key columns that name what a row is
# about: never planted, and rows are moved only among rows that agree on them.
PUBLIC_COLUMNS = {
    "google-research-identify-contrails-reduce-global-warming": ("height", "width"),
    "hubmap-kidney-segmentation": ("width_pixels", "height_pixels"),
    "vesuvius-challenge-ink-detection": ("width", "height"),
    "uw-madison-gi-tract-image-segmentation": ("class", "image_width", "image_height"),
    "osic-pulmonary-fibrosis-progression": ("Patient",),
}
# AI4Code's answers are the cells of public notebooks in their private order: the order is
# shuffled, never the cells (planting a cell id would change what the notebook holds).
ORDER_ONLY = {"AI4Code"}

_INT = re.compile(r"^[+-]?\d+$")


# --- files -------------------------------------------------------------------------------------


def _read_rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _write_rows(path: Path, rows: list[list[str]] | None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if rows is None:
        path.write_bytes(b"")
        return path
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    return path


def _kind(values: list[str]) -> str:
    present = [v for v in values if v != ""]
    if not present:
        return "empty"
    if all(_INT.match(v) for v in present):
        return "int"
    if set(present) <= {"True", "False"}:
        return "bool"
    try:
        [float(v) for v in present]
    except ValueError:
        return "text"
    return "float"


# --- answer variants -----------------------------------------------------------------------------


def _id_column(competition_id: str, header: list[str]) -> str:
    grader = graders.grader_for(competition_id)
    return getattr(grader, "id_column", None) or header[0]


def _plant(rows: list[list[str]], columns: list[int]) -> list[list[str]]:
    """Sentinels of each column's own kind: the largest number becomes a larger sentinel
    (order and the number of distinct labels kept), every text gains a sentinel word."""
    out = [list(row) for row in rows]
    for c in columns:
        values = [row[c] for row in rows[1:]]
        kind = _kind(values)
        if kind == "int":
            top = max(int(v) for v in values if v)
            sentinel = SENTINEL_INT if top < SENTINEL_INT else SENTINEL_INT * 10 ** len(str(top))
            for row in out[1:]:
                if row[c] and int(row[c]) == top:
                    row[c] = str(sentinel)
        elif kind == "float":
            numbers = [float(v) for v in values if v]
            top = max(n for n in numbers if not math.isnan(n))
            for row in out[1:]:
                if row[c] and float(row[c]) == top:
                    row[c] = repr(SENTINEL_FLOAT)
        elif kind == "text":
            for row in out[1:]:
                if row[c]:
                    row[c] = f"{row[c]} {SENTINEL_TEXT}"
    return out


def _permute(rows: list[list[str]], columns: list[int], keys: list[int]) -> list[list[str]]:
    """The values of ``columns`` moved between rows that agree on ``keys`` (ids stay)."""
    rng = np.random.default_rng(7)
    groups: dict[tuple, list[int]] = {}
    for index, row in enumerate(rows[1:], start=1):
        groups.setdefault(tuple(row[k] for k in keys), []).append(index)
    out = [list(row) for row in rows]
    for members in groups.values():
        for source, target in zip(rng.permutation(members), members, strict=True):
            for c in columns:
                out[target][c] = rows[source][c]
    return out


def _usable(competition_id: str, data_dir: Path, submissions: list[Path]) -> bool:
    try:
        for path in submissions:
            graders.validate_submission(path, competition_id, data_dir)
    except graders.GraderError:
        return False
    return True


def answer_variants(comp, tmp_path: Path) -> tuple[dict[str, Path], int]:
    """{"original", "planted", "permuted"} -> data folder; and how many columns got sentinels."""
    cid = comp.competition_id
    relative = comp.answers.relative_to(comp.data_dir)
    planted_dir, permuted_dir = tmp_path / "planted", tmp_path / "permuted"
    references = [comp.sample_submission, comp.perfect_submission]
    n_planted = 0
    if comp.answers.suffix == ".jsonl":  # natural questions: only numbers, moved between rows
        lines = [json.loads(line) for line in comp.answers.read_text().splitlines()]
        (planted_dir / relative).parent.mkdir(parents=True)
        (planted_dir / relative).write_text(comp.answers.read_text())
        order = np.random.default_rng(7).permutation(len(lines))
        moved = [
            {**line, "annotations": lines[source]["annotations"]}
            for line, source in zip(lines, order, strict=True)
        ]
        (permuted_dir / relative).parent.mkdir(parents=True)
        (permuted_dir / relative).write_text("".join(json.dumps(x) + "\n" for x in moved))
        return {"original": comp.data_dir, "planted": planted_dir, "permuted": permuted_dir}, 0
    rows = _read_rows(comp.answers)
    header = rows[0]
    public = [header.index(c) for c in PUBLIC_COLUMNS.get(cid, ())]
    keys = [header.index(_id_column(cid, header)), *public]
    movable = [c for c in range(len(header)) if c not in keys]
    if cid in ORDER_ONLY:
        rng = np.random.default_rng(7)
        planted = rows
        permuted = [header] + [
            [
                cell if c in keys else " ".join(rng.permutation(cell.split()))
                for c, cell in enumerate(r)
            ]
            for r in rows[1:]
        ]
    else:
        chosen = movable
        planted = _plant(rows, chosen)
        _write_rows(planted_dir / relative, planted)
        if not _usable(cid, planted_dir, references):  # keep only what leaves answers usable
            chosen = []
            for c in movable:
                _write_rows(planted_dir / relative, _plant(rows, [*chosen, c]))
                if _usable(cid, planted_dir, references):
                    chosen.append(c)
            planted = _plant(rows, chosen)
        n_planted = sum(
            any(planted[r][c] != rows[r][c] for r in range(1, len(rows))) for c in chosen
        )
        permuted = _permute(planted, movable, public)
    _write_rows(planted_dir / relative, planted)
    _write_rows(permuted_dir / relative, permuted)
    return {"original": comp.data_dir, "planted": planted_dir, "permuted": permuted_dir}, n_planted


# --- submissions ------------------------------------------------------------------------------------


def probe_submissions(comp, folder: Path) -> dict[str, Path]:
    """The reference submissions and a dozen broken ones, as an agent might send them."""
    perfect = _read_rows(comp.perfect_submission)
    sample = _read_rows(comp.sample_submission)
    header, body = perfect[0], perfect[1:]
    id_column = _id_column(comp.competition_id, header)
    at = header.index(id_column) if id_column in header else 0

    def values(row: list[str], value: str) -> list[str]:
        return [cell if i == at else value for i, cell in enumerate(row)]

    def renamed(row: list[str], prefix: str) -> list[str]:
        return [f"{prefix}{cell}" if i == at else cell for i, cell in enumerate(row)]

    half = len(body) // 2
    cases: dict[str, list[list[str]] | None] = {
        "perfect": perfect,
        "sample": sample,
        "empty_file": None,
        "header_only": [header],
        "no_id_column": [[c for i, c in enumerate(r) if i != at] for r in perfect],
        "missing_row": perfect[:-1],
        "extra_row": [*perfect, renamed(body[0], "not-a-test-id-")],
        "repeated_row": [header, body[0], body[0], *body[1:-1]],
        "unknown_ids": [header, *(renamed(r, "x-") for r in body)],
        "renamed_column": [[*header[:-1], "wrong_column"], *body],
        "extra_column": [[*header, "extra"], *([*r, "1"] for r in body)],
        "text_values": [header, *(values(r, "not-a-value") for r in body)],
        "blank_values": [header, *(values(r, "") for r in body)],
        "negative_values": [header, *(values(r, "-1") for r in body)],
        "half_and_half": [header, *sample[1 : half + 1], *body[half:]],
        "reversed_rows": [header, *body[::-1]],
    }
    # One row changed at a time, at rows spread over the file: where only some rows are
    # scored (chosen by the answers), a verdict that depends on the row is an oracle.
    for r in sorted({0, len(body) // 3, 2 * len(body) // 3, len(body) - 1}):
        cases[f"blank_row_{r}"] = [
            header,
            *(values(x, "") if i == r else x for i, x in enumerate(body)),
        ]
        others = [x for i, x in enumerate(body) if i != r]
        cases[f"repeated_row_{r}"] = [header, *others[:-1], body[r], body[r]]
    return {name: _write_rows(folder / f"{name}.csv", rows) for name, rows in cases.items()}


def _outcome(path: Path, competition_id: str, data_dir: Path) -> tuple:
    try:
        result = graders.validate_submission(path, competition_id, data_dir)
    except graders.GraderError as error:  # the service answers only "it failed"
        return ("service error", type(error).__name__)
    return (result.valid, result.message)


@pytest.mark.parametrize("competition_id", COMPETITIONS)
def test_validation_depends_on_ids_and_row_count_only(competition_id, tmp_path):
    comp = build_competition(competition_id, tmp_path / "original", n_rows=24)
    variants, n_planted = answer_variants(comp, tmp_path)
    submissions = probe_submissions(comp, tmp_path / "submissions")
    outcomes: dict[str, dict[str, tuple]] = {name: {} for name in submissions}
    for variant, data_dir in variants.items():  # variant by variant: answers read once
        for name, path in submissions.items():
            outcomes[name][variant] = _outcome(path, competition_id, data_dir)
    for name, seen in outcomes.items():
        for variant, (_, message) in seen.items():
            text = str(message).lower()
            assert not any(s in text for s in SENTINELS), (name, variant, message)
        assert len(set(seen.values())) == 1, f"{name}: the verdict follows the answers: {seen}"
    assert outcomes["sample"]["original"] == (True, "Submission is valid.")
    planted_text = (variants["planted"] / comp.answers.relative_to(comp.data_dir)).read_text()
    if n_planted:
        assert any(s in planted_text.lower() for s in SENTINELS)


# Answers made only of numbers inside structures (RLE masks, boxes, token spans, cell ids,
# gesture sequences) or of a fixed set of class indices cannot hold a sentinel and keep
# their meaning; they are still moved between rows.
NO_SENTINEL = {
    "3d-object-detection-for-autonomous-vehicles",
    "AI4Code",
    "demo-wine",
    "google-research-identify-contrails-reduce-global-warming",
    "hubmap-kidney-segmentation",
    "kuzushiji-recognition",
    "multi-modal-gesture-recognition",
    "siim-covid19-detection",
    "tensorflow2-question-answering",
    "tgs-salt-identification-challenge",
    "uw-madison-gi-tract-image-segmentation",
    "vesuvius-challenge-ink-detection",
}


def test_sentinels_reach_every_other_competition(tmp_path):
    """The leak test is not vacuous: the planted answers hold sentinels wherever they can."""
    without = set()
    for cid in COMPETITIONS:
        comp = build_competition(cid, tmp_path / cid, n_rows=8)
        if answer_variants(comp, tmp_path / f"{cid}-variants")[1] == 0:
            without.add(cid)
    assert without == NO_SENTINEL


# --- specific regressions -----------------------------------------------------------------------------


def _layout(tmp_path: Path, competition_id: str) -> CompetitionLayout:
    return CompetitionLayout(tmp_path, competition_id, graders.grader_for(competition_id).answers)


def _verdicts(layout: CompetitionLayout, path: Path):
    cid, data = layout.competition_id, layout.data_dir
    return graders.validate_submission(path, cid, data), graders.grade_submission(path, cid, data)


def test_tweet_validation_never_names_rows_whose_answer_is_empty(tmp_path):
    layout = _layout(tmp_path, "tweet-sentiment-extraction")
    ids = ["a1", "b2", "c3", "d4"]
    layout.write_answers({"textID": ids, "selected_text": ["so sad", None, "I LOVE it", "ok"]})
    full = ["sad", "love", "love it", "ok"]
    messages = {}
    for row, row_id in enumerate(ids):
        predictions = [None if i == row else text for i, text in enumerate(full)]
        path = layout.write_submission(
            f"{row_id}.csv", {"textID": ids, "selected_text": predictions}
        )
        validation, grade = _verdicts(layout, path)
        # Rejected wherever the empty prediction is, naming only the submission's own row.
        assert not validation.valid
        assert row_id in validation.message
        assert [i for i in ids if i in validation.message] == [row_id]
        messages[row_id] = validation.message.replace(row_id, "<id>")
        # Grading still follows MLE-bench: ungradable only where the answer is empty too.
        assert grade.valid_submission == (row_id != "b2"), grade.error
    assert len(set(messages.values())) == 1, messages
    # A submission with a word everywhere is valid, the empty answer is never mentioned.
    path = layout.write_submission("full.csv", {"textID": ids, "selected_text": full})
    validation, grade = _verdicts(layout, path)
    assert validation.valid and grade.valid_submission


def test_tweet_validation_of_numbers_and_bad_ids_says_nothing_of_the_answers(tmp_path):
    layout = _layout(tmp_path, "tweet-sentiment-extraction")
    ids = ["a1", "b2", "c3"]
    layout.write_answers({"textID": ids, "selected_text": [SENTINEL_TEXT, None, "x y"]})
    for columns in (
        {"textID": ids, "selected_text": [1, 2, 3]},
        {"textID": ["a1", "b2", "zz"], "selected_text": ["a", "b", "c"]},
        {"textID": ids[:2], "selected_text": ["a", None]},
    ):
        validation = graders.validate_submission(
            layout.write_submission("s.csv", columns), layout.competition_id, layout.data_dir
        )
        assert not any(s in validation.message.lower() for s in SENTINELS), validation.message


def test_ventilator_validation_asks_every_row_for_a_number(tmp_path):
    # Only rows where the answers' u_out is 0 are scored; a NaN elsewhere is graded (as
    # in MLE-bench), but validation refuses it wherever it is.
    layout = _layout(tmp_path, "ventilator-pressure-prediction")
    ids = [1, 2, 3, 4]
    layout.write_answers({"id": ids, "u_out": [0, 1, 0, 1], "pressure": [5.0, 6.0, 7.0, 8.0]})
    for row in range(4):
        pressure = [None if i == row else 5.0 for i in range(4)]
        path = layout.write_submission("s.csv", {"id": ids, "pressure": pressure})
        validation, grade = _verdicts(layout, path)
        assert not validation.valid and f"data rows {row + 1}" in validation.message
        assert grade.valid_submission == (row in (1, 3)), grade.error


def test_covid_validation_asks_every_row_for_numbers(tmp_path):
    layout = _layout(tmp_path, "stanford-covid-vaccine")
    ids = ["s_0", "s_1", "s_2"]
    columns = ("reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C")
    layout.write_answers(
        {"id_seqpos": ids, **{c: [0.5] * 3 for c in columns}, "keep": [True, False, True]}
    )
    for row in range(3):
        values = [None if i == row else 0.5 for i in range(3)]
        path = layout.write_submission("s.csv", {"id_seqpos": ids, **{c: values for c in columns}})
        validation, grade = _verdicts(layout, path)
        assert not validation.valid and "empty or NaN" in validation.message
        assert grade.valid_submission == (row == 1), grade.error


def test_osic_validation_refuses_any_repeated_week(tmp_path):
    # MLE-bench fails only on a repeated *scored* week (a patient's last three measured);
    # validation refuses a repeated week whether or not it is scored.
    layout = _layout(tmp_path, "osic-pulmonary-fibrosis-progression")
    weeks = [f"P1_{w}" for w in range(6)]
    fvc = [None, 2000.0, None, 2100.0, 2200.0, 2300.0]
    layout.write_answers({"Patient_Week": weeks, "Patient": ["P1"] * 6, "FVC": fvc})
    for week in (0, 5):  # unscored, scored
        rows = [*weeks, weeks[week]]
        path = layout.write_submission(
            "s.csv", {"Patient_Week": rows, "FVC": [2000.0] * 7, "Confidence": [100.0] * 7}
        )
        validation, grade = _verdicts(layout, path)
        assert not validation.valid and "more than once" in validation.message
        assert weeks[week] in validation.message
        assert grade.valid_submission == (week == 0), grade.error


def test_lyft_validation_refuses_invalid_boxes_of_any_class(tmp_path):
    # MLE-bench skips boxes of classes absent from a sample's truth, even invalid ones.
    layout = _layout(tmp_path, "3d-object-detection-for-autonomous-vehicles")
    truck = "1.0 1000.0 1500.0 -18.5 2.6 10.2 3.4 0.3 truck"
    layout.write_answers({"Id": ["t1", "t2"], "PredictionString": [truck, truck]})
    for name in ("truck", "car"):
        broken = f"0.9 1000.0 1500.0 -18.5 0 10.2 3.4 0.3 {name}"  # width 0
        path = layout.write_submission(
            "s.csv", {"Id": ["t1", "t2"], "PredictionString": [f"{truck} {broken}", truck]}
        )
        validation, grade = _verdicts(layout, path)
        assert not validation.valid and "'t1'" in validation.message, validation.message
        assert grade.valid_submission == (name == "car"), grade.error


@pytest.mark.parametrize(
    ("competition_id", "answers"),
    [
        ("demo-diabetes", {"id": ["a", "b"], "target": [1.5, SENTINEL_TEXT]}),
        ("demo-diabetes", {"id": ["a", "b"], "target": [1.5, None]}),
        ("aptos2019-blindness-detection", {"id_code": ["a", "b"], "diagnosis": [1.5, 2.0]}),
        ("herbarium-2021-fgvc8", {"Id": ["a", "b"], "Predicted": [1, SENTINEL_TEXT]}),
        ("billion-word-imputation", {"id": [1, 2], "sentence": [SENTINEL_TEXT, None]}),
        ("multi-modal-gesture-recognition", {"Id": [1, 2], "Sequence": ["1 2", SENTINEL_TEXT]}),
        ("siim-covid19-detection", {"id": ["a", "b"], "PredictionString": ["", SENTINEL_TEXT]}),
    ],
)
def test_unusable_answers_are_a_service_error_never_quoted(competition_id, answers, tmp_path):
    layout = _layout(tmp_path, competition_id)
    layout.write_answers(answers)
    ids = next(iter(answers.values()))
    id_column = next(iter(answers))
    target = list(answers)[-1]
    prediction = {
        "billion-word-imputation": "a b",
        "multi-modal-gesture-recognition": "1 2",
        "siim-covid19-detection": "none 1 0 0 1 1",
    }.get(competition_id, "1")
    path = layout.write_submission("s.csv", {id_column: ids, target: [prediction] * len(ids)})
    outcome = _outcome(path, competition_id, layout.data_dir)
    assert outcome[0] == "service error" or not any(
        s in str(outcome[1]).lower() for s in SENTINELS
    ), outcome
    assert "data row" not in str(outcome[1]) and "1.5" not in str(outcome[1]), outcome
