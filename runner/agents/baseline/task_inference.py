"""Work out a tabular competition's task from its files.

Given ``train.csv``, ``test.csv``, ``sample_submission.csv`` and ``description.md``, decide
the id column, what to predict for each submission column (a label, a probability, a
number), and which metric the description talks about. Only pandas; no model here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

# Metric names in descriptions, most specific first, and what they ask for.
METRIC_HINTS = [
    ("log_loss", r"log[\s_-]?loss|logarithmic loss|cross[\s-]?entropy"),
    ("roc_auc", r"\bauc\b|roc[\s_-]?auc|area under the (roc )?curve"),
    ("rmse", r"\brmse\b|root[\s-]mean[\s-]squared"),
    ("mae", r"\bmae\b|mean absolute error"),
    ("accuracy", r"\baccuracy\b|classification accuracy"),
    ("f1", r"\bf1\b|f-score|f1[\s-]score"),
]
MAX_CLASSES = 30
MAX_CATEGORIES = 50


class TaskError(ValueError):
    """The files do not look like a tabular task this agent can solve."""


@dataclass
class Target:
    """One thing to predict.

    ``kind`` is ``classification`` or ``regression``. For classification, ``output`` is
    ``label`` (write the class), ``proba`` (write P(positive class) in ``columns[0]``) or
    ``proba_columns`` (one probability column per class, ``column_classes`` maps column ->
    class label). ``train_column`` is the training column holding the truth.
    """

    train_column: str
    columns: list[str]
    kind: str
    output: str
    column_classes: dict[str, object] = field(default_factory=dict)


@dataclass
class Task:
    id_column: str
    targets: list[Target]
    features: list[str]
    categorical: list[str]
    metric: str | None


def metric_hint(description: str) -> str | None:
    """The metric the description names, as one of METRIC_HINTS' keys (None: no mention)."""
    text = description.lower()
    for name, pattern in METRIC_HINTS:
        if re.search(pattern, text):
            return name
    return None


def _is_classification(y: pd.Series) -> bool:
    if y.dtype == object or str(y.dtype) in ("bool", "category"):
        return True
    values = y.dropna()
    if values.empty:
        return False
    integral = bool((values == values.round()).all())
    return integral and values.nunique() <= MAX_CLASSES


def _id_column(test: pd.DataFrame, sample: pd.DataFrame) -> str:
    for column in sample.columns:
        if column in test.columns and set(sample[column]) <= set(test[column]):
            return column
    if sample.columns[0] in test.columns:
        return sample.columns[0]
    raise TaskError("no column of the sample submission identifies the test rows")


def _proba_columns(
    train: pd.DataFrame, test: pd.DataFrame, columns: list[str], id_column: str
) -> Target | None:
    """A training label column whose classes name the submission's probability columns."""
    for candidate in [c for c in train.columns if c not in test.columns and c != id_column]:
        classes = list(pd.unique(train[candidate].dropna()))
        if not 2 <= len(classes) <= MAX_CLASSES:
            continue
        mapping = {}
        for column in columns:
            for cls in classes:
                name = str(cls)
                if column == name or column.endswith(f"_{name}") or column == f"{candidate}{name}":
                    mapping[column] = cls
                    break
        if len(mapping) == len(columns):
            return Target(candidate, columns, "classification", "proba_columns", mapping)
    return None


def _wants_probability(sample_values: pd.Series, metric: str | None) -> bool:
    if metric in ("roc_auc", "log_loss"):
        return True
    values = pd.to_numeric(sample_values, errors="coerce").dropna()
    return bool(len(values)) and not bool((values == values.round()).all())


def infer_task(
    train: pd.DataFrame, test: pd.DataFrame, sample: pd.DataFrame, description: str
) -> Task:
    """The task these files describe. Raises ``TaskError`` when it cannot tell."""
    metric = metric_hint(description)
    id_column = _id_column(test, sample)
    columns = [c for c in sample.columns if c != id_column]
    if not columns:
        raise TaskError("the sample submission has no column to predict")
    targets: list[Target] = []
    if all(c in train.columns for c in columns):
        for column in columns:
            y = train[column]
            if _is_classification(y):
                binary = y.nunique() == 2
                output = (
                    "proba" if binary and _wants_probability(sample[column], metric) else "label"
                )
                targets.append(Target(column, [column], "classification", output))
            else:
                targets.append(Target(column, [column], "regression", "value"))
    else:
        target = _proba_columns(train, test, columns, id_column)
        if target is None:
            missing = [c for c in columns if c not in train.columns]
            raise TaskError(f"cannot find the training truth for columns {missing}")
        targets.append(target)
    truth = {t.train_column for t in targets}
    features, categorical = [], []
    for column in test.columns:
        if column == id_column or column in truth or column not in train.columns:
            continue
        kind = train[column].dtype
        if pd.api.types.is_bool_dtype(kind) or pd.api.types.is_numeric_dtype(kind):
            features.append(column)
        elif train[column].nunique() <= MAX_CATEGORIES:
            features.append(column)
            categorical.append(column)
        # Free text and high-cardinality strings are left out: this is a tabular baseline.
    if not features:
        raise TaskError("no usable feature column shared by train.csv and test.csv")
    return Task(id_column, targets, features, categorical, metric)
