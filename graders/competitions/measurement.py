"""Competitions scored on physical measurements: directions, positions, lung capacity."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.competitions.columns import IdAlignedGrader
from graders.metrics.regression import (
    haversine_metres,
    haversine_p50_p95_mean,
    laplace_log_likelihood,
    mean_angular_error,
)
from graders.results import InvalidSubmission
from graders.validation import (
    answer_numbers,
    numeric_column,
    require_row_count,
    require_unique,
    show,
)


class AngularErrorGrader(IdAlignedGrader):
    """IceCube: mean angle between true and predicted directions (azimuth, zenith)."""

    metric = "mean_angular_error"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        self.check_columns(submission)
        for name in self.target_columns:
            column = submission.column(name)
            if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
                raise InvalidSubmission(f"Column '{name}' must hold numbers (radians).")
            numeric_column(submission, name, allow_nan=False, allow_inf=False)
        aligned = self.aligned(submission, answers)
        return (
            answer_numbers(answers, "azimuth"),
            answer_numbers(answers, "zenith"),
            numeric_column(aligned, "azimuth"),
            numeric_column(aligned, "zenith"),
        )

    def compute(self, prepared) -> float:
        return mean_angular_error(*prepared)


class TripPositionGrader(IdAlignedGrader):
    """Smartphone decimeter: per trip, rows are paired by position within the trip."""

    metric = "haversine_p50_p95_mean"
    position_columns = ("LatitudeDegrees", "LongitudeDegrees")

    def __init__(self, competition_id: str, **kwargs):
        super().__init__(
            competition_id,
            id_column="tripId",
            target_columns=("UnixTimeMillis", *self.position_columns),
            **kwargs,
        )

    def prepare(self, submission: pa.Table, answers: pa.Table):
        self.check_columns(submission)
        require_row_count(submission, answers.num_rows)
        trips = pc.unique(answers.column("tripId"))  # first-appearance order, like pandas
        sub_codes = _codes(submission.column("tripId"), trips)
        ans_codes = _codes(answers.column("tripId"), trips)
        sub_counts = np.bincount(sub_codes[sub_codes >= 0], minlength=len(trips))
        ans_counts = np.bincount(ans_codes, minlength=len(trips))
        wrong = np.flatnonzero(sub_counts != ans_counts)
        if len(wrong):
            first = int(wrong[0])
            raise InvalidSubmission(
                f"Each trip needs as many rows as in the test set; {len(wrong)} trips differ "
                f"(first: {trips[first].as_py()!r} has {int(sub_counts[first])} rows, "
                f"expected {int(ans_counts[first])})."
            )
        # Stable sorts keep each trip's rows in file order: the k-th rows of a trip pair up.
        sub_rows = np.argsort(sub_codes, kind="stable")
        ans_rows = np.argsort(ans_codes, kind="stable")
        lat_p, lng_p = (
            numeric_column(submission, c, allow_nan=True) for c in self.position_columns
        )
        lat_t, lng_t = (answer_numbers(answers, c, allow_nan=True) for c in self.position_columns)
        distances = haversine_metres(
            lat_p[sub_rows], lng_p[sub_rows], lat_t[ans_rows], lng_t[ans_rows]
        )
        bounds = np.cumsum(ans_counts)[:-1]
        return np.split(distances, bounds)

    def compute(self, prepared) -> float:
        return haversine_p50_p95_mean(prepared)


def _codes(values: pa.ChunkedArray, vocabulary: pa.Array) -> np.ndarray:
    codes = pc.index_in(values, value_set=vocabulary)
    return pc.fill_null(codes, -1).to_numpy(zero_copy_only=False).astype(np.int64)


class FibrosisGrader(IdAlignedGrader):
    """OSIC: Laplace log likelihood on each patient's last three measured weeks.

    Every submitted Patient_Week must exist in the answers' week grid; rows outside the
    scored weeks are ignored, and scored weeks the submission leaves out are not scored.
    """

    metric = "laplace_log_likelihood"

    def __init__(self, competition_id: str, **kwargs):
        super().__init__(
            competition_id,
            id_column="Patient_Week",
            target_columns=("FVC", "Confidence"),
            extra_text_columns=("Patient",),
            **kwargs,
        )

    def validation_checks(self, submission: pa.Table) -> None:
        # MLE-bench fails only on a repeated *scored* week, and which weeks are scored comes
        # from the answers: validation refuses any repeated Patient_Week instead.
        if "Patient_Week" in submission.column_names:
            require_unique(submission.column("Patient_Week"), "Patient_Week")

    def prepare(self, submission: pa.Table, answers: pa.Table):
        self.check_columns(submission)
        sub_weeks = submission.column("Patient_Week")
        known = pc.is_in(sub_weeks, value_set=answers.column("Patient_Week")).fill_null(False)
        if not pc.all(known).as_py():
            unknown = pc.filter(sub_weeks, pc.invert(known))
            raise InvalidSubmission(
                f"{len(unknown)} Patient_Week values are not in the test set "
                f"(first: {show(unknown.slice(0, 5).to_pylist(), len(unknown))})."
            )
        for name in self.target_columns:
            column = submission.column(name)
            if not (
                pa.types.is_integer(column.type)
                or pa.types.is_floating(column.type)
                or pa.types.is_boolean(column.type)
                or pa.types.is_null(column.type)
            ):
                raise InvalidSubmission(f"Column '{name}' must hold numbers.")
        scored = _last_three_weeks(answers)
        in_scored = pc.is_in(sub_weeks, value_set=scored.column("Patient_Week")).fill_null(False)
        sub = submission.filter(in_scored)
        sub = sub.take(pc.sort_indices(sub.column("Patient_Week")))
        covered = pc.is_in(scored.column("Patient_Week"), value_set=sub.column("Patient_Week"))
        ans = scored.filter(covered)
        ans = ans.take(pc.sort_indices(ans.column("Patient_Week")))
        if sub.num_rows != ans.num_rows:
            raise InvalidSubmission(
                "A scored Patient_Week appears more than once in the submission."
            )
        confidence = numeric_column(sub, "Confidence", allow_nan=True)
        confidence = np.where(np.isnan(confidence), 0.0, confidence)
        return (
            answer_numbers(ans, "FVC"),
            numeric_column(sub, "FVC", allow_nan=True),
            confidence,
        )

    def compute(self, prepared) -> float:
        with np.errstate(invalid="ignore"):
            return laplace_log_likelihood(*prepared)


def _last_three_weeks(answers: pa.Table) -> pa.Table:
    """The answer rows scored: each patient's three latest weeks that have an FVC."""
    measured = answers.filter(pc.is_valid(answers.column("FVC")))
    suffix = pc.extract_regex(measured.column("Patient_Week"), r"_(?P<week>-?\d+)$")
    week_numbers = pc.cast(pc.struct_field(suffix, "week"), pa.int64()).to_numpy(
        zero_copy_only=False
    )
    patients = pc.unique(measured.column("Patient"))
    patient_codes = pc.index_in(measured.column("Patient"), value_set=patients).to_numpy(
        zero_copy_only=False
    )
    # Order by patient, then week; keep the last three rows of each patient.
    order = np.lexsort((week_numbers, patient_codes))
    sorted_codes = patient_codes[order]
    rank_from_end = np.empty(len(order), dtype=np.int64)
    counts = np.bincount(sorted_codes, minlength=len(patients))
    ends = np.cumsum(counts)
    rank_from_end[:] = ends[sorted_codes] - np.arange(len(order)) - 1
    keep = order[rank_from_end < 3]
    return measured.take(pa.array(np.sort(keep)))


GRADERS = {
    grader.competition_id: grader
    for grader in [
        AngularErrorGrader(
            "icecube-neutrinos-in-deep-ice",
            id_column="event_id",
            target_columns=["azimuth", "zenith"],
            allow_extra_columns=False,
        ),
        TripPositionGrader(
            "smartphone-decimeter-2022",
            quirks=(
                "Within a trip, rows are paired by their order in the file, not by "
                "UnixTimeMillis: keep the sample submission's row order.",
            ),
        ),
        FibrosisGrader(
            "osic-pulmonary-fibrosis-progression",
            quirks=(
                "Only each patient's last three measured weeks are scored; other rows are "
                "ignored, and scored weeks left out of the submission are simply not scored.",
                "An empty Confidence counts as 0 (then raised to the minimum of 70).",
            ),
        ),
    ]
}
