"""Natural Questions (tensorflow2-question-answering): answer spans turned into binary vectors.

MLE-bench scores each ``<example>_long`` / ``<example>_short`` row as a binary decision:
``y_pred`` is 1 when a prediction is given; ``y_true`` is 1 when the given prediction is one of
the valid answers, or when no prediction is given although an answer exists. Micro F1 over
both classes of these vectors equals their agreement rate, so a blank prediction for a
question without an answer counts as correct and a wrong span counts as wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# A parsed prediction: a (start, end) token span, "YES"/"NO", or "" (no answer).
Answer = tuple[int, int] | str


def parse_prediction(text: str) -> Answer:
    """``"start:end"`` -> ``(start, end)``; ``"YES"``, ``"NO"`` and ``""`` as they are.

    Surrounding whitespace is ignored. Raises ``ValueError`` for anything else (including
    spans whose parts are not integers).
    """
    text = text.strip()
    if ":" in text and len(text.split(":")) == 2:
        start, end = text.split(":")
        return int(start), int(end)
    if text in ("YES", "NO", ""):
        return text
    raise ValueError(f"'{text}' is not 'start:end', 'YES', 'NO' or blank")


def valid_answers(annotation: dict, kind: str) -> list[Answer]:
    """The answers a ``long`` or ``short`` row accepts, from one Natural Questions annotation."""
    if kind == "long":
        long_answer = annotation["long_answer"]
        if long_answer["start_token"] != -1:
            return [(int(long_answer["start_token"]), int(long_answer["end_token"]))]
        return []
    answers: list[Answer] = [
        (int(short["start_token"]), int(short["end_token"]))
        for short in annotation["short_answers"]
    ]
    if annotation["yes_no_answer"] != "NONE":
        answers.append(annotation["yes_no_answer"])
    return answers


def answer_vectors(
    predictions: Sequence[Answer], accepted: Sequence[Sequence[Answer]]
) -> tuple[np.ndarray, np.ndarray]:
    """``(y_true, y_pred)`` int arrays as MLE-bench builds them, one entry per row."""
    given = np.fromiter((p != "" for p in predictions), dtype=bool, count=len(predictions))
    correct = np.fromiter(
        (p in ok for p, ok in zip(predictions, accepted, strict=True)),
        dtype=bool,
        count=len(predictions),
    )
    exists = np.fromiter((len(ok) > 0 for ok in accepted), dtype=bool, count=len(accepted))
    y_true = np.where(given, correct, exists).astype(np.int64)
    return y_true, given.astype(np.int64)


def micro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """scikit-learn's micro-averaged F1 of two label vectors (for 0/1 vectors: agreement rate)."""
    from sklearn.metrics import f1_score

    return float(f1_score(y_true=y_true, y_pred=y_pred, average="micro"))
