"""uw-madison-gi-tract-image-segmentation: 0.4 * 2D Dice + 0.6 * (1 - 3D Hausdorff).

MLE-bench pairs submission rows with answer rows *by position* (no sort, no id check) and
decodes each predicted mask with the size of the answer row at the same position. Dice is
averaged over rows where either mask has a pixel. For the Hausdorff part, each side's rows are
sorted by id, the three organ masks of a slice are OR-ed, the slices of a case-day stacked into
a volume, and the k-th volume of the submission is compared with the k-th of the answers.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.competitions.masks import parse_masks, rle_cells
from graders.core import CompetitionGrader
from graders.metrics.rle_masks import MaskRuns
from graders.metrics.segmentation import dice_per_mask
from graders.metrics.volumes import normalized_hausdorff_voxels
from graders.results import InvalidSubmission
from graders.validation import require_columns

DICE_WEIGHT = 0.4
HAUSDORFF_WEIGHT = 0.6


def _prefix(runs: MaskRuns, n: int) -> MaskRuns:
    """The first ``n`` masks of a batch (their global coordinates are unchanged)."""
    keep = runs.mask < n
    return MaskRuns(runs.mask[keep], runs.start[keep], runs.end[keep], runs.sizes[:n])


def case_day_voxels(runs: MaskRuns, ids: list[str], heights: np.ndarray, widths: np.ndarray):
    """Yield each case-day's set voxels ``(n, 3)`` and volume shape, in MLE-bench's order.

    Rows are sorted by id (stable); rows sharing an id (the organ classes of a slice) are
    OR-ed; slices of a case-day ("case1_day2_slice_0001" -> "case1_day2") are stacked into a
    ``(slices, height, width)`` volume. Voxels come straight from the runs (no dense volume).
    """
    order = np.argsort(np.asarray(ids, dtype=object), kind="stable")
    sorted_ids = [ids[i] for i in order]
    new_slice = np.ones(len(sorted_ids), dtype=bool)
    new_slice[1:] = [a != b for a, b in zip(sorted_ids[1:], sorted_ids[:-1], strict=True)]
    slice_of_row = np.empty(len(order), dtype=np.int64)
    slice_of_row[order] = np.cumsum(new_slice) - 1
    slice_ids = [sorted_ids[i] for i in np.flatnonzero(new_slice)]
    days = [slice_id.split("_slice_")[0] for slice_id in slice_ids]
    new_day = np.ones(len(days), dtype=bool)
    new_day[1:] = [a != b for a, b in zip(days[1:], days[:-1], strict=True)]
    day_of_slice = np.cumsum(new_day) - 1
    first_slice_of_day = np.flatnonzero(new_day)
    day_of_row = day_of_slice[slice_of_row]
    offsets = runs.offsets
    for day, first_slice in enumerate(first_slice_of_day.tolist()):
        rows = np.flatnonzero(day_of_row == day)
        shapes = set(zip(heights[rows].tolist(), widths[rows].tolist(), strict=True))
        if len(shapes) != 1:
            raise InvalidSubmission(
                f"Rows of case-day '{days[first_slice]}' are decoded with different image sizes "
                "(rows are paired with the answers by position): keep the sample submission's "
                "row order."
            )
        height, width = shapes.pop()
        n_slices = int(np.sum(day_of_slice == day))
        in_day = np.isin(runs.mask, rows)
        mask = runs.mask[in_day]
        start = runs.start[in_day] - offsets[mask]
        length = runs.end[in_day] - runs.start[in_day]
        # Every covered pixel of the day: expand the runs, then map (slice, RLE pixel) to the
        # volume's C-order index; unique() ORs the classes of a slice and sorts like argwhere.
        pixel = np.repeat(start - np.cumsum(length) + length, length) + np.arange(length.sum())
        slice_index = np.repeat(slice_of_row[mask] - first_slice, length)
        row, column = pixel % height, pixel // height  # the RLE is column-major
        flat = np.unique((slice_index * height + row) * width + column)
        voxels = np.stack(np.unravel_index(flat, (n_slices, height, width)), axis=1)
        yield voxels, (n_slices, height, width)


class GiTractGrader(CompetitionGrader):
    """Dice + Hausdorff combination of uw-madison (see the module docstring)."""

    metric = "dice_hausdorff_combo"
    text_columns = ("id", "class")

    def prepare(self, submission: pa.Table, answers: pa.Table):
        require_columns(submission, ("id", "class", "predicted"))
        heights = _ints(answers.column("image_height"))
        widths = _ints(answers.column("image_width"))
        sizes = heights * widths
        n = min(submission.num_rows, answers.num_rows)  # zip() pairs the shorter length
        answer_ids = answers.column("id")
        truth = parse_masks(
            rle_cells(answers.column("predicted"), "predicted", empty=""),
            sizes,
            answer_ids,
            "predicted",
            what="Answers",
        )
        predicted = parse_masks(
            rle_cells(submission.column("predicted").slice(0, n), "predicted", empty=""),
            sizes[:n],
            submission.column("id"),
            "predicted",
            what="Submission",
        )
        submitted_ids = pc.cast(submission.column("id").slice(0, n), pa.string()).to_pylist()
        if any(value is None for value in submitted_ids):
            raise InvalidSubmission("Column 'id' has empty cells: every row needs its slice id.")
        return predicted, truth, submitted_ids, answer_ids.to_pylist(), heights, widths

    def compute(self, prepared) -> float:
        predicted, truth, submitted_ids, answer_ids, heights, widths = prepared
        n = predicted.n_masks
        with np.errstate(invalid="ignore"):
            dice = np.nanmean(dice_per_mask(predicted, _prefix(truth, n), both_empty=np.nan))
        distances = [
            normalized_hausdorff_voxels(p, p_shape, t, t_shape)
            for (p, p_shape), (t, t_shape) in zip(
                case_day_voxels(predicted, submitted_ids, heights[:n], widths[:n]),
                case_day_voxels(truth, answer_ids, heights, widths),
                strict=False,  # MLE-bench zips the two lists of days: the shorter one wins
            )
        ]
        with np.errstate(invalid="ignore"):
            hausdorff = np.nanmean(distances) if distances else np.nan
        return DICE_WEIGHT * dice + HAUSDORFF_WEIGHT * (1 - hausdorff)


def _ints(column: pa.ChunkedArray) -> np.ndarray:
    return pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False).astype(np.int64)


GRADERS = {
    "uw-madison-gi-tract-image-segmentation": GiTractGrader(
        "uw-madison-gi-tract-image-segmentation",
        answers="uw-madison-gi-tract-image-segmentation/prepared/private/test.csv",
        quirks=(
            "Rows are paired with the answers by position, not by id, and each predicted mask "
            "is decoded with the image size of the answer row at the same position: keep the "
            "sample submission's row order.",
            "Neither the row count nor the ids are checked; extra rows are ignored, missing rows "
            "shorten the comparison.",
            "Dice skips rows where both masks are empty; the Hausdorff part ORs the three organ "
            "classes of a slice and compares whole case-day volumes (empty on both sides: "
            "skipped; one side empty or a prediction 10x larger than the truth: distance 1).",
        ),
    )
}
