"""Competitions scored on run-length encoded masks: contrails (global Dice), hubmap (mean Dice),
TGS salt (IoU-threshold precision) and Vesuvius ink (pixel F0.5).

Masks are never decoded: every score follows from pixel counts taken off the runs (see
``graders.metrics.rle_masks``), so a billion-pixel whole-slide mask costs what its RLE string
costs to read.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.competitions.columns import IdAlignedGrader
from graders.competitions.pandas_cells import is_text, looks_numeric, pandas_sort_order
from graders.core import CompetitionGrader
from graders.metrics.rle_masks import MaskRuns, RleError, parse_rle_masks
from graders.metrics.segmentation import (
    dice_global,
    dice_mean,
    fbeta_per_mask,
    iou_threshold_precision_mean,
)
from graders.results import GraderError, InvalidSubmission
from graders.validation import require_columns, require_row_count


def rle_cells(column: pa.ChunkedArray, name: str, *, empty: str | None) -> list[object]:
    """The RLE cells as MLE-bench hands them to its decoder.

    ``empty``: what an empty cell becomes (MLE-bench's ``fillna``), or None to keep it as a
    missing value, which the decoder rejects. A column of numbers is not text.
    """
    if pa.types.is_null(column.type):
        return [empty] * len(column)
    if not is_text(column):
        # pandas read numbers: the decoder's "is this a string" check fails on any such cell.
        values = column.to_pylist()
        return [empty if v is None and empty is not None else v for v in values]
    if empty is not None:
        column = pc.fill_null(column, empty)
    return column.to_pylist()


def parse_masks(
    cells: list[object], sizes: np.ndarray, ids: pa.ChunkedArray, name: str, *, what: str
) -> MaskRuns:
    """Parse RLE cells; a failure names the id of the offending row."""
    try:
        return parse_rle_masks(cells, sizes)
    except RleError as error:
        row_id = ids[error.row].as_py()
        if what == "Answers":
            raise GraderError(
                f"Answers mask of '{row_id}' cannot be decoded: {error.reason}"
            ) from None
        raise InvalidSubmission(
            f"Column '{name}' of id {row_id!r} is not a valid RLE mask: {error.reason} "
            "(expected space-separated 'start length' pairs, 1-indexed, column-major, sorted "
            "and non-overlapping)."
        ) from None


def read_large_cells(path: Path, string_columns: tuple[str, ...], what: str) -> pa.Table:
    """Read a CSV whose cells may be larger than the shared reader's block (whole-slide RLEs).

    pyarrow needs a cell to fit in one block; a full-resolution mask can be hundreds of
    megabytes of text, which pandas (MLE-bench) reads fine. One block the size of the file.
    """
    import pyarrow.csv as pacsv

    from graders.reading import PANDAS_NA_VALUES

    block = int(min(max(path.stat().st_size + 1, 1 << 24), 2**31 - 1))
    try:
        return pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=block),
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.string() for name in string_columns},
                null_values=list(PANDAS_NA_VALUES),
                strings_can_be_null=True,
            ),
        )
    except pa.ArrowInvalid as error:
        raise InvalidSubmission(f"{what} could not be read as CSV: {error}") from None


class LargeCellReading:
    """Mixin: fall back to ``read_large_cells`` when a cell does not fit the reader's block."""

    def read_submission(self, path: Path) -> pa.Table:
        try:
            return super().read_submission(path)
        except InvalidSubmission as error:
            if "straddl" not in str(error):
                raise
        return read_large_cells(Path(path), self.text_columns, "Submission")

    def read_answers(self, path: Path) -> pa.Table:
        try:
            return super().read_answers(path)
        except GraderError as error:
            if "straddl" not in str(error):
                raise
        try:
            return read_large_cells(Path(path), self.text_columns, "Answers")
        except InvalidSubmission as error:
            raise GraderError(
                f"Answers for {self.competition_id} are unreadable: {error}"
            ) from None


def _sizes(answers: pa.Table, height: str, width: str) -> np.ndarray:
    h = pc.cast(answers.column(height), pa.float64()).to_numpy(zero_copy_only=False)
    w = pc.cast(answers.column(width), pa.float64()).to_numpy(zero_copy_only=False)
    return h.astype(np.int64) * w.astype(np.int64)


class ContrailsGrader(LargeCellReading, IdAlignedGrader):
    """One Dice over every pixel of every record ('-' marks an empty mask)."""

    metric = "dice_global"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        sizes = _sizes(answers, "height", "width")
        ids = answers.column(self.id_column)
        target = self.target_columns[0]
        true_cells = [_dash(v) for v in rle_cells(answers.column(target), target, empty=None)]
        pred_cells = [_dash(v) for v in rle_cells(aligned.column(target), target, empty=None)]
        truth = parse_masks(true_cells, sizes, ids, target, what="Answers")
        predicted = parse_masks(pred_cells, sizes, ids, target, what="Submission")
        return predicted, truth

    def compute(self, prepared) -> float:
        predicted, truth = prepared
        return dice_global(predicted, truth)


def _dash(value: object) -> object:
    return "" if value == "-" else value


class HubmapGrader(LargeCellReading, IdAlignedGrader):
    """Mean Dice over images; an image with no pixel on either side scores 1."""

    metric = "dice_mean"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        order = pandas_sort_order(answers.column(self.id_column))
        answers, aligned = answers.take(pa.array(order)), aligned.take(pa.array(order))
        sizes = _sizes(answers, "height_pixels", "width_pixels")
        ids = answers.column(self.id_column)
        target = self.target_columns[0]
        truth = parse_masks(
            rle_cells(answers.column("encoding"), "encoding", empty=None),
            sizes,
            ids,
            "encoding",
            what="Answers",
        )
        predicted = parse_masks(
            rle_cells(aligned.column(target), target, empty=""),
            sizes,
            ids,
            target,
            what="Submission",
        )
        return predicted, truth

    def compute(self, prepared) -> float:
        predicted, truth = prepared
        return dice_mean(predicted, truth)


TGS_SIZE = 101 * 101


class SaltGrader(IdAlignedGrader):
    """TGS salt: per 101x101 image, the share of IoU thresholds 0.50..0.95 passed; mean."""

    metric = "iou_threshold_precision_mean"

    def check_columns(self, submission: pa.Table) -> None:
        require_columns(submission, self.submission_columns, allow_extra=False)

    def prepare(self, submission: pa.Table, answers: pa.Table):
        self.check_columns(submission)
        require_row_count(submission, answers.num_rows)
        target = self.target_columns[0]
        # MLE-bench requires every cell (after filling empty ones with "") to be text.
        for name in (self.id_column, target):
            column = submission.column(name)
            numeric = (
                looks_numeric(column)
                if name == self.id_column
                else not (is_text(column) or pa.types.is_null(column.type))
            )
            if numeric:
                raise InvalidSubmission(
                    f"Column '{name}' must hold text; it was read as numbers. Write the ids "
                    "and masks as text (an empty mask is an empty cell)."
                )
        aligned = self.aligned(submission, answers)
        order = pandas_sort_order(answers.column(self.id_column))
        answers, aligned = answers.take(pa.array(order)), aligned.take(pa.array(order))
        ids = answers.column(self.id_column)
        sizes = np.full(answers.num_rows, TGS_SIZE, dtype=np.int64)
        truth = parse_masks(
            rle_cells(answers.column(target), target, empty=""),
            sizes,
            ids,
            target,
            what="Answers",
        )
        predicted = parse_masks(
            rle_cells(aligned.column(target), target, empty=""),
            sizes,
            ids,
            target,
            what="Submission",
        )
        return predicted, truth

    def compute(self, prepared) -> float:
        predicted, truth = prepared
        return iou_threshold_precision_mean(predicted, truth)


class InkGrader(LargeCellReading, CompetitionGrader):
    """Vesuvius: pixel F0.5 of each fragment's mask (row-major RLE), rows paired by position."""

    metric = "fbeta_0.5_pixel"
    text_columns = ("Id",)

    def prepare(self, submission: pa.Table, answers: pa.Table):
        require_row_count(submission, answers.num_rows)
        # MLE-bench checks each row has exactly two fields, among them Id and Predicted.
        if submission.num_columns != 2:
            raise InvalidSubmission(
                f"Submission must have exactly 2 columns (Id, Predicted); it has "
                f"{submission.num_columns}: {', '.join(submission.column_names)}."
            )
        require_columns(submission, ("Id", "Predicted"))
        submitted_ids = submission.column("Id").to_pylist()
        expected_ids = answers.column("Id").to_pylist()
        if submitted_ids != expected_ids:
            raise InvalidSubmission(
                f"Submission rows must follow the test set's order of Id values "
                f"{expected_ids!r}; got {submitted_ids!r}."
            )
        column = submission.column("Predicted")
        if not is_text(column) or column.null_count:
            raise InvalidSubmission(
                "Column 'Predicted' must hold an RLE string for every fragment (an empty "
                "cell is not accepted)."
            )
        # The RLE is row-major; decoding with swapped sides keeps the pixel count the same,
        # and the pixel counts are all F0.5 needs.
        sizes = _sizes(answers, "height", "width")
        ids = answers.column("Id")
        truth = parse_masks(
            rle_cells(answers.column("Predicted"), "Predicted", empty=None),
            sizes,
            ids,
            "Predicted",
            what="Answers",
        )
        predicted = parse_masks(column.to_pylist(), sizes, ids, "Predicted", what="Submission")
        return predicted, truth

    def compute(self, prepared) -> float:
        predicted, truth = prepared
        return float(np.mean(fbeta_per_mask(predicted, truth, beta=0.5)))


GRADERS = {
    grader.competition_id: grader
    for grader in [
        ContrailsGrader(
            "google-research-identify-contrails-reduce-global-warming",
            id_column="record_id",
            target_columns=["encoded_pixels"],
            answers=(
                "google-research-identify-contrails-reduce-global-warming/prepared/private/"
                "answers.csv"
            ),
            quirks=(
                "Dice is global: all pixels of all records are pooled before dividing.",
                "An empty mask must be written '-' (or as an RLE of nothing); an empty cell is "
                "rejected.",
                "Runs past the end of the image are cut silently; a single number decodes to an "
                "empty mask and three numbers 'a b c' to two runs of length b (numpy "
                "broadcasting in MLE-bench's decoder).",
                "When no record has a mask pixel on either side the score is NaN.",
            ),
        ),
        HubmapGrader(
            "hubmap-kidney-segmentation",
            id_column="id",
            target_columns=["predicted"],
            answers="hubmap-kidney-segmentation/prepared/private/test.csv",
            quirks=(
                "An empty prediction is an empty mask; an image empty on both sides scores 1.",
                "Runs past the end of the image are cut silently (numpy slicing in MLE-bench's "
                "decoder).",
            ),
        ),
        SaltGrader(
            "tgs-salt-identification-challenge",
            id_column="id",
            target_columns=["rle_mask"],
            answers="tgs-salt-identification-challenge/prepared/private/test.csv",
            quirks=(
                "An empty prediction for an image with salt is scored as if every pixel were "
                "predicted (MLE-bench's two-bin histogram puts a constant image in the object "
                "bin): its IoU is the salt's share of the image, so it can earn credit.",
                "Each image is one object: precision at a threshold is 1 or 0.",
                "Columns must be exactly id and rle_mask, and every cell must be text.",
            ),
        ),
        InkGrader(
            "vesuvius-challenge-ink-detection",
            answers="vesuvius-challenge-ink-detection/prepared/private/inklabels_rle.csv",
            quirks=(
                "Rows are paired with the answers by position and the Id must match there.",
                "Exactly the two columns Id and Predicted are accepted.",
                "A fragment with no ink on either side scores 0 (scikit-learn's zero_division).",
            ),
        ),
    ]
}
