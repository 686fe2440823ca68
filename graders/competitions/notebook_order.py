"""AI4Code: predict the order of a notebook's cells; scored by a pooled Kendall tau."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from graders.competitions.columns import IdAlignedGrader
from graders.competitions.pandas_cells import as_pandas_str
from graders.metrics.ranking import kendall_tau_pooled
from graders.results import InvalidSubmission
from graders.validation import show


class CellOrderGrader(IdAlignedGrader):
    """Pooled Kendall tau between the submitted and true cell orders of each notebook."""

    metric = "kendall_tau"
    validate_computes = False

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        true_cells = [text.split() for text in as_pandas_str(answers.column(target))]
        pred_cells = [text.split() for text in as_pandas_str(aligned.column(target))]
        lengths = np.fromiter(map(len, true_cells), np.int64, count=len(true_cells))
        pred_lengths = np.fromiter(map(len, pred_cells), np.int64, count=len(pred_cells))
        ids = answers.column(self.id_column)
        wrong_length = np.flatnonzero(lengths != pred_lengths)
        if len(wrong_length):
            examples = ids.take(pa.array(wrong_length[:5])).to_pylist()
            raise InvalidSubmission(
                f"{len(wrong_length)} notebooks list a different number of cells than they have "
                f"(first: {show(examples, len(wrong_length))}): list every cell id exactly once."
            )
        notebook = np.repeat(np.arange(len(true_cells), dtype=np.int64), lengths)
        flat_true = [c for cells in true_cells for c in cells]
        flat_pred = [c for cells in pred_cells for c in cells]
        codes, uniques = pd.factorize(np.array(flat_true + flat_pred, dtype=object))
        width = np.int64(len(uniques) + 1)
        true_key = notebook * width + codes[: len(flat_true)]
        pred_key = notebook * width + codes[len(flat_true) :]
        position = np.arange(len(notebook)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        # The rank of each true cell is its position in the submitted list (MLE-bench looks the
        # answer's cells up in the submission with list.index: the first occurrence counts).
        keys, first = np.unique(pred_key, return_index=True)
        slot = np.minimum(np.searchsorted(keys, true_key), max(len(keys) - 1, 0))
        found = keys[slot] == true_key if len(keys) else np.zeros(len(true_key), bool)
        ranks = position[first[slot]] if len(keys) else np.zeros(0, np.int64)
        missing = np.flatnonzero(~found)
        if len(missing):
            bad = np.unique(notebook[missing])
            examples = ids.take(pa.array(bad[:5])).to_pylist()
            raise InvalidSubmission(
                f"{len(bad)} notebooks miss some of their cell ids or list unknown ones "
                f"(first: {show(examples, len(bad))}): list every cell id of the notebook."
            )
        return ranks, lengths

    def compute(self, prepared) -> float:
        ranks, lengths = prepared
        return kendall_tau_pooled(ranks, lengths)


GRADERS = {
    "AI4Code": CellOrderGrader(
        "AI4Code",
        id_column="id",
        target_columns=["cell_order"],
        answers="AI4Code/prepared/private/test_orders.csv",
        quirks=(
            "Ids are checked as a set plus the row count, not as sorted sequences; the outcome "
            "is the same for a test set with unique ids.",
            "Kendall tau is pooled over all notebooks (total inversions over total pairs), not "
            "averaged per notebook.",
        ),
    )
}
