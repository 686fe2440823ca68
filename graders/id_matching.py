"""Fast pairing of submission rows with answer rows by id, for the common cases.

Hashing a million text ids in pyarrow takes most of a second; two shapes of id can be
paired with numpy sorts instead: integer ids (pandas reads them as int64, so "007" == "7")
and text ids all of one length (hex digests, UUIDs, zero-padded names), whose bytes are
read as uint64 words from pyarrow's buffers, hashed twice with independent constants,
paired by sorting one hash and confirmed by the other. ``fast_order`` returns None when
neither applies or the ids do not match one to one; the caller then takes the exact,
slower path that also explains what is wrong.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.arrow_numpy import to_numpy

_MIX = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93],
    dtype=np.uint64,
)


def fast_order(
    submission_ids: pa.ChunkedArray | pa.Array,
    answer_ids: pa.ChunkedArray | pa.Array,
    *,
    numeric: bool = True,
) -> np.ndarray | None:
    """``order`` with submission row ``order[i]`` holding answer row ``i``, or None."""
    if len(submission_ids) != len(answer_ids) or len(answer_ids) == 0:
        return None
    if submission_ids.null_count or answer_ids.null_count:
        return None
    if numeric:
        keys = _integer_keys(submission_ids), _integer_keys(answer_ids)
        if keys[0] is not None and keys[1] is not None:
            return _order_from_keys(*keys)
    sub_hash, ans_hash = _both(_fixed_width_hash, submission_ids, answer_ids)
    if sub_hash is None or ans_hash is None or sub_hash[2] != ans_hash[2]:
        return None
    if np.array_equal(sub_hash[0], ans_hash[0]) and np.array_equal(sub_hash[1], ans_hash[1]):
        return np.arange(len(answer_ids), dtype=np.int64)  # same order: nothing to sort
    order = _order_from_keys(sub_hash[0], ans_hash[0], dense_integers=False)
    # Ids are matched by 128 bits of hash (two independent 64-bit hashes): a false match
    # among a million ids has a probability around 1e-26.
    if order is None or not np.array_equal(sub_hash[1][order], ans_hash[1]):
        return None
    return order


def _both(function, first, second):
    """``(function(first), function(second))``, the second on another thread when large.

    numpy and pyarrow release the GIL in their loops, so on two cores the two sides of a
    pairing are hashed and sorted at the same time.
    """
    if len(first) < 100_000:
        return function(first), function(second)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        other = pool.submit(function, second)
        return function(first), other.result()


def _integer_keys(ids: pa.ChunkedArray | pa.Array) -> np.ndarray | None:
    if pa.types.is_integer(ids.type):
        return to_numpy(ids).astype(np.int64)
    if not (pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type)):
        return None
    first = ids[0].as_py().strip().lstrip("+-")
    if (
        not (first.isascii() and first.isdigit()) or len(first) > 18
    ):  # cheap test before scanning every id
        return None
    try:
        return to_numpy(pc.cast(ids, pa.int64())).astype(np.int64)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _fixed_width_hash(ids: pa.ChunkedArray | pa.Array):
    """(hash, second hash, width) for equal-length text ids, or None if lengths differ.

    Each hash mixes 8-byte words starting at byte 0, 8, 16, ... with the last word ending
    at the id's last byte, so every byte counts; the two use independent constants.
    Chunks are hashed one at a time from views of pyarrow's buffers: no id is copied.
    """
    if not (pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type)):
        return None
    chunks = ids.chunks if isinstance(ids, pa.ChunkedArray) else [ids]
    first = np.empty(len(ids), dtype=np.uint64)
    second = np.empty(len(ids), dtype=np.uint64)
    width = None
    row = 0
    for chunk in chunks:  # pyarrow's chunks (blocks of the file), not rows
        if len(chunk) == 0:
            continue
        offset_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(chunk.buffers()[1], dtype=offset_type)[
            chunk.offset : chunk.offset + len(chunk) + 1
        ]
        lengths = np.diff(offsets)
        if width is None:
            width = int(lengths[0])
        if width < 8 or (lengths != width).any():
            return None
        data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
        starts = [*range(0, width - 7, 8)]
        if starts[-1] != width - 8:
            starts.append(width - 8)
        words = [_word(data, start, width, len(chunk)) for start in starts]
        first[row : row + len(chunk)] = _hash_rows(words, 0)
        second[row : row + len(chunk)] = _hash_rows(words, 1)
        row += len(chunk)
    if width is None:
        return None
    return first, second, width


def _word(data: np.ndarray, start: int, width: int, rows: int) -> np.ndarray:
    """Bytes ``start..start+8`` of each fixed-width row as one uint64 per row (a view)."""
    return np.ndarray(shape=(rows,), dtype="<u8", buffer=data, offset=start, strides=(width,))


_MUL = (np.uint64(0x87C37B91114253D5), np.uint64(0x4CF5AD432745937F))
_ADD = (np.uint64(0x52DCE729), np.uint64(0x38495AB5))


def _hash_rows(words: list[np.ndarray], seed: int = 0) -> np.ndarray:
    """A murmur-style 64-bit mix of each row's words; ``seed`` picks independent constants."""
    mul, add = _MUL[seed], _ADD[seed]
    hashed = np.full(len(words[0]), _MIX[seed], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in words:  # a handful of 8-byte words per id
            hashed ^= column * mul
            hashed = ((hashed << np.uint64(27)) | (hashed >> np.uint64(37))) * np.uint64(5) + add
        hashed ^= hashed >> np.uint64(33)
        hashed *= np.uint64(0xFF51AFD7ED558CCD)
        hashed ^= hashed >> np.uint64(33)
    return hashed


def _order_from_keys(
    sub_keys: np.ndarray, ans_keys: np.ndarray, dense_integers: bool = True
) -> np.ndarray | None:
    """Pair equal keys; None unless the keys match one to one."""
    if dense_integers:
        order = _order_from_dense_integers(sub_keys, ans_keys)
        if order is not None or _dense(sub_keys, ans_keys):
            return order
    sub_sorted, ans_sorted = _both(_argsort, sub_keys, ans_keys)
    a = ans_keys[ans_sorted]
    if len(a) > 1 and not np.all(a[1:] != a[:-1]):
        return None  # repeated answer ids (or a hash collision): use the exact path
    if not np.array_equal(a, sub_keys[sub_sorted]):
        return None
    order = np.empty(len(ans_keys), dtype=np.int64)
    order[ans_sorted] = sub_sorted
    return order


def _dense(sub_keys: np.ndarray, ans_keys: np.ndarray) -> bool:
    low, high = ans_keys.min(), ans_keys.max()
    return bool(high - low < 4 * len(ans_keys) + 1024)


def _order_from_dense_integers(sub_keys: np.ndarray, ans_keys: np.ndarray) -> np.ndarray | None:
    """Pair integer ids through a lookup table when they span a small range (no sorting)."""
    if not _dense(sub_keys, ans_keys):
        return None
    low = ans_keys.min()
    if sub_keys.min() < low or sub_keys.max() > ans_keys.max():
        return None
    size = int(ans_keys.max() - low) + 1
    row_of = np.full(size, -1, dtype=np.int64)
    row_of[ans_keys - low] = np.arange(len(ans_keys))
    if np.count_nonzero(row_of >= 0) != len(ans_keys):
        return None  # repeated answer ids
    position = row_of[sub_keys - low]
    if (position < 0).any():
        return None
    order = np.full(len(ans_keys), -1, dtype=np.int64)
    order[position] = np.arange(len(sub_keys))
    if (order < 0).any():
        return None  # some id repeated in the submission, another missing
    return order


def _argsort(keys: np.ndarray) -> np.ndarray:
    """Arg-sort of 64-bit keys through numpy's (vectorised) value sort: the row number rides
    in the low bits below the key's top bits. Keys that share their top bits are then put in
    full-key order run by run, so the result is always a correct ordering."""
    n = len(keys)
    bits = max(int(n - 1).bit_length(), 1)
    if bits > 32:
        return np.argsort(keys, kind="stable")
    unsigned = keys.view(np.uint64) if keys.dtype == np.int64 else keys.astype(np.uint64)
    if keys.dtype == np.int64:
        unsigned = unsigned ^ np.uint64(1 << 63)  # order-preserving for signed values
    mask = np.uint64((1 << bits) - 1)
    packed = (unsigned & ~mask) | np.arange(n, dtype=np.uint64)
    packed.sort()
    order = (packed & mask).astype(np.int64)
    prefixes = packed & ~mask
    tied = np.flatnonzero(prefixes[1:] == prefixes[:-1])
    if len(tied):
        # Keys sharing their top bits (rare): put each run of them in full-key order.
        members = np.unique(np.concatenate([tied, tied + 1]))
        run = np.cumsum(np.r_[True, np.diff(members) > 1]) if len(members) else members
        run = run + np.cumsum(np.r_[0, (prefixes[members[1:]] != prefixes[members[:-1]])])
        local = np.lexsort((keys[order[members]], run))
        order[members] = order[members][local]
    return order
