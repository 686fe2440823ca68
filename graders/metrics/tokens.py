"""Numbers parsed from text tokens exactly as Python's ``float()`` would, but in bulk.

pyarrow's string-to-float cast is correctly rounded, like Python's, and accepts a subset of
what ``float()`` accepts; whatever it refuses (a leading '+', tabs, underscores, ...) is retried
with numpy, which applies Python's own rules token by token. A token neither accepts raises
``ValueError``.
"""

from __future__ import annotations

import numpy as np


def parse_floats(tokens: np.ndarray) -> np.ndarray:
    """float64 values of an object array of ``str`` tokens (any shape)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    flat = np.asarray(tokens, dtype=object).reshape(-1)
    if len(flat) == 0:
        return np.zeros(np.shape(tokens), dtype=np.float64)
    try:
        values = pc.cast(pa.array(flat, type=pa.string()), pa.float64())
        return values.to_numpy(zero_copy_only=False).reshape(np.shape(tokens))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        pass
    return flat.astype(str).astype(np.float64).reshape(np.shape(tokens))
