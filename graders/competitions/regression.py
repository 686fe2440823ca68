"""Competitions scored by regression errors and correlations."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.arrow_numpy import from_numpy, to_numpy
from graders.competitions.columns import IdAlignedGrader
from graders.metrics.regression import (
    log_mae_by_type,
    mae,
    mcrmse,
    mean_columnwise_rmsle,
    mean_columnwise_spearman,
    pearson,
    rmse,
)
from graders.results import InvalidSubmission
from graders.validation import (
    align_ids,
    answer_numbers,
    check_finite,
    check_range,
    numeric_column,
    require_columns,
    require_row_count,
)


def sort_order(column: pa.ChunkedArray) -> np.ndarray:
    """Row order after pandas' ``sort_values`` on this column: numbers numerically, text as text."""
    return to_numpy(pc.sort_indices(column)).astype(np.int64)


def predictions(table: pa.Table, name: str) -> np.ndarray:
    """Finite numeric predictions (scikit-learn's regression metrics reject NaN and infinity)."""
    return numeric_column(table, name, allow_nan=False, allow_inf=False)


class ErrorGrader(IdAlignedGrader):
    """RMSE or MAE of one column, rows paired by id.

    ``value_range``: (low, high) the predictions must lie in (petfinder: 1-100).
    ``score_mask``: an answers column selecting the scored rows (ventilator: u_out == 0).
    """

    def __init__(
        self,
        competition_id: str,
        *,
        metric: str,
        value_range: tuple[float, float] | None = None,
        score_mask: str | None = None,
        **kwargs,
    ):
        super().__init__(competition_id, **kwargs)
        self.metric = metric
        self.value_range = value_range
        self.score_mask = score_mask

    def prepare(self, submission: pa.Table, answers: pa.Table):
        target = self.target_columns[0]
        if self.value_range:
            self.check_columns(submission)
            values = numeric_column(submission, target, allow_nan=True)
            # pandas' between() is False for NaN, so empty cells fail the range check.
            low, high = self.value_range
            check_range(np.where(np.isnan(values), -np.inf, values), target, low, high)
        aligned = self.aligned(submission, answers)
        y_true = answer_numbers(answers, target, allow_nan=True)
        y_pred = numeric_column(aligned, target, allow_nan=True)
        if self.score_mask:
            keep = answer_numbers(answers, self.score_mask) == 0
            y_true, y_pred = y_true[keep], y_pred[keep]
        return y_true, _finite(y_pred, target)

    def validation_checks(self, submission: pa.Table) -> None:
        if self.score_mask:  # which rows are scored comes from the answers
            _finite_everywhere(submission, self.target_columns)

    def compute(self, prepared) -> float:
        y_true, y_pred = prepared
        return rmse(y_true, y_pred) if self.metric == "rmse" else mae(y_true, y_pred)


def _finite(values: np.ndarray, name: str) -> np.ndarray:
    check_finite(values, name)
    return values


def _finite_everywhere(submission: pa.Table, names) -> None:
    """Validation's stricter rule where the answers select the scored rows: every row of
    these columns needs a finite number (MLE-bench only looks at the scored ones), so the
    verdict says nothing about which rows those are."""
    for name in names:
        if name in submission.column_names:
            check_finite(numeric_column(submission, name, allow_nan=True), name)


class SortedPairsGrader(IdAlignedGrader):
    """RMSE with rows paired by position after sorting each file on its key (taxi fares).

    The keys themselves are never compared, so a submission with other keys is still scored
    against the answers in sorted order; only the counts must agree.
    """

    metric = "rmse"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        self.check_columns(submission)
        target = self.target_columns[0]
        require_row_count(submission, answers.num_rows)
        sub = submission.take(from_numpy(sort_order(submission.column(self.id_column))))
        ans = answers.take(from_numpy(sort_order(answers.column(self.id_column))))
        return answer_numbers(ans, target, allow_nan=True), predictions(sub, target)

    def compute(self, prepared) -> float:
        return rmse(*prepared)


class MergedMaeGrader(IdAlignedGrader):
    """MAE over an inner join of answers and submission on the id (duplicates count twice).

    ``by_type``: champs - the mean over coupling types of ln(MAE within the type).
    ``round_to_integer``: volcanic eruptions - the MAE rounded to a whole number.
    """

    def __init__(self, *args, metric: str, by_type: bool = False, round_to_integer=False, **kw):
        super().__init__(*args, check_row_count=False, **kw)
        self.metric = metric
        self.by_type = by_type
        self.round_to_integer = round_to_integer
        if by_type:
            self.text_columns = (*self.text_columns, "type")

    def prepare(self, submission: pa.Table, answers: pa.Table):
        self.check_columns(submission)
        target = self.target_columns[0]
        ids = submission.column(self.id_column)
        answer_ids = answers.column(self.id_column)
        positions = pc.index_in(ids, value_set=answer_ids)
        covered = pc.is_in(answer_ids, value_set=ids)
        if positions.null_count or not pc.all(covered).as_py():
            try:  # for the message: which ids are missing or unknown
                align_ids(ids, answer_ids, self.id_column)
            except InvalidSubmission as error:
                raise InvalidSubmission(str(error)) from None
        position = to_numpy(positions).astype(np.int64)
        # pandas' merge keeps the answers' order, and a repeated id's rows in file order.
        merged = np.argsort(position, kind="stable")
        y_pred = _finite(numeric_column(submission, target, allow_nan=True)[merged], target)
        answer_rows = position[merged]
        y_true = answer_numbers(answers, target)[answer_rows]
        if self.by_type:
            types = answers.column("type")
            distinct = pc.unique(types)
            distinct = distinct.take(pc.sort_indices(distinct))
            codes = to_numpy(pc.index_in(types, value_set=distinct))
            return y_true, y_pred, codes.astype(np.int64)[answer_rows]
        return y_true, y_pred

    def compute(self, prepared) -> float:
        if self.by_type:
            return log_mae_by_type(*prepared)
        score = mae(*prepared)
        return float(int(round(score))) if self.round_to_integer else score


class PositionalRmsleGrader(IdAlignedGrader):
    """Mean column RMSLE with rows paired by file position (nomad2018: ids are not read)."""

    metric = "mean_columnwise_rmsle"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        require_columns(submission, self.target_columns)
        require_row_count(submission, answers.num_rows)
        truth = np.column_stack([answer_numbers(answers, c) for c in self.target_columns])
        pred = np.column_stack([predictions(submission, c) for c in self.target_columns])
        return truth, pred

    def compute(self, prepared) -> float:
        return mean_columnwise_rmsle(*prepared)


class CovidVaccineGrader(IdAlignedGrader):
    """Stanford COVID vaccine MCRMSE over three scored columns on rows the answers keep.

    MLE-bench applies the answers' ``keep`` flags to the submission by row position in the
    file (pandas aligns the boolean mask on the row index), then pairs the kept rows of both
    files after sorting each on id_seqpos.
    """

    metric = "mcrmse"
    scored = ("reactivity", "deg_Mg_pH10", "deg_Mg_50C")

    def validation_checks(self, submission: pa.Table) -> None:
        _finite_everywhere(submission, self.scored)  # the answers' keep flags pick the rows

    def prepare(self, submission: pa.Table, answers: pa.Table):
        require_row_count(submission, answers.num_rows)
        self.check_columns(submission)
        align_ids(submission.column(self.id_column), answers.column(self.id_column), self.id_column)
        keep = _as_bool(answers.column("keep"))
        sub_order = sort_order(submission.column(self.id_column))
        ans_order = sort_order(answers.column(self.id_column))
        sub_rows = sub_order[keep[sub_order]]
        ans_rows = ans_order[keep[ans_order]]
        truth = np.column_stack([answer_numbers(answers, c, allow_nan=True) for c in self.scored])
        pred = np.column_stack([numeric_column(submission, c, allow_nan=True) for c in self.scored])
        pred = pred[sub_rows]
        for index, name in enumerate(self.scored):
            _finite(pred[:, index], name)
        return truth[ans_rows], pred

    def compute(self, prepared) -> float:
        return mcrmse(*prepared)


def _as_bool(column: pa.ChunkedArray) -> np.ndarray:
    if pa.types.is_boolean(column.type):
        return to_numpy(column).astype(bool)
    return answer_numbers(pa.table({"keep": column}), "keep") != 0


class PearsonGrader(IdAlignedGrader):
    """Pearson's r between predicted and true scores (NaN for a constant prediction)."""

    metric = "pearson"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        y_pred = numeric_column(aligned, target, allow_nan=True)
        return answer_numbers(answers, target, allow_nan=True), y_pred

    def compute(self, prepared) -> float:
        return pearson(*prepared)


class SpearmanGrader(IdAlignedGrader):
    """Mean column Spearman rho; rows paired after sorting each file on qa_id (ids unchecked)."""

    metric = "mean_columnwise_spearman"

    def __init__(self, competition_id: str, **kwargs):
        super().__init__(competition_id, id_column="qa_id", target_columns=(), **kwargs)
        self.text_columns = ()  # qa_id sorts as a number, as pandas reads it

    def prepare(self, submission: pa.Table, answers: pa.Table):
        classes = [c for c in answers.column_names if c != self.id_column]
        require_columns(submission, [self.id_column, *classes])
        if submission.num_columns != len(classes) + 1:
            raise InvalidSubmission(
                f"Submission has {submission.num_columns - 1} prediction columns, "
                f"expected exactly {len(classes)}."
            )
        require_row_count(submission, answers.num_rows)
        sub = submission.take(from_numpy(sort_order(submission.column(self.id_column))))
        ans = answers.take(from_numpy(sort_order(answers.column(self.id_column))))
        truth = np.column_stack([answer_numbers(ans, c, allow_nan=True) for c in classes])
        pred = np.column_stack([numeric_column(sub, c, allow_nan=True) for c in classes])
        return truth, pred

    def compute(self, prepared) -> float:
        return mean_columnwise_spearman(*prepared)


GRADERS = {
    grader.competition_id: grader
    for grader in [
        ErrorGrader(
            "denoising-dirty-documents",
            metric="rmse",
            id_column="id",
            target_columns=["value"],
            answers="denoising-dirty-documents/prepared/private/answers.csv",
        ),
        SortedPairsGrader(
            "new-york-city-taxi-fare-prediction",
            id_column="key",
            target_columns=["fare_amount"],
            quirks=(
                "Keys are not compared: both files are sorted by key and paired row by row, "
                "so only the number of rows must match the test set.",
            ),
        ),
        ErrorGrader(
            "petfinder-pawpularity-score",
            metric="rmse",
            id_column="Id",
            target_columns=["Pawpularity"],
            value_range=(1, 100),
        ),
        MergedMaeGrader(
            "predict-volcanic-eruptions-ingv-oe",
            metric="mae",
            id_column="segment_id",
            target_columns=["time_to_eruption"],
            round_to_integer=True,
            quirks=(
                "The MAE is rounded to a whole number.",
                "Ids are compared as sets: a repeated segment_id is scored once per repeat.",
            ),
        ),
        ErrorGrader(
            "ventilator-pressure-prediction",
            metric="mae",
            id_column="id",
            target_columns=["pressure"],
            score_mask="u_out",
            quirks=("Only rows where the answers' u_out is 0 (inspiratory phase) are scored.",),
        ),
        PositionalRmsleGrader(
            "nomad2018-predict-transparent-conductors",
            id_column="id",
            target_columns=["formation_energy_ev_natom", "bandgap_energy_ev"],
            quirks=(
                "Rows are paired by position in the file, not by id: keep the sample "
                "submission's row order.",
                "Negative predictions make the submission invalid (RMSLE is undefined).",
            ),
        ),
        CovidVaccineGrader(
            "stanford-covid-vaccine",
            id_column="id_seqpos",
            target_columns=["reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C"],
            quirks=(
                "deg_pH10 and deg_50C are required but not scored.",
                "The answers' keep flags select submission rows by their position in the file, "
                "not by id: keep the sample submission's row order.",
            ),
        ),
        MergedMaeGrader(
            "champs-scalar-coupling",
            metric="log_mae_by_type",
            id_column="id",
            target_columns=["scalar_coupling_constant"],
            answers="champs-scalar-coupling/prepared/private/answers.csv",
            by_type=True,
            quirks=(
                "A coupling type predicted exactly scores ln(0) = -inf, and so does the total.",
                "Ids are compared as sets: a repeated id is scored once per repeat.",
            ),
        ),
        PearsonGrader(
            "us-patent-phrase-to-phrase-matching",
            id_column="id",
            target_columns=["score"],
            quirks=("A constant prediction has an undefined correlation: the score is NaN.",),
        ),
        SpearmanGrader(
            "google-quest-challenge",
            quirks=(
                "qa_id values are not compared: both files are sorted by qa_id and paired row "
                "by row.",
                "A constant column has an undefined correlation and makes the score NaN.",
            ),
        ),
    ]
}
