"""mleboard's demo competitions (scikit-learn datasets), graded with strict, plain rules:
rows paired by id, every id exactly once, numbers where numbers are needed."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from graders.competitions.accuracy import AccuracyGrader
from graders.competitions.auc import RocAucGrader
from graders.competitions.columns import IdAlignedGrader, answer_labels
from graders.competitions.regression import ErrorGrader
from graders.metrics.log_loss import multiclass_log_loss
from graders.results import ErrorClass, GraderError, InvalidSubmission
from graders.validation import check_probabilities, numeric_column

WINE_CLASSES = ("class_0", "class_1", "class_2")


class DemoWineGrader(IdAlignedGrader):
    """Multiclass log loss; answers hold ``id,target`` (0, 1, 2), submissions 3 probabilities."""

    metric = "multiclass_log_loss"
    numpy_rounding = False  # scikit-learn returns a Python float here

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        probabilities = np.column_stack(
            [numeric_column(aligned, c, allow_nan=False) for c in WINE_CLASSES]
        )
        for index, name in enumerate(WINE_CLASSES):
            check_probabilities(probabilities[:, index], name)
        sums = probabilities.sum(axis=1)
        bad = ~np.isclose(sums, 1, atol=1e-6)
        if bad.any():
            raise InvalidSubmission(
                f"Each row's probabilities must sum to 1; {int(bad.sum())} rows do not.",
                kind=ErrorClass.VALUES,
            )
        target = np.asarray(answer_labels(answers, "target"), dtype=np.int64)
        if len(target) and not ((target >= 0) & (target < len(WINE_CLASSES))).all():
            raise GraderError(f"Answers of {self.competition_id} hold a target outside 0-2.")
        truth = np.zeros((len(target), len(WINE_CLASSES)))
        truth[np.arange(len(target)), target] = 1
        return truth, probabilities

    def compute(self, prepared) -> float:
        return multiclass_log_loss(*prepared)


GRADERS = {
    grader.competition_id: grader
    for grader in [
        AccuracyGrader("demo-digits", id_column="id", target_columns=["label"]),
        RocAucGrader("demo-breast-cancer", id_column="id", target_columns=["target"]),
        ErrorGrader("demo-diabetes", metric="rmse", id_column="id", target_columns=["target"]),
        DemoWineGrader("demo-wine", id_column="id", target_columns=list(WINE_CLASSES)),
    ]
}
