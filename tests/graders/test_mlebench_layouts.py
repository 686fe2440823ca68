"""Answers as MLE-bench's prepare.py writes them (graders/data/mlebench_layouts.yaml): the
table covers the catalogue, the synthetic data follows it, and the graders that once
refused the real layout grade it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import graders
from graders.layouts import column_names, load_layouts, render_markdown
from tests.support.catalogue_data import CLASSES_FROM_ANSWERS, build_competition
from tests.support.synthetic import REPO_ROOT, CompetitionLayout


def _header(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as handle:
        return next(csv.reader(handle))


def test_every_catalogue_competition_has_its_layout(catalogue_by_id):
    layouts = load_layouts()
    assert sorted(layouts) == sorted(catalogue_by_id)
    for cid, entry in catalogue_by_id.items():
        assert layouts[cid]["answers_file"] == entry["answers"], cid
        assert layouts[cid]["sample_file"] == entry["sample_submission"], cid
        for key in ("answers_columns", "sample_columns"):
            names = column_names(layouts[cid][key])
            assert names and len(names) == len(set(names)), (cid, key)


def test_layouts_markdown_is_rendered_from_the_yaml():
    rendered = (REPO_ROOT / "graders" / "LAYOUTS.md").read_text(encoding="utf-8")
    assert rendered == render_markdown(), "run: python -m graders.layouts > graders/LAYOUTS.md"


CSV_ANSWERS = sorted(
    cid for cid, layout in load_layouts().items() if layout["answers_format"].startswith("csv")
)


def test_only_natural_questions_has_answers_that_are_not_csv():
    assert set(load_layouts()) - set(CSV_ANSWERS) == {"tensorflow2-question-answering"}


@pytest.mark.parametrize("competition_id", CSV_ANSWERS)
def test_synthetic_answers_have_prepare_py_columns(competition_id, tmp_path):
    layout = load_layouts()[competition_id]
    comp = build_competition(competition_id, tmp_path)
    wanted = column_names(layout["answers_columns"])
    header = _header(comp.answers)
    if competition_id in CLASSES_FROM_ANSWERS:  # a subset of the classes, in their order
        assert [c for c in wanted if c in header] == header
    else:
        assert header == wanted


LMSYS_ANSWERS = {
    "id": [30192, 53567, 65089],
    "model_a": ["gpt-4-1106-preview", "koala-13b", "llama-2-13b-chat"],
    "model_b": ["gpt-4-0613", "gpt-4-0613", "vicuna-13b"],
    "prompt": ['["Is it morally right?"]', '["What is the difference, \\"exactly\\"?"]', '["hi"]'],
    "response_a": ['["It depends."]', '["A, then B."]', '["Hello!"]'],
    "response_b": ['["Yes."]', '["B."]', '["Hi, how can I help?"]'],
    "winner_model_a": [1, 0, 0],
    "winner_model_b": [0, 1, 0],
    "winner_tie": [0, 0, 1],
}


def test_lmsys_grades_correct_submissions_on_prepare_py_answers(tmp_path):
    layout = CompetitionLayout(
        tmp_path, "lmsys-chatbot-arena", answers="lmsys-chatbot-arena/prepared/private/answers.csv"
    )
    layout.write_answers(LMSYS_ANSWERS)
    ids = LMSYS_ANSWERS["id"]
    classes = ("winner_model_a", "winner_model_b", "winner_tie")
    perfect = layout.write_submission(
        "perfect.csv", {"id": ids, **{c: [float(v) for v in LMSYS_ANSWERS[c]] for c in classes}}
    )
    sample = layout.write_submission(
        "sample.csv", {"id": ids, **{c: [0.3333333333333333] * 3 for c in classes}}
    )
    best = graders.grade_submission(perfect, "lmsys-chatbot-arena", tmp_path)
    assert best.valid_submission and best.score == 0.0, best.error
    uniform = graders.grade_submission(sample, "lmsys-chatbot-arena", tmp_path)
    assert uniform.valid_submission and uniform.score == pytest.approx(1.09861, abs=1e-5)


def test_paddy_sample_as_prepare_py_writes_it_is_valid(tmp_path):
    comp = build_competition("paddy-disease-classification", tmp_path)
    rows = list(csv.reader(comp.sample_submission.open(newline="", encoding="utf-8")))
    empty = tmp_path / "empty-labels.csv"
    with empty.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(
            [rows[0], *([row[0], ""] for row in rows[1:])]
        )
    result = graders.grade_submission(empty, "paddy-disease-classification", tmp_path)
    assert result.valid_submission and result.score == 0.0, result.error
