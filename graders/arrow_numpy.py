"""numpy <-> pyarrow conversions that do not wake pyarrow's pandas integration.

pyarrow's ``to_numpy``, ``pa.array`` and ``pa.scalar`` first ask whether pandas is
installed, and answer by importing it: a third of a second, more than grading a million
rows takes. These helpers read and build the Arrow buffers directly instead, for the fixed-
width types graders use (integers, floats, booleans).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_NUMPY_TYPES = {
    pa.int8(): np.int8,
    pa.int16(): np.int16,
    pa.int32(): np.int32,
    pa.int64(): np.int64,
    pa.uint8(): np.uint8,
    pa.uint16(): np.uint16,
    pa.uint32(): np.uint32,
    pa.uint64(): np.uint64,
    pa.float32(): np.float32,
    pa.float64(): np.float64,
}


def to_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numeric or boolean Arrow column as a numpy array (a copy).

    Nulls become NaN, which makes integer and boolean columns with nulls float64 (as pandas
    reads them). A column of only nulls is all NaN. Other types raise TypeError.
    """
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    kind = values.type
    if pa.types.is_null(kind):
        return np.full(len(values), np.nan)
    if kind not in _NUMPY_TYPES and not pa.types.is_boolean(kind):
        raise TypeError(f"cannot convert {kind} to a numpy number array")
    has_nulls = values.null_count > 0
    if pa.types.is_boolean(kind):
        dtype = np.float64 if has_nulls else np.bool_
    else:
        dtype = np.float64 if has_nulls and kind not in (pa.float32(), pa.float64()) else None
        dtype = dtype or _NUMPY_TYPES[kind]
    out = np.empty(len(values), dtype=dtype)
    row = 0
    for chunk in chunks:  # pyarrow's chunks (file blocks), not rows
        n = len(chunk)
        if n == 0:
            continue
        out[row : row + n] = _chunk_values(chunk)
        if chunk.null_count:
            valid = _bits(chunk.buffers()[0], chunk.offset, n)
            out[row : row + n][~valid] = np.nan
        row += n
    return out


def _chunk_values(chunk: pa.Array) -> np.ndarray:
    if pa.types.is_boolean(chunk.type):
        return _bits(chunk.buffers()[1], chunk.offset, len(chunk))
    dtype = _NUMPY_TYPES[chunk.type]
    data = np.frombuffer(chunk.buffers()[1], dtype=dtype)
    return data[chunk.offset : chunk.offset + len(chunk)]


def _bits(buffer: pa.Buffer, offset: int, length: int) -> np.ndarray:
    raw = np.frombuffer(buffer, dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[offset : offset + length].astype(bool)


def from_numpy(values: np.ndarray) -> pa.Array:
    """A numpy integer, float or boolean array as an Arrow array without nulls (zero-copy
    for contiguous numbers)."""
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        packed = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(packed)])
    for arrow_type, numpy_type in _NUMPY_TYPES.items():
        if values.dtype == numpy_type:
            return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)])
    raise TypeError(f"cannot convert numpy {values.dtype} to Arrow")
