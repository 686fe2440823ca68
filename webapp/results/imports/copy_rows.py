"""An imported experiment's runs and reports sent to PostgreSQL by COPY, as text made
here in one write per table. psycopg's ``write_row`` spends about 20 µs a row choosing
and calling its dumpers, most of a million-report import; the text written here is what
psycopg's text dumpers make of the same values, and parts that recur (thresholds,
outcomes, dates, paths) are made once."""

import re

from django.db import connection

from benchmark.reports import REPORT_KEYS, submission_path_in_run
from webapp.results.models import GradeReport, Run

# What a GradeReport stores of a CompetitionReport: MLE-bench's keys (after the id) and
# mleboard's extras, in one order used by the ORM path and the bulk path alike.
REPORT_VALUE_FIELDS = (
    *REPORT_KEYS[1:],
    "percentile",
    "grader_version",
    "error",
    "error_class",
)

RUN_COLUMNS = (
    "experiment_id",
    "competition_id",
    "seed",
    "run_group",
    "submission_path",
    "status",
    "error",
    "claimed_by",
    "attempts",
    "dispatch_count",
    "created_at",
    "updated_at",
)
REPORT_COLUMNS = (
    "run_id",
    "experiment_id",
    "competition_id",
    "seed",
    "is_current",
    "source",
    *REPORT_VALUE_FIELDS,
    "recorded_at",
)


def copy_runs_and_reports(
    experiment_pk: int, competitions: dict[str, int], pending, source, now
) -> None:
    """The rows of ``services._insert_runs_and_reports`` (``pending``: (competition id,
    seed) -> (run group, report); ``competitions``: competition id -> pk), the runs' ids
    read back by their competition's pk (no join)."""
    lines = CopyLines(experiment_pk, competitions, now)
    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy(f"COPY {Run._meta.db_table} ({', '.join(RUN_COLUMNS)}) FROM STDIN") as copy:
            copy.write(lines.runs(pending))
        raw.execute(
            f"SELECT competition_id, seed, id FROM {Run._meta.db_table} WHERE experiment_id = %s",
            [experiment_pk],
        )
        run_ids = {(competition, seed): pk for competition, seed, pk in raw.fetchall()}
        with raw.copy(
            f"COPY {GradeReport._meta.db_table} ({', '.join(REPORT_COLUMNS)}) FROM STDIN"
        ) as copy:
            copy.write(lines.reports(pending, run_ids, source))


# COPY's text format, as psycopg writes it: these characters escaped, NULL as \N.
_NULL = "\\N"
_COPY_SPECIAL = re.compile("[\b\t\n\v\f\r\\\\\x00]")
_COPY_ESCAPES = str.maketrans(
    {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r", "\\": "\\\\"}
)


def copy_text(value: str) -> str:
    if _COPY_SPECIAL.search(value) is None:
        return value
    if "\x00" in value:
        from psycopg import DataError

        raise DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
    return value.translate(_COPY_ESCAPES)


def copy_number(value) -> str:
    # NaN (the one value unequal to itself): no number, stored as a missing score.
    return _NULL if value is None or value != value else str(value)


class CopyLines:
    """COPY text of an experiment's runs and of their reports: the values of
    ``services._insert_runs_and_reports`` (``services._report_fields`` for a report's),
    each written as psycopg's text dumper writes it (``str`` of a number or a datetime).
    Parts that recur (thresholds, outcomes, dates, paths) are made once."""

    def __init__(self, experiment_pk: int, competitions: dict[str, int], now):
        self.experiment = experiment_pk
        self.competitions = competitions
        self.now = now
        self.now_text = str(now)
        self.texts: dict[str, str] = {}
        self.moments: dict = {}

    def text(self, value: str) -> str:
        found = self.texts.get(value)
        if found is None:
            found = self.texts[value] = copy_text(value)
        return found

    def moment(self, value) -> str:
        found = self.moments.get(value)
        if found is None:
            import datetime as dt

            from django.utils import timezone

            if value is None:
                stamp = self.now
            elif timezone.is_naive(value):
                stamp = timezone.make_aware(value, dt.UTC)
            else:
                stamp = value
            found = self.moments[value] = str(stamp)
        return found

    def runs(self, pending: dict) -> str:
        from webapp.results.models import Run

        text, competitions = self.text, self.competitions
        head = f"{self.experiment}\t"
        tail = (
            f"\t{copy_text(Run.Status.GRADED.value)}\t\t\t0\t0\t{self.now_text}\t{self.now_text}\n"
        )
        return "".join(
            f"{head}{competitions[cid]}\t{seed}\t{text(group)}\t{text(r.submission_path or '')}{tail}"
            for (cid, seed), (group, r) in pending.items()
        )

    def reports(self, pending: dict, run_ids: dict, source) -> str:
        text, moment, competitions = self.text, self.moment, self.competitions
        head = f"\t{self.experiment}\t"
        source = copy_text(str(source))
        now_text = self.now_text
        thresholds: dict[tuple, str] = {}
        outcomes: dict[tuple, str] = {}
        lines = []
        for (cid, seed), (_, r) in pending.items():
            key = (r.gold_threshold, r.silver_threshold, r.bronze_threshold, r.median_threshold)
            limits = thresholds.get(key)
            if limits is None:
                limits = "\t".join(map(copy_number, key))
                if 0 not in key:  # 0.0 and -0.0 are one key but two values
                    thresholds[key] = limits
            key = (
                r.any_medal,
                r.gold_medal,
                r.silver_medal,
                r.bronze_medal,
                r.above_median,
                r.submission_exists,
                r.valid_submission,
                r.is_lower_better,
            )
            outcome = outcomes.get(key)
            if outcome is None:
                outcome = outcomes[key] = "\t".join("t" if v else "f" for v in key)
            competition = competitions[cid]
            score, percentile = r.score, r.percentile
            lines.append(
                f"{run_ids[competition, seed]}{head}{competition}\t{seed}\tt\t{source}\t"
                f"{_NULL if score is None or score != score else score}\t{limits}\t{outcome}\t"
                f"{moment(r.created_at)}\t{text(submission_path_in_run(r.submission_path))}\t"
                f"{_NULL if percentile is None or percentile != percentile else percentile}\t"
                f"{text(r.grader_version or '')}\t{text(r.error or '')}\t"
                f"{text(r.error_class or '')}\t{now_text}\n"
            )
        return "".join(lines)
