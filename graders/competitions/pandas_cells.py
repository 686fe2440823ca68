"""Cells as MLE-bench's pandas code sees them, for graders that work on text.

Our CSV reader (pyarrow) infers column types the way pandas does; these helpers turn a column
into the Python values a ``grade.py`` would have met after ``read_csv`` and its own
``fillna``/``astype(str)`` steps, so that leniencies and failures match: an empty cell is NaN,
a column of numbers holds numbers (not text), and ``astype(str)`` writes ``1.0`` and ``nan``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.results import InvalidSubmission


def is_text(column: pa.ChunkedArray | pa.Array) -> bool:
    """Whether pandas would hold this column as text (an object column of ``str``)."""
    return pa.types.is_string(column.type) or pa.types.is_large_string(column.type)


def as_pandas_str(column: pa.ChunkedArray | pa.Array) -> list[str]:
    """The column after pandas' ``astype(str)``: empty cells become ``"nan"``, an integer column
    writes ``"7"`` and a float column ``"7.0"``."""
    if is_text(column):
        return pc.fill_null(column, "nan").to_pylist()
    if pa.types.is_null(column.type):
        return ["nan"] * len(column)
    if pa.types.is_floating(column.type) or (
        pa.types.is_integer(column.type) and column.null_count
    ):
        # An integer column with empty cells is a float column in pandas.
        values = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
        return [str(v) for v in values.tolist()]
    if pa.types.is_boolean(column.type) and column.null_count:
        return [str(v) if v is not None else "nan" for v in column.to_pylist()]
    return [str(v) for v in column.to_pylist()]


def filled_text(
    column: pa.ChunkedArray | pa.Array, name: str, *, what: str = "Submission"
) -> list[str]:
    """The column after pandas' ``fillna("")``, which must leave only text.

    A column of numbers is not text (pandas would hand ``str`` methods a float); that is
    rejected with a message naming the column.
    """
    if pa.types.is_null(column.type):
        return [""] * len(column)
    if not is_text(column):
        raise InvalidSubmission(
            f"{what} column '{name}' must hold text, but it was read as {column.type} values "
            "(every value is a number)."
        )
    return pc.fill_null(column, "").to_pylist()


def strict_text(column: pa.ChunkedArray | pa.Array, name: str) -> list[str]:
    """The column as text where every cell must already be text (no empty cells, no numbers)."""
    if not is_text(column) or column.null_count:
        if is_text(column):
            rows = np.flatnonzero(pc.is_null(column).to_numpy(zero_copy_only=False))
            where = f"empty cells (first at data row {int(rows[0]) + 1})"
        else:
            where = f"{column.type} values instead of text"
        raise InvalidSubmission(f"Column '{name}' has {where}: every row needs text.")
    return column.to_pylist()


def looks_numeric(column: pa.ChunkedArray | pa.Array) -> bool:
    """Whether pandas would have parsed this text column as numbers (all cells numbers)."""
    if not is_text(column):
        return not pa.types.is_null(column.type)
    values = pc.drop_null(column)
    if len(values) == 0:
        return False
    try:
        pc.cast(values, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


def pandas_sort_order(ids: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Row order of ``sort_values`` on this id column as pandas parsed it.

    Numbers sort as numbers, text by code point. MLE-bench averages per-row values in this
    order; reproducing it keeps the floating-point sum identical.
    """
    if is_text(ids) and looks_numeric(ids):
        keys = pc.cast(ids, pa.float64()).to_numpy(zero_copy_only=False)
        return np.argsort(keys, kind="stable")
    return np.asarray(pc.array_sort_indices(ids).to_numpy(zero_copy_only=False), dtype=np.int64)
