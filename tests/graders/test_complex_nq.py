"""tensorflow2-question-answering, cross-checked against a plain reading of MLE-bench's rules.

The grader lives in ``graders.competitions.natural_questions``; this test grades random
submissions through the registry and compares with an independent slow reference.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import graders
from tests.support.synthetic import CompetitionLayout

NQ = "tensorflow2-question-answering"


def reference_score(rows: list[tuple[str, str]], answers: list[dict]) -> float:
    """Rows are (example_id, prediction); the agreement rate of MLE-bench's bit pairs."""
    annotations = {str(a["example_id"]): a["annotations"][0] for a in answers}
    agree = 0
    for row_id, text in rows:
        text = text.strip()
        if ":" in text and len(text.split(":")) == 2:
            start, end = text.split(":")
            prediction: object = (int(start), int(end))
        elif text in ("YES", "NO", ""):
            prediction = text
        else:
            raise ValueError(text)
        example, kind = row_id.rsplit("_", 1)
        annotation = annotations[example]
        if kind == "long":
            la = annotation["long_answer"]
            valid = [] if la["start_token"] == -1 else [(la["start_token"], la["end_token"])]
        else:
            valid = [(s["start_token"], s["end_token"]) for s in annotation["short_answers"]]
            if annotation["yes_no_answer"] != "NONE":
                valid.append(annotation["yes_no_answer"])
        y_pred = prediction != ""
        y_true = (prediction in valid) if y_pred else bool(valid)
        agree += y_pred == y_true
    return agree / len(rows)


def _answers(rng, n):
    answers = []
    for i in range(n):
        kind = rng.integers(4)
        start = int(rng.integers(0, 500))
        annotation = {
            "long_answer": {
                "start_token": -1 if kind == 0 else start,
                "end_token": -1 if kind == 0 else start + 80,
            },
            "short_answers": []
            if kind in (0, 3)
            else [{"start_token": start + 5, "end_token": start + 7}],
            "yes_no_answer": "YES" if kind == 3 else "NONE",
        }
        answers.append(
            {
                "example_id": f"-{7000000000000000000 + i}",
                "annotations": [annotation],
                "question_text": "q",
            }
        )
    return answers


def _guess(rng, annotation, kind):
    choice = rng.integers(5)
    if choice == 0:
        return ""
    if kind == "long":
        la = annotation["long_answer"]
        return f"{la['start_token']}:{la['end_token']}" if choice < 3 else "1:2"
    if choice == 1 and annotation["short_answers"]:
        s = annotation["short_answers"][0]
        return f"{s['start_token']}:{s['end_token']}"
    return ["YES", "NO", "3:4", " 5:9 "][int(rng.integers(4))]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_natural_questions_matches_reference(tmp_path, seed):
    rng = np.random.default_rng(seed)
    layout = CompetitionLayout(tmp_path, NQ, graders.grader_for(NQ).answers)
    answers = _answers(rng, 40)
    layout.answers_path.parent.mkdir(parents=True, exist_ok=True)
    layout.answers_path.write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    rows = []
    for a in answers:
        for kind in ("short", "long"):
            rows.append((f"{a['example_id']}_{kind}", _guess(rng, a["annotations"][0], kind)))
    order = rng.permutation(len(rows))
    path = layout.write_submission(
        "s.csv",
        {
            "example_id": [rows[i][0] for i in order],
            "PredictionString": [rows[i][1] for i in order],
        },
    )
    result = graders.grade_submission(path, NQ, layout.data_dir)
    assert result.valid_submission, result.error
    assert result.score == round(reference_score(rows, answers), 5)
