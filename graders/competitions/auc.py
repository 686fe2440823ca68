"""Competitions scored by ROC AUC and its relatives (column means, ALASKA2's weighted AUC,
Jigsaw's bias AUC) and by lwlrap (freesound), which also ranks scores."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from graders.competitions.columns import IdAlignedGrader, answer_labels
from graders.metrics.ranked_lists import lwlrap
from graders.metrics.roc_auc import (
    alaska_weighted_auc,
    jigsaw_bias_auc,
    mean_columnwise_roc_auc,
    roc_auc,
)
from graders.results import InvalidSubmission
from graders.validation import (
    answer_numbers,
    check_finite,
    check_probabilities,
    numeric_column,
    require_columns,
    require_row_count,
)


def _scores(table: pa.Table, name: str) -> np.ndarray:
    """Finite scores (NaN and infinity make scikit-learn's ROC functions fail)."""
    return numeric_column(table, name, allow_nan=False, allow_inf=False)


class RocAucGrader(IdAlignedGrader):
    """Binary ROC AUC with MLE-bench's shared helper: scores must be probabilities in [0, 1]."""

    metric = "roc_auc"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        self.check_columns(submission)
        target = self.target_columns[0]
        require_row_count(submission, answers.num_rows)
        # The range check comes before the id check in MLE-bench; NaN passes it but then
        # fails inside scikit-learn, so both are reported here.
        scores = numeric_column(submission, target, allow_nan=True)
        check_probabilities(scores, target)
        aligned = self.aligned(submission, answers)
        return np.asarray(answer_labels(answers, target)), _scores(aligned, target)

    def compute(self, prepared) -> float:
        return roc_auc(*prepared)


class ColumnwiseAucGrader(IdAlignedGrader):
    """Mean over class columns of each column's ROC AUC.

    ``probabilities``: whether each column must lie in [0, 1] (ranzcr uses the shared
    AUC helper per class; the others accept any real scores).
    """

    metric = "mean_columnwise_roc_auc"

    def __init__(self, *args, probabilities: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.probabilities = probabilities

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        scores = np.column_stack([self._column(aligned, c) for c in self.target_columns])
        truth = np.column_stack(
            [np.asarray(answer_labels(answers, c)) for c in self.target_columns]
        )
        return truth, scores

    def _column(self, table: pa.Table, name: str) -> np.ndarray:
        values = numeric_column(table, name, allow_nan=True)
        if self.probabilities:
            check_probabilities(values, name)
        check_finite(values, name)
        return values

    def compute(self, prepared) -> float:
        return mean_columnwise_roc_auc(*prepared)


class ToxicCommentGrader(ColumnwiseAucGrader):
    """Jigsaw toxic comments: every non-id submission column is paired by position with the
    answers' label columns; answer rows labelled -1 (unscored) are left out."""

    def check_columns(self, submission: pa.Table) -> None:
        require_columns(submission, self.submission_columns)
        others = [c for c in submission.column_names if c != self.id_column]
        if len(others) != len(self.target_columns):
            extra = [c for c in others if c not in self.target_columns]
            raise InvalidSubmission(
                f"Submission must have only '{self.id_column}' and the "
                f"{len(self.target_columns)} label columns (MLE-bench scores every other "
                f"column by position); remove: {', '.join(extra)}."
            )

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        others = [c for c in aligned.column_names if c != self.id_column]
        truth = np.column_stack(
            [np.asarray(answer_labels(answers, c)) for c in self.target_columns]
        )
        keep = truth.sum(axis=1) >= 0
        scores = np.column_stack([self._column(aligned, c) for c in others])
        return truth[keep], scores[keep]


class AlaskaGrader(IdAlignedGrader):
    """ALASKA2's weighted AUC on any real-valued score (no [0, 1] check)."""

    metric = "weighted_roc_auc"

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        target = self.target_columns[0]
        truth = answer_numbers(answers, target)
        return truth, _scores(aligned, target)

    def compute(self, prepared) -> float:
        return alaska_weighted_auc(*prepared)


JIGSAW_IDENTITIES = (
    "male",
    "female",
    "homosexual_gay_or_lesbian",
    "christian",
    "jewish",
    "muslim",
    "black",
    "white",
    "psychiatric_or_mental_illness",
)


class BiasAucGrader(IdAlignedGrader):
    """Jigsaw unintended bias: predictions, targets and identities are binarised at 0.5."""

    metric = "jigsaw_bias_auc"

    def check_columns(self, submission: pa.Table) -> None:
        names = set(submission.column_names)
        require_columns(submission, [self.id_column])
        if "prediction" in names and "toxicity" in names:
            raise InvalidSubmission(
                "Submission has both 'prediction' and 'toxicity' columns: keep only 'prediction'."
            )
        if "prediction" not in names and "toxicity" not in names:
            raise InvalidSubmission("Submission is missing the 'prediction' column.")

    def prepare(self, submission: pa.Table, answers: pa.Table):
        aligned = self.aligned(submission, answers)
        column = "prediction" if "prediction" in aligned.column_names else "toxicity"
        # NaN >= 0.5 is False: an empty prediction counts as non-toxic, as in MLE-bench.
        predicted = numeric_column(aligned, column, allow_nan=True)
        toxic = answer_numbers(answers, "toxicity", allow_nan=True)
        identities = np.column_stack(
            [answer_numbers(answers, c, allow_nan=True) for c in JIGSAW_IDENTITIES]
        )
        with np.errstate(invalid="ignore"):
            return (
                (toxic >= 0.5).astype(np.int64),
                (predicted >= 0.5).astype(np.int64),
                (identities >= 0.5).astype(np.int64),
            )

    def compute(self, prepared) -> float:
        return jigsaw_bias_auc(*prepared)


class LwlrapGrader(IdAlignedGrader):
    """freesound: fname first, then exactly the answers' class columns in the same order."""

    metric = "lwlrap"

    def __init__(self, competition_id: str, **kwargs):
        super().__init__(competition_id, id_column="fname", target_columns=(), **kwargs)

    def check_columns(self, submission: pa.Table) -> None:
        names = submission.column_names
        if not names or names[0] != "fname":
            raise InvalidSubmission("The first column of the submission must be 'fname'.")

    def prepare(self, submission: pa.Table, answers: pa.Table):
        classes = answers.column_names[1:]
        if submission.column_names[1:] != classes:
            missing = [c for c in classes if c not in submission.column_names]
            hint = f" Missing: {', '.join(missing[:5])}." if missing else ""
            raise InvalidSubmission(
                f"After 'fname', the submission must have the {len(classes)} class columns "
                f"in the sample submission's order.{hint}"
            )
        aligned = self.aligned(submission, answers)
        scores = np.column_stack([_scores(aligned, c) for c in classes])
        truth = np.column_stack([answer_numbers(answers, c) for c in classes])
        return truth, scores

    def compute(self, prepared) -> float:
        return lwlrap(*prepared)


def _auc(competition_id: str, id_column: str, target: str, answers: str = "test.csv", **kw):
    return RocAucGrader(
        competition_id,
        id_column=id_column,
        target_columns=[target],
        answers=f"{competition_id}/prepared/private/{answers}",
        **kw,
    )


_RANZCR_CLASSES = (
    "ETT - Abnormal",
    "ETT - Borderline",
    "ETT - Normal",
    "NGT - Abnormal",
    "NGT - Borderline",
    "NGT - Incompletely Imaged",
    "NGT - Normal",
    "CVC - Abnormal",
    "CVC - Borderline",
)

GRADERS = {
    grader.competition_id: grader
    for grader in [
        _auc("aerial-cactus-identification", "id", "has_cactus"),
        _auc(
            "detecting-insults-in-social-commentary",
            "Comment",
            "Insult",
            quirks=("Rows are matched by the comment text itself (the Comment column).",),
        ),
        _auc("histopathologic-cancer-detection", "id", "label", "answers.csv"),
        _auc("invasive-species-monitoring", "name", "invasive", "answers.csv"),
        _auc(
            "mlsp-2013-birds",
            "Id",
            "Probability",
            "answers.csv",
            quirks=("One AUC over all (recording, species) rows pooled, not a mean per species.",),
        ),
        _auc("random-acts-of-pizza", "request_id", "requester_received_pizza"),
        _auc("rsna-miccai-brain-tumor-radiogenomic-classification", "BraTS21ID", "MGMT_value"),
        _auc("seti-breakthrough-listen", "id", "target"),
        _auc("siim-isic-melanoma-classification", "image_name", "target"),
        _auc("tabular-playground-series-may-2022", "id", "target"),
        _auc("the-icml-2013-whale-challenge-right-whale-redux", "clip", "probability"),
        ToxicCommentGrader(
            "jigsaw-toxic-comment-classification-challenge",
            id_column="id",
            target_columns=[
                "toxic",
                "severe_toxic",
                "obscene",
                "threat",
                "insult",
                "identity_hate",
            ],
            quirks=(
                "Every column other than id is scored by position against the answers' label "
                "columns: the six labels must appear in the sample submission's order.",
                "Answer rows labelled -1 (unscored in the original competition) are left out.",
                "Scores need not be probabilities; any real numbers rank the same.",
            ),
        ),
        ColumnwiseAucGrader(
            "plant-pathology-2020-fgvc7",
            id_column="image_id",
            target_columns=["healthy", "multiple_diseases", "rust", "scab"],
            allow_extra_columns=False,
        ),
        ColumnwiseAucGrader(
            "playground-series-s3e18",
            id_column="id",
            target_columns=["EC1", "EC2"],
            quirks=("Scores need not be probabilities; any real numbers rank the same.",),
        ),
        ColumnwiseAucGrader(
            "ranzcr-clip-catheter-line-classification",
            id_column="StudyInstanceUID",
            target_columns=list(_RANZCR_CLASSES),
            probabilities=True,
            quirks=("Only 9 of the 11 classes are scored (CVC - Normal and Swan Ganz are not).",),
        ),
        AlaskaGrader(
            "alaska2-image-steganalysis",
            id_column="Id",
            target_columns=["Label"],
            quirks=("Label may be any real-valued score; it is not limited to [0, 1].",),
        ),
        BiasAucGrader(
            "jigsaw-unintended-bias-in-toxicity-classification",
            id_column="id",
            target_columns=["prediction"],
            check_row_count=False,
            quirks=(
                "Predictions, targets and identity columns are thresholded at 0.5 before every "
                "AUC, so only the predicted class matters, not the ranking of scores.",
                "An empty prediction counts as non-toxic.",
                "A column named 'toxicity' is accepted in place of 'prediction'.",
            ),
        ),
        LwlrapGrader("freesound-audio-tagging-2019"),
    ]
}
