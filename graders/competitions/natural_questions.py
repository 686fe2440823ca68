"""TensorFlow 2.0 Question Answering (Natural Questions): answers are JSON lines.

Each example has a ``<id>_long`` and a ``<id>_short`` row. A prediction is "start:end",
"YES", "NO" or empty. MLE-bench turns every row into a (truth, prediction) bit pair:
prediction = 1 if non-empty; truth = 1 if the (non-empty) prediction is one of the valid
answers, or if the prediction is empty but a valid answer exists. The score is the micro
F1 of those bits, which equals the fraction of rows where the two bits agree.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graders.competitions.columns import IdAlignedGrader
from graders.metrics.classification import f1_micro_counts
from graders.results import GraderError, InvalidSubmission
from graders.validation import align_ids, require_columns

_SPAN = pa.struct([("start_token", pa.int64()), ("end_token", pa.int64())])
_SCHEMA = pa.schema(
    [
        ("example_id", pa.string()),
        (
            "annotations",
            pa.list_(
                pa.struct(
                    [
                        ("long_answer", _SPAN),
                        ("short_answers", pa.list_(_SPAN)),
                        ("yes_no_answer", pa.string()),
                    ]
                )
            ),
        ),
    ]
)
_NUMBER = r"\s*[+-]?\d+\s*"


class NaturalQuestionsGrader(IdAlignedGrader):
    metric = "f1_micro"

    def __init__(self, competition_id: str, **kwargs):
        super().__init__(
            competition_id,
            id_column="example_id",
            target_columns=["PredictionString"],
            extra_text_columns=["PredictionString"],
            **kwargs,
        )

    def read_answers(self, path: Path) -> pa.Table:
        import pyarrow.json as pajson

        # prepare.py writes whole Natural Questions records (the page's text included), so
        # one line can be megabytes: a block must hold the longest line, so take the file.
        try:
            block = int(min(max(Path(path).stat().st_size + 1, 1 << 20), 2**31 - 1))
            table = pajson.read_json(
                path,
                read_options=pajson.ReadOptions(block_size=block),
                parse_options=pajson.ParseOptions(
                    explicit_schema=_SCHEMA, unexpected_field_behavior="ignore"
                ),
            )
        except (pa.ArrowInvalid, OSError) as error:
            raise GraderError(
                f"Answers for {self.competition_id} are unreadable: {error}"
            ) from None
        first = pc.list_element(table.column("annotations"), 0)
        long = pc.struct_field(first, "long_answer")
        return pa.table(
            {
                "example_id": table.column("example_id"),
                "long_start": pc.struct_field(long, "start_token"),
                "long_end": pc.struct_field(long, "end_token"),
                "short_answers": pc.struct_field(first, "short_answers"),
                "yes_no": pc.struct_field(first, "yes_no_answer"),
            }
        )

    def prepare(self, submission: pa.Table, answers: pa.Table):
        n_examples = answers.num_rows
        if submission.num_rows != 2 * n_examples:
            raise InvalidSubmission(
                f"Submission has {submission.num_rows} rows; expected {2 * n_examples} "
                "(a _long and a _short row per example)."
            )
        require_columns(submission, ["example_id", "PredictionString"])
        ids = pc.fill_null(submission.column("example_id"), "")
        base = answers.column("example_id")
        expected = pa.chunked_array(
            [
                pc.binary_join_element_wise(base, "_long", ""),
                pc.binary_join_element_wise(base, "_short", ""),
            ]
        )
        align_ids(ids, expected, "example_id", numeric_fallback=False)

        is_long = pc.ends_with(ids, "_long").to_numpy(zero_copy_only=False)
        example = pc.replace_substring_regex(ids, r"_(long|short)$", "")
        row_example = pc.index_in(example, value_set=base).to_numpy(zero_copy_only=False)
        row_example = row_example.astype(np.int64)

        pred = pc.utf8_trim_whitespace(pc.fill_null(submission.column("PredictionString"), ""))
        has_pred = pc.not_equal(pred, "").to_numpy(zero_copy_only=False)
        parts = pc.split_pattern(pred, ":")
        is_span = pc.equal(pc.list_value_length(parts), 2).to_numpy(zero_copy_only=False)
        is_word = pc.is_in(pred, value_set=pa.array(["YES", "NO", ""])).to_numpy(
            zero_copy_only=False
        )
        start_text = pc.list_element(pc.if_else(is_span, parts, pa.scalar(["0", "0"])), 0)
        end_text = pc.list_element(pc.if_else(is_span, parts, pa.scalar(["0", "0"])), 1)
        numeric = pc.and_(
            pc.match_substring_regex(start_text, f"^{_NUMBER}$"),
            pc.match_substring_regex(end_text, f"^{_NUMBER}$"),
        ).to_numpy(zero_copy_only=False)
        bad = (is_span & ~numeric) | (~is_span & ~is_word)
        if bad.any():
            example_bad = pred.take(pa.array(np.flatnonzero(bad)[:3])).to_pylist()
            raise InvalidSubmission(
                "PredictionString must be 'start:end' token indices, 'YES', 'NO' or empty; "
                f"{int(bad.sum())} rows are not (e.g. {example_bad!r})."
            )
        start = pc.cast(pc.utf8_trim_whitespace(start_text), pa.int64()).to_numpy(
            zero_copy_only=False
        )
        end = pc.cast(pc.utf8_trim_whitespace(end_text), pa.int64()).to_numpy(zero_copy_only=False)
        word = pred.to_numpy(zero_copy_only=False)

        matched = np.zeros(len(is_long), dtype=bool)
        has_valid = np.zeros(len(is_long), dtype=bool)
        # long rows: the single long answer, if the example has one
        long_start = answers.column("long_start").to_numpy(zero_copy_only=False)[row_example]
        long_end = answers.column("long_end").to_numpy(zero_copy_only=False)[row_example]
        long_valid = long_start != -1
        has_valid |= is_long & long_valid
        matched |= is_long & long_valid & is_span & (start == long_start) & (end == long_end)
        # short rows: any short span, or the yes/no answer
        yes_no = answers.column("yes_no").to_numpy(zero_copy_only=False)[row_example]
        yes_no_valid = yes_no != "NONE"
        short_lists = answers.column("short_answers").combine_chunks()
        n_short = pc.list_value_length(short_lists).fill_null(0).to_numpy(zero_copy_only=False)
        has_valid |= ~is_long & ((n_short[row_example] > 0) | yes_no_valid)
        matched |= ~is_long & ~is_span & has_pred & yes_no_valid & (word == yes_no)
        spans = pc.list_flatten(short_lists)
        span_example = pc.list_parent_indices(short_lists).to_numpy().astype(np.int64)
        span_start = pc.struct_field(spans, "start_token").to_numpy(zero_copy_only=False)
        span_end = pc.struct_field(spans, "end_token").to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(~is_long & is_span)
        if len(rows) and len(span_start):
            keys = np.stack([span_example, span_start, span_end], axis=1)
            wanted = np.stack([row_example[rows], start[rows], end[rows]], axis=1)
            matched[rows] |= _rows_in(wanted, keys)

        y_pred = has_pred
        y_true = np.where(has_pred, matched, has_valid)
        return y_true, y_pred

    def compute(self, prepared) -> float:
        y_true, y_pred = prepared
        agree = int(np.count_nonzero(y_true == y_pred))
        n = len(y_true)
        return f1_micro_counts(agree, n, n)


def _rows_in(wanted: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Which rows of ``wanted`` (n, 3 ints) appear among the rows of ``known``."""
    both = np.concatenate([known, wanted])
    _, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    return np.isin(inverse[len(known) :], inverse[: len(known)])


GRADERS = {
    "tensorflow2-question-answering": NaturalQuestionsGrader(
        "tensorflow2-question-answering",
        answers="tensorflow2-question-answering/prepared/private/test.jsonl",
        quirks=(
            "The micro F1 over both classes of the constructed bits equals the fraction of "
            "rows where truth and prediction bits agree; an empty prediction for an example "
            "with no answer counts as correct.",
        ),
    )
}
