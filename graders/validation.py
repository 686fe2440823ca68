"""Checks a submission must pass before it is scored, with messages a person can act on.

Every helper raises ``InvalidSubmission`` with a message that names the column, counts the
offending rows or ids and shows the first few. Everything is vectorised (pyarrow compute and
numpy); the only Python loops run over the handful of examples put in a message.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.arrow_numpy import from_numpy, to_numpy
from graders.results import ErrorClass, GraderError, InvalidSubmission

SHOWN = 5  # how many offending values a message shows


def show(values: Iterable[object], total: int | None = None) -> str:
    """``'a', 'b', 'c'`` (and "..." when there are more): examples for an error message."""
    shown = []
    for value in values:
        if len(shown) == SHOWN:
            break
        shown.append("<empty>" if value is None else repr(value))
    text = ", ".join(shown)
    if total is not None and total > len(shown):
        text += ", ..."
    return text


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _are(n: int) -> str:
    return "is" if n == 1 else "are"


def _appear(n: int) -> str:
    return "appears" if n == 1 else "appear"


# --- columns and rows ---------------------------------------------------------------------


def require_columns(
    table: pa.Table,
    required: Sequence[str],
    *,
    allow_extra: bool = True,
    ordered: bool = False,
) -> None:
    """The submission has every ``required`` column; with ``allow_extra=False`` no others.

    ``ordered`` also requires the columns to appear exactly in the ``required`` order (used
    where a grader reads columns by position).
    """
    names = table.column_names
    present = set(names)
    missing = [c for c in required if c not in present]
    extra = [c for c in names if c not in set(required)] if not allow_extra else []
    problems = []
    if missing:
        problems.append(
            f"is missing {_plural(len(missing), 'column')}: {show(missing, len(missing))}"
        )
    if extra:
        problems.append(
            f"has {_plural(len(extra), 'unexpected column')}: {show(extra, len(extra))}"
        )
    if problems:
        expected = ", ".join(required)
        raise InvalidSubmission(
            f"Submission {'; '.join(problems)}. Expected columns: {expected}.",
            kind=ErrorClass.COLUMNS,
        )
    if ordered and list(names) != list(required):
        raise InvalidSubmission(
            f"Submission columns are in the wrong order: got {', '.join(names)}; "
            f"expected {', '.join(required)}.",
            kind=ErrorClass.COLUMNS,
        )


def require_row_count(table_or_rows: pa.Table | int, expected: int, unit: str = "row") -> None:
    """The submission has exactly ``expected`` rows (one per test-set entry)."""
    rows = table_or_rows if isinstance(table_or_rows, int) else table_or_rows.num_rows
    if rows != expected:
        raise InvalidSubmission(
            f"Submission has {_plural(rows, unit)} but the test set has {expected}: "
            f"write exactly one {unit} per test-set entry.",
            kind=ErrorClass.ROW_COUNT,
        )


# --- ids ------------------------------------------------------------------------------------


def align_ids(
    submission_ids: pa.ChunkedArray | pa.Array,
    answer_ids: pa.ChunkedArray | pa.Array,
    id_column: str,
    *,
    numeric_fallback: bool = True,
) -> np.ndarray:
    """Pair submission rows with answer rows by id.

    Returns ``order`` (int64, one entry per answer row) such that submission row ``order[i]``
    holds the prediction for answer row ``i``. Requires the same multiset of ids as MLE-bench's
    "sort both by id and compare" check does for a test set with unique ids: no missing, extra
    or repeated ids. When text ids differ but both sides are numbers ("7" vs "7.0"), they are
    compared as numbers, as pandas would.
    """
    from graders.id_matching import fast_order

    order = fast_order(submission_ids, answer_ids, numeric=numeric_fallback)
    if order is not None:
        return order
    positions = pc.index_in(submission_ids, value_set=answer_ids, skip_nulls=True)
    try:
        return _order_from_positions(positions, submission_ids, answer_ids, id_column)
    except InvalidSubmission:
        if not numeric_fallback:
            raise
        numeric = _as_numbers(submission_ids), _as_numbers(answer_ids)
        if numeric[0] is None or numeric[1] is None:
            raise
        positions = pc.index_in(numeric[0], value_set=numeric[1], skip_nulls=True)
        try:
            return _order_from_positions(positions, submission_ids, answer_ids, id_column)
        except InvalidSubmission:
            pass
        raise


def _as_numbers(ids: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array | None:
    try:
        return pc.cast(ids, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _order_from_positions(positions, submission_ids, answer_ids, id_column: str) -> np.ndarray:
    n_answers = len(answer_ids)
    unknown_mask = pc.is_null(positions)
    n_unknown = pc.sum(unknown_mask).as_py() or 0
    pos = to_numpy(positions)
    if n_unknown:
        pos = pos[~np.isnan(pos)] if pos.dtype.kind == "f" else pos
    pos = np.asarray(pos, dtype=np.int64)
    counts = np.bincount(pos, minlength=n_answers)
    missing = np.flatnonzero(counts == 0)
    repeated = np.flatnonzero(counts > 1)
    if n_unknown or len(missing) or len(repeated):
        problems = []
        if len(missing):
            examples = answer_ids.take(from_numpy(missing[:SHOWN])).to_pylist()
            problems.append(
                f"{_plural(len(missing), 'id')} of the test set {_are(len(missing))} missing "
                f"(first: {show(examples, len(missing))})"
            )
        if n_unknown:
            unknown = pc.filter(submission_ids, unknown_mask)
            examples = unknown.slice(0, SHOWN).to_pylist()
            problems.append(
                f"{_plural(n_unknown, 'id')} {_are(n_unknown)} not in the test set "
                f"(first: {show(examples, n_unknown)})"
            )
        if len(repeated):
            examples = answer_ids.take(from_numpy(repeated[:SHOWN])).to_pylist()
            problems.append(
                f"{_plural(len(repeated), 'id')} {_appear(len(repeated))} more than once "
                f"(first: {show(examples, len(repeated))})"
            )
        raise InvalidSubmission(
            f"Submission '{id_column}' values do not match the test set: {'; '.join(problems)}.",
            kind=ErrorClass.IDS,
        )
    order = np.empty(n_answers, dtype=np.int64)
    order[pos] = np.arange(len(pos), dtype=np.int64)
    return order


def require_unique(ids: pa.ChunkedArray | pa.Array, id_column: str) -> None:
    """No id appears twice in the submission."""
    counts = pc.value_counts(ids)
    repeated = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
    if len(repeated):
        raise InvalidSubmission(
            f"Submission '{id_column}' has {_plural(len(repeated), 'id')} that {_appear(len(repeated))} more than "
            f"once (first: {show(repeated.slice(0, SHOWN).to_pylist(), len(repeated))}).",
            kind=ErrorClass.IDS,
        )


# --- values -----------------------------------------------------------------------------------

_NUMBER = r"^\s*[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf|infinity|nan)\s*$"


def numeric_column(
    table: pa.Table,
    name: str,
    *,
    allow_nan: bool = False,
    allow_inf: bool = True,
) -> np.ndarray:
    """The column as float64, or ``InvalidSubmission`` when it holds text.

    Empty cells and pandas' NA spellings are NaN; ``allow_nan=False`` rejects them,
    ``allow_inf=False`` rejects infinities.
    """
    column = table.column(name)
    values = to_float(column, name)
    if not allow_nan or not allow_inf:
        check_finite(values, name, allow_nan=allow_nan, allow_inf=allow_inf)
    return values


def answer_numbers(answers: pa.Table, name: str, *, allow_nan: bool = False) -> np.ndarray:
    """An answers column as float64, like ``numeric_column``.

    Answers that are not numbers (or are empty where that is not allowed) are the data's
    fault whatever the submission: ``GraderError``, never an ``InvalidSubmission`` whose
    message would quote private values or say which rows are empty.
    """
    try:
        return numeric_column(answers, name, allow_nan=allow_nan)
    except InvalidSubmission as error:
        raise GraderError(f"Answers column '{name}' is unusable: {error}") from None


def to_float(column: pa.ChunkedArray | pa.Array, name: str) -> np.ndarray:
    """Convert a column to float64 (nulls become NaN); text that is not a number is invalid."""
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        try:
            column = pc.cast(column, pa.float64())
        except pa.ArrowInvalid:
            bad_mask = pc.invert(
                pc.match_substring_regex(column, _NUMBER, ignore_case=True)
            ).fill_null(False)
            bad = pc.filter(column, bad_mask)
            raise InvalidSubmission(
                f"Column '{name}' must hold numbers; {_plural(len(bad), 'value')} {_are(len(bad))} not "
                f"(first: {show(bad.slice(0, SHOWN).to_pylist(), len(bad))}).",
                kind=ErrorClass.TYPES,
            ) from None
    elif pa.types.is_null(column.type):
        return np.full(len(column), np.nan)
    elif not (
        pa.types.is_integer(column.type)
        or pa.types.is_floating(column.type)
        or pa.types.is_boolean(column.type)
    ):
        raise InvalidSubmission(
            f"Column '{name}' must hold numbers, not {column.type} values.", kind=ErrorClass.TYPES
        )
    return to_numpy(column).astype(np.float64, copy=False)


def check_finite(
    values: np.ndarray, name: str, *, allow_nan: bool = False, allow_inf: bool = False
) -> None:
    """Reject NaN (empty) and/or infinite values, counting them and showing the first rows."""
    if not allow_nan:
        nan_rows = np.flatnonzero(np.isnan(values))
        if len(nan_rows):
            raise InvalidSubmission(
                f"Column '{name}' has {_plural(len(nan_rows), 'empty or NaN value')} "
                f"(first at data rows {show((int(r) + 1 for r in nan_rows), len(nan_rows))}): "
                "every row needs a number.",
                kind=ErrorClass.NAN,
            )
    if not allow_inf:
        inf_rows = np.flatnonzero(np.isinf(values))
        if len(inf_rows):
            raise InvalidSubmission(
                f"Column '{name}' has {_plural(len(inf_rows), 'infinite value')} "
                f"(first at data rows {show((int(r) + 1 for r in inf_rows), len(inf_rows))}).",
                kind=ErrorClass.NAN,
            )


def check_range(
    values: np.ndarray, name: str, low: float, high: float, *, what: str = "values"
) -> None:
    """Every value lies in [low, high] (NaN is not checked here, like pandas' min/max)."""
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero((values < low) | (values > high))
    if len(bad):
        examples = (float(v) for v in values[bad[:SHOWN]])
        raise InvalidSubmission(
            f"Column '{name}' must hold {what} between {low:g} and {high:g}; "
            f"{_plural(len(bad), 'value')} {_are(len(bad))} outside (first: {show(examples, len(bad))}).",
            kind=ErrorClass.VALUES,
        )


def check_probabilities(values: np.ndarray, name: str) -> None:
    """Values are probabilities in [0, 1] (raw scores or logits are rejected)."""
    check_range(values, name, 0.0, 1.0, what="probabilities")
