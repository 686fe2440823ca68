"""Reading submissions and answers: CSV files into pyarrow tables, with readable failures.

pyarrow reads a million-row CSV in a fraction of a second, where pandas takes several times
longer and needs several times the memory. What MLE-bench does with pandas is mirrored where
it decides whether a submission is gradable: the same strings count as missing values
(pandas' default ``na_values``), duplicated header names get pandas' ``.1`` suffixes, and ids
can be kept as strings (``string_columns``) so that "007" stays "007".
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from graders.results import ErrorClass, InvalidSubmission

# pandas' default na_values: these strings become NaN when MLE-bench reads a CSV.
PANDAS_NA_VALUES = (
    "",
    "#N/A",
    "#N/A N/A",
    "#NA",
    "-1.#IND",
    "-1.#QNAN",
    "-NaN",
    "-nan",
    "1.#IND",
    "1.#QNAN",
    "<NA>",
    "N/A",
    "NA",
    "NULL",
    "NaN",
    "None",
    "n/a",
    "nan",
    "null",
)

# Only these spellings are booleans, like pandas; "0"/"1" stay integers.
_TRUE_VALUES = ("True", "TRUE", "true")
_FALSE_VALUES = ("False", "FALSE", "false")


def use_compact_memory() -> bool:
    """Make pyarrow hand freed memory back to the system at once (jemalloc, no decay).

    A CSV read frees most of what it allocates (raw blocks, parse buffers); pyarrow's
    default allocator keeps those pages, so a million-row read holds about twice the
    table's size at its peak. Command-line grading calls this once at start-up; a library
    caller decides for its own process. Returns False when this pyarrow has no jemalloc.
    """
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
        pa.jemalloc_set_decay_ms(0)
    except (NotImplementedError, pa.ArrowNotImplementedError):
        return False
    return True


_BLOCK_SIZE = 1 << 22  # 4 MiB blocks: few chunks, little raw text held at once


def read_csv_table(
    path: Path,
    *,
    string_columns: Iterable[str] = (),
    all_strings: bool = False,
    what: str = "Submission",
) -> pa.Table:
    """Read a CSV file into a pyarrow table.

    ``string_columns`` are read as text whatever they look like (ids); with ``all_strings``
    every column is. Other columns get pyarrow's type inference (int64, float64, bool, string),
    with pandas' missing-value spellings read as nulls.

    Raises ``InvalidSubmission`` with a message naming ``what`` ("Submission", "Answers") when
    the file is empty, not UTF-8 text, or not parseable as CSV; ``FileNotFoundError`` when it
    does not exist.
    """
    path = Path(path)
    if path.stat().st_size == 0:
        raise InvalidSubmission(
            f"{what} file is empty: expected a CSV header and rows.", kind=ErrorClass.UNREADABLE
        )
    header = _read_header(path, what)
    columns = header if all_strings else list(string_columns)
    try:
        # Streaming keeps only one block of raw text in memory at a time: about half the
        # peak memory of a whole-file read, and faster.
        return _read(path, header, columns, what, newlines_in_values=False, streaming=True)
    except pa.ArrowInvalid:
        pass  # e.g. a column whose type changes after the first block: read it whole
    try:
        return _read(path, header, columns, what, newlines_in_values=False)
    except pa.ArrowInvalid as first_error:
        # Quoted values may hold line breaks (free text); pyarrow only handles them when told,
        # and telling it always would make every read slower.
        try:
            return _read(path, header, columns, what, newlines_in_values=True)
        except pa.ArrowInvalid:
            raise InvalidSubmission(
                _describe_parse_error(first_error, what), kind=ErrorClass.UNREADABLE
            ) from None


def _read(
    path: Path,
    header: list[str],
    string_columns: list[str],
    what: str,
    *,
    newlines_in_values: bool,
    streaming: bool = False,
) -> pa.Table:
    names = _dedupe_like_pandas(header)
    wanted = set(string_columns)
    column_types = {name: pa.string() for name in names if name in wanted}
    options = dict(
        read_options=pacsv.ReadOptions(
            column_names=names, skip_rows=1, block_size=_BLOCK_SIZE, use_threads=True
        ),
        parse_options=pacsv.ParseOptions(newlines_in_values=newlines_in_values),
        convert_options=pacsv.ConvertOptions(
            column_types=column_types,
            null_values=list(PANDAS_NA_VALUES),
            strings_can_be_null=True,
            true_values=list(_TRUE_VALUES),
            false_values=list(_FALSE_VALUES),
        ),
    )
    if streaming:
        table = pacsv.open_csv(path, **options).read_all()
    else:
        table = pacsv.read_csv(path, **options)
    for name, column_type in zip(table.column_names, table.schema.types, strict=True):
        if pa.types.is_binary(column_type) or pa.types.is_large_binary(column_type):
            # pyarrow keeps undecodable text as bytes; pandas would fail to read the file.
            raise InvalidSubmission(
                f"{what} is not UTF-8 text (column '{name}' holds other bytes): "
                "save the CSV as UTF-8.",
                kind=ErrorClass.UNREADABLE,
            )
    return table


def _read_header(path: Path, what: str) -> list[str]:
    """The column names of the first line, parsed by pyarrow so quoting rules are identical."""
    try:
        reader = pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=1 << 16, autogenerate_column_names=False),
            convert_options=pacsv.ConvertOptions(column_types={}, include_columns=[]),
        )
        names = list(reader.schema.names)
    except pa.ArrowInvalid as error:
        raise InvalidSubmission(
            _describe_parse_error(error, what), kind=ErrorClass.UNREADABLE
        ) from None
    except UnicodeDecodeError:
        raise InvalidSubmission(
            f"{what} is not UTF-8 text: save the CSV as UTF-8.", kind=ErrorClass.UNREADABLE
        ) from None
    if not names:
        raise InvalidSubmission(f"{what} file has no header line.", kind=ErrorClass.UNREADABLE)
    return names


def _dedupe_like_pandas(names: list[str]) -> list[str]:
    """Rename repeated header names the way pandas does ("a", "a.1", "a.2")."""
    seen: dict[str, int] = {}
    result = []
    for name in names:
        if name in seen:
            count = seen[name]
            new = f"{name}.{count}"
            while new in seen:
                count += 1
                new = f"{name}.{count}"
            seen[name] = count + 1
            seen[new] = 1
            result.append(new)
        else:
            seen[name] = 1
            result.append(name)
    return result


def _describe_parse_error(error: Exception, what: str) -> str:
    text = str(error)
    if "UTF8" in text or "UTF-8" in text or "utf8" in text:
        return f"{what} is not UTF-8 text: save the CSV as UTF-8."
    if "Empty CSV file" in text:
        return f"{what} file is empty: expected a CSV header and rows."
    if "Expected" in text and "columns" in text:
        # e.g. "CSV parse error: Expected 2 columns, got 3: a,b,c" - say which line.
        return f"{what} is not a well-formed CSV: {text.removeprefix('CSV parse error: ')}"
    return f"{what} could not be read as CSV: {text}"
