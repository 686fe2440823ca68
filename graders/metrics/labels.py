"""Class labels as scikit-learn sees them: which label columns it accepts, and their codes.

MLE-bench hands pandas columns to scikit-learn's classification metrics. Whether that works
depends on the column's type: fractional numbers are "continuous" and rejected, NaN is
rejected, text and numbers cannot be mixed. ``encode_labels`` applies those rules to a pair of
label arrays and returns integer codes over the sorted union of labels (scikit-learn's label
order), which every confusion-matrix metric here is built on.

A label array is either a numpy array (int, bool or float) or a pyarrow string array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.arrow_numpy import to_numpy
from graders.results import GraderError, InvalidSubmission

LabelArray = np.ndarray | pa.Array | pa.ChunkedArray


def is_text(values: LabelArray) -> bool:
    return not isinstance(values, np.ndarray)


@dataclass(frozen=True)
class EncodedLabels:
    """Codes 0..n_labels-1 for both sides; ``labels`` are the sorted distinct labels."""

    true: np.ndarray
    pred: np.ndarray
    n_labels: int
    labels: list


def numeric_labels(values: np.ndarray, name: str) -> np.ndarray:
    """Numbers usable as class labels: finite and whole (scikit-learn: not "continuous")."""
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values)
        if bad.any():
            raise InvalidSubmission(
                f"Column '{name}' has {int(bad.sum())} empty, NaN or infinite labels: "
                "every row needs a class label."
            )
        fractional = values != np.floor(values)
        if fractional.any():
            example = float(values[np.flatnonzero(fractional)[0]])
            raise InvalidSubmission(
                f"Column '{name}' must hold class labels, not scores: "
                f"{int(fractional.sum())} values are fractional (e.g. {example!r})."
            )
    return values


def text_labels(values: pa.Array | pa.ChunkedArray, name: str) -> pa.Array | pa.ChunkedArray:
    """Text labels without empty cells (scikit-learn cannot sort NaN among strings)."""
    nulls = values.null_count
    if nulls:
        raise InvalidSubmission(
            f"Column '{name}' has {nulls} empty labels: every row needs a class label."
        )
    return values


def check_same_kind(y_true: LabelArray, y_pred: LabelArray, name: str) -> None:
    """scikit-learn refuses to mix text and number labels."""
    if is_text(y_true) != is_text(y_pred):
        got = "text" if is_text(y_pred) else "numbers"
        want = "text" if is_text(y_true) else "numbers"
        raise InvalidSubmission(
            f"Column '{name}' holds {got} but the answers' labels are {want}: "
            "use the same label values as the training data."
        )


def encode_labels(y_true: LabelArray, y_pred: LabelArray, name: str) -> EncodedLabels:
    """Validate a (truth, prediction) label pair like scikit-learn and encode both.

    Raises ``InvalidSubmission`` for NaN, fractional numbers, or text/number mixes.
    """
    check_same_kind(y_true, y_pred, name)
    if is_text(y_true):
        y_true = _answer_side(text_labels, y_true)
        y_pred = text_labels(y_pred, name)
        both = pa.chunked_array([*_chunks(y_true), *_chunks(y_pred)], type=pa.string())
        distinct = pc.unique(both)
        distinct = distinct.take(pc.sort_indices(distinct))
        codes_true = to_numpy(pc.index_in(y_true, value_set=distinct))
        codes_pred = to_numpy(pc.index_in(y_pred, value_set=distinct))
        return EncodedLabels(
            codes_true.astype(np.int64),
            codes_pred.astype(np.int64),
            len(distinct),
            distinct.to_pylist(),
        )
    t = _answer_side(numeric_labels, np.asarray(y_true)).astype(np.float64)
    p = numeric_labels(np.asarray(y_pred), name).astype(np.float64)
    return _encode_numbers(t, p)


def _answer_side(check, values):
    """``check`` applied to the answers' labels: a failure is the data's (``GraderError``),
    never an ``InvalidSubmission`` quoting private labels."""
    try:
        return check(values, "answers")
    except InvalidSubmission as error:
        raise GraderError(f"The answers' labels are unusable: {error}") from None


def _encode_numbers(t: np.ndarray, p: np.ndarray) -> EncodedLabels:
    low = min(t.min(initial=np.inf), p.min(initial=np.inf))
    high = max(t.max(initial=-np.inf), p.max(initial=-np.inf))
    if np.isfinite(low) and high - low < 4_000_000:
        # Small integer range: a presence table is much faster than sorting.
        offset_t = (t - low).astype(np.int64)
        offset_p = (p - low).astype(np.int64)
        size = int(high - low) + 1
        present = np.zeros(size, dtype=bool)
        present[offset_t] = True
        present[offset_p] = True
        rank = np.cumsum(present) - 1
        values = np.flatnonzero(present) + low
        return EncodedLabels(rank[offset_t], rank[offset_p], int(present.sum()), list(values))
    values, inverse = np.unique(np.concatenate([t, p]), return_inverse=True)
    return EncodedLabels(inverse[: len(t)], inverse[len(t) :], len(values), list(values))


def _chunks(values: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    if isinstance(values, pa.ChunkedArray):
        return [c.cast(pa.string()) for c in values.chunks]
    return [values.cast(pa.string())]


def confusion_matrix(codes_a: np.ndarray, codes_b: np.ndarray, n_labels: int) -> np.ndarray:
    """``C[i, j]`` = number of rows with ``codes_a == i`` and ``codes_b == j`` (int64)."""
    flat = codes_a.astype(np.int64) * n_labels + codes_b.astype(np.int64)
    return np.bincount(flat, minlength=n_labels * n_labels).reshape(n_labels, n_labels)
