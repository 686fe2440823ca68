"""Run-length encoded binary masks, parsed and compared without decoding them.

MLE-bench's segmentation graders decode every RLE string into a full boolean image (a
billion pixels for hubmap's slides) and count pixels, but every score needs only three
counts per mask (predicted, true, overlap), which follow from the runs: all masks of a
file are parsed into one table of runs and counted with ``searchsorted`` over interval
endpoints. ``decode_masks`` builds dense masks for callers that need pixels. The RLE
convention is MLE-bench's ``rle_decode`` (``start length`` pairs, 1-indexed, column-major),
and its acceptance rules are reproduced exactly (``parse_rle_masks`` lists them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np


class RleError(ValueError):
    """An RLE string MLE-bench's decoder rejects; ``row`` is its 0-based position in the batch."""

    def __init__(self, row: int, reason: str) -> None:
        super().__init__(f"row {row}: {reason}")
        self.row = row
        self.reason = reason


@dataclass(frozen=True)
class MaskRuns:
    """The runs of set pixels of a batch of masks, already cut to each image.

    Runs are in *global* pixel coordinates: mask ``m`` occupies ``[offsets[m], offsets[m+1])``,
    so the runs of the whole batch form one sorted list of disjoint intervals.
    ``mask`` says which mask each run belongs to; ``sizes`` is the pixel count of each mask.
    """

    mask: np.ndarray  # int64, mask index of each run
    start: np.ndarray  # int64, global first pixel of the run
    end: np.ndarray  # int64, global pixel after the run
    sizes: np.ndarray  # int64, pixels per mask

    @property
    def n_masks(self) -> int:
        return len(self.sizes)

    @property
    def offsets(self) -> np.ndarray:
        """Global coordinate of each mask's first pixel, plus the total at the end."""
        return np.concatenate(([0], np.cumsum(self.sizes, dtype=np.int64)))

    def areas(self) -> np.ndarray:
        """Set pixels per mask (int64)."""
        return _sum_per_mask(self.mask, self.end - self.start, self.n_masks)


def parse_rle_masks(rles: Sequence[object], sizes: Sequence[int] | np.ndarray) -> MaskRuns:
    """Parse one RLE string per mask into runs, with MLE-bench's acceptance rules.

    ``rles[i]`` must be a ``str`` (callers turn missing values into ``""`` where MLE-bench
    does); ``sizes[i]`` is the number of pixels of mask ``i`` (height * width).
    Raises ``RleError`` naming the first offending row.

    MLE-bench's rules, reproduced exactly: every token parses as an integer (Python ``int``
    syntax); starts are in non-decreasing order, starts and lengths positive; a run may not
    cover a pixel an earlier run of the same mask set; runs are cut at the end of the image
    and runs starting beyond it ignored (numpy slicing past the end does not fail); odd
    counts follow numpy broadcasting (one positive number decodes to an empty mask, three
    numbers ``a b c`` to two runs of length ``b``, five or more fail); an empty or
    whitespace-only string is an empty mask.
    """
    sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
    if len(sizes) != len(rles):
        raise ValueError(f"{len(rles)} RLE strings but {len(sizes)} mask sizes")
    for row, value in enumerate(rles):
        if not isinstance(value, str):
            raise RleError(row, f"expected an RLE string, got {type(value).__name__} {value!r}")
    parsed = _fast_integers(rles)
    if parsed is None:
        tokens = [value.split() for value in rles]
        counts = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        values = _parse_integers(tokens, counts)
    else:
        values, counts = parsed
    token_mask = np.repeat(np.arange(len(rles), dtype=np.int64), counts)

    starts, lengths, run_mask = _runs_from_values(values, token_mask, counts)
    _check_runs(run_mask, starts, lengths)

    offsets = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
    size_of_run = sizes[run_mask]
    lo = starts - 1
    hi = np.minimum(lo + lengths, size_of_run)  # cut at the image end, like numpy slicing
    inside = lo < size_of_run
    global_lo = offsets[run_mask] + lo
    global_hi = offsets[run_mask] + hi
    # Overlap: an earlier run of the same mask reaches past this run's start. Earlier masks end
    # at or before this mask's offset, so a running maximum over the whole batch is enough.
    reach = np.maximum.accumulate(global_hi) if len(hi) else global_hi
    previous_reach = np.concatenate(([np.int64(-1)], reach[:-1]))
    overlapping = np.flatnonzero(inside & (previous_reach > global_lo))
    if len(overlapping):
        raise RleError(int(run_mask[overlapping[0]]), "overlapping RLE runs are not allowed")
    return MaskRuns(
        mask=run_mask[inside],
        start=global_lo[inside],
        end=global_hi[inside],
        sizes=sizes,
    )


def _runs_from_values(
    values: np.ndarray, token_mask: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Starts, lengths and mask index of every run, in mask order then string order.

    MLE-bench pairs ``values[0::2]`` with ``values[1::2]`` and adds them with numpy
    broadcasting, so an odd count is not always an error: one number gives no run at all, and
    three numbers ``a b c`` give two runs of length ``b`` (at ``a`` and at ``c``); five or more
    fail.
    """
    bad_odd = np.flatnonzero((counts % 2 == 1) & (counts > 3))
    if len(bad_odd):
        raise RleError(
            int(bad_odd[0]), "an RLE string needs an even number of values (start length)"
        )
    first_token = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    even = counts % 2 == 0
    if even.all():
        starts, lengths, run_mask = values[0::2], values[1::2], token_mask[0::2]
    else:
        even_tokens = even[token_mask]
        even_values, even_mask = values[even_tokens], token_mask[even_tokens]
        starts, lengths, run_mask = even_values[0::2], even_values[1::2], even_mask[0::2]

    lone = np.flatnonzero(counts == 1)
    bad_lone = lone[values[first_token[lone]] <= 0]
    triple = np.flatnonzero(counts == 3)
    if len(triple):
        position = np.arange(len(starts)) - np.searchsorted(run_mask, run_mask, side="left")
        a, b, c = (values[first_token[triple] + k] for k in range(3))
        starts = np.concatenate([starts, a, c])
        lengths = np.concatenate([lengths, b, b])
        run_mask = np.concatenate([run_mask, triple, triple])
        position = np.concatenate(
            [position, np.zeros(len(triple), np.int64), np.ones(len(triple), np.int64)]
        )
        order = np.lexsort((position, run_mask))
        starts, lengths, run_mask = starts[order], lengths[order], run_mask[order]
    if len(bad_lone):
        raise RleError(int(bad_lone[0]), "all numbers in an RLE string must be positive integers")
    return starts, lengths, run_mask


def _fast_integers(rles: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """Tokens and counts of plain RLE strings (ASCII digits and spaces) parsed by pyarrow.

    For such strings pyarrow's split and integer cast agree exactly with Python's ``split()``
    and ``int()``; anything else (signs, tabs, other digits, huge numbers) returns None and
    takes the slower Python path.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(rles) == 0:
        return None
    column = pa.array(rles, type=pa.large_string())
    if not pc.all(pc.match_substring_regex(column, r"^[0-9 ]*$")).as_py():
        return None
    trimmed = pc.utf8_trim(column, " ")
    parts = pc.split_pattern(trimmed, " ")
    tokens = pc.list_flatten(parts)
    try:
        values = pc.cast(pc.filter(tokens, pc.not_equal(tokens, "")), pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    # Empty tokens come from runs of spaces and from empty strings: count only the others.
    nonempty = pc.not_equal(tokens, "").to_numpy(zero_copy_only=False)
    owners = pc.list_parent_indices(parts).to_numpy(zero_copy_only=False)
    counts = np.bincount(owners[nonempty], minlength=len(rles)).astype(np.int64)
    return values.to_numpy(zero_copy_only=False).astype(np.int64), counts


def _parse_integers(tokens: list[list[str]], counts: np.ndarray) -> np.ndarray:
    flat = list(chain.from_iterable(tokens))
    if not flat:
        return np.zeros(0, dtype=np.int64)
    try:
        # numpy converts text with Python's int() rules, as MLE-bench's map(int, ...) does.
        return np.array(flat).astype(np.int64)
    except (ValueError, OverflowError):
        pass
    for row, row_tokens in enumerate(tokens):  # only on failure: find the row to name
        for token in row_tokens:
            try:
                number = int(token)
            except ValueError:
                raise RleError(row, f"'{token}' is not an integer") from None
            if not -(2**63) <= number < 2**63:
                raise RleError(row, f"'{token}' is too large for a pixel position")
    raise AssertionError("unreachable: every token parsed on its own")  # pragma: no cover


def _check_runs(run_mask: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> None:
    """MLE-bench's assertions, in its order: sorted starts, positive starts, positive lengths."""
    same_mask = run_mask[1:] == run_mask[:-1]
    unsorted = np.flatnonzero(same_mask & (starts[1:] < starts[:-1]))
    bad_start = np.flatnonzero(starts <= 0)
    bad_length = np.flatnonzero(lengths <= 0)
    candidates = []
    if len(unsorted):
        candidates.append((int(run_mask[unsorted[0] + 1]), 0))
    if len(bad_start):
        candidates.append((int(run_mask[bad_start[0]]), 1))
    if len(bad_length):
        candidates.append((int(run_mask[bad_length[0]]), 2))
    if candidates:
        row, kind = min(candidates)
        reason = (
            "the runs of an RLE string must be sorted by start"
            if kind == 0
            else "all numbers in an RLE string must be positive integers"
        )
        raise RleError(row, reason)


def intersection_areas(a: MaskRuns, b: MaskRuns) -> np.ndarray:
    """Pixels set in both ``a`` and ``b``, per mask (the batches must have the same sizes)."""
    if not np.array_equal(a.sizes, b.sizes):
        raise ValueError("mask batches of different shapes")
    overlap = _overlap_per_run(a.start, a.end, b.start, b.end)
    return _sum_per_mask(a.mask, overlap, a.n_masks)


def _overlap_per_run(
    a_start: np.ndarray, a_end: np.ndarray, b_start: np.ndarray, b_end: np.ndarray
) -> np.ndarray:
    """For each run of ``a``, how many of its pixels lie in runs of ``b``.

    Both lists are sorted and disjoint, so the ``b`` runs meeting an ``a`` run are a contiguous
    range: their total length minus the parts that stick out on either side.
    """
    if len(a_start) == 0 or len(b_start) == 0:
        return np.zeros(len(a_start), dtype=np.int64)
    first = np.searchsorted(b_end, a_start, side="right")  # first b run ending after a starts
    stop = np.searchsorted(b_start, a_end, side="left")  # b runs starting before a ends
    cumulative = np.concatenate(([0], np.cumsum(b_end - b_start, dtype=np.int64)))
    total = cumulative[stop] - cumulative[first]
    meets = stop > first
    head = np.where(meets, np.maximum(a_start - b_start[np.minimum(first, len(b_start) - 1)], 0), 0)
    last = np.maximum(stop - 1, 0)
    tail = np.where(meets, np.maximum(b_end[last] - a_end, 0), 0)
    return np.where(meets, total - head - tail, 0)


def _sum_per_mask(mask: np.ndarray, values: np.ndarray, n_masks: int) -> np.ndarray:
    # bincount sums in float64, exact for pixel counts below 2**53.
    return np.bincount(mask, weights=values, minlength=n_masks).astype(np.int64)


def decode_masks(runs: MaskRuns, masks: np.ndarray) -> np.ndarray:
    """Stack the chosen masks (all of one size) into a boolean array ``(len(masks), pixels)``.

    Each row is in RLE (column-major) pixel order: reshape a row to ``(width, height)`` and
    transpose to get the ``(height, width)`` image MLE-bench's ``rle_decode`` returns.
    """
    masks = np.asarray(masks, dtype=np.int64)
    if len(masks) == 0:
        return np.zeros((0, 0), dtype=bool)
    size = int(runs.sizes[masks[0]])
    if np.any(runs.sizes[masks] != size):
        raise ValueError("masks of different sizes cannot be stacked")
    position = np.full(runs.n_masks, -1, dtype=np.int64)
    position[masks] = np.arange(len(masks))
    chosen = position[runs.mask] >= 0
    local_start = runs.start[chosen] - runs.offsets[runs.mask[chosen]]
    local_end = runs.end[chosen] - runs.offsets[runs.mask[chosen]]
    base = position[runs.mask[chosen]] * size
    # +1 at each run start and -1 after it; a cumulative sum marks the covered pixels.
    length = len(masks) * size + 1
    marks = np.bincount(base + local_start, minlength=length) - np.bincount(
        base + local_end, minlength=length
    )
    return (np.cumsum(marks[:-1]) > 0).reshape(len(masks), size)
