"""A tiny prepared competition on disk, laid out as the runner reads one."""

from __future__ import annotations

import csv
from pathlib import Path

COMPETITION = "demo-breast-cancer"


DEMO_DESCRIPTIONS = {
    "demo-breast-cancer": "Predict whether a breast mass is malignant (target = 1). Submit a "
    "probability for `target` for every id in test.csv. Metric: ROC AUC.",
    "demo-digits": "Classify 8x8 images of handwritten digits. Predict `label` for every id in "
    "test.csv. Metric: accuracy.",
    "demo-diabetes": "Predict disease progression. Submit `target` for every id in test.csv. "
    "Metric: RMSE (lower is better).",
    "demo-wine": "Predict the cultivar (0, 1 or 2) of a wine. Submit the probabilities class_0, "
    "class_1, class_2 for every id in test.csv. Metric: multi-class log loss.",
}


def write_demo(data_dir: Path, competition: str = COMPETITION, canary: str | None = None) -> Path:
    """MLE-bench's prepared layout for a demo competition from scikit-learn's bundled data
    (every fifth row held out as the test set; answers in ``private/test.csv``).

    With ``canary``, the private answers carry that string (in a column and a file) so that
    a test can search for it from inside the agent's container.
    """
    from sklearn import datasets

    loader = {
        "demo-breast-cancer": datasets.load_breast_cancer,
        "demo-digits": datasets.load_digits,
        "demo-diabetes": datasets.load_diabetes,
        "demo-wine": datasets.load_wine,
    }[competition]
    bunch = loader()
    if competition == "demo-digits":
        names = [f"pixel_{i}" for i in range(bunch.data.shape[1])]
    else:
        names = [str(n).replace(" ", "_") for n in bunch.feature_names]
    target = "label" if competition == "demo-digits" else "target"
    rows = list(zip(bunch.data.tolist(), bunch.target.tolist(), strict=True))
    test_rows, train_rows = rows[::5], [r for i, r in enumerate(rows) if i % 5]
    public = data_dir / competition / "prepared" / "public"
    private = data_dir / competition / "prepared" / "private"
    public.mkdir(parents=True)
    private.mkdir(parents=True)

    def write(path: Path, header: list[str], body: list[list]) -> None:
        with path.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            writer.writerows(body)

    write(
        public / "train.csv",
        ["id", *names, target],
        [[f"r{i}", *x, y] for i, (x, y) in enumerate(train_rows)],
    )
    write(
        public / "test.csv", ["id", *names], [[f"t{i}", *x] for i, (x, _) in enumerate(test_rows)]
    )
    ids = [f"t{i}" for i in range(len(test_rows))]
    if competition == "demo-wine":
        sample = (["id", "class_0", "class_1", "class_2"], [[i, 1 / 3, 1 / 3, 1 / 3] for i in ids])
    elif competition == "demo-digits":
        sample = (["id", "label"], [[i, 0] for i in ids])
    elif competition == "demo-diabetes":
        sample = (["id", "target"], [[i, 150.0] for i in ids])
    else:
        sample = (["id", "target"], [[i, 0.5] for i in ids])
    write(public / "sample_submission.csv", *sample)
    (public / "description.md").write_text(f"# {competition}\n\n{DEMO_DESCRIPTIONS[competition]}\n")
    answers_header = ["id", target] + (["canary"] if canary else [])
    write(
        private / "test.csv",
        answers_header,
        [[i, y] + ([canary] if canary else []) for i, (_, y) in zip(ids, test_rows, strict=True)],
    )
    if canary:
        (private / "canary.txt").write_text(canary)
    return data_dir


def write_breast_cancer(data_dir: Path, canary: str | None = None) -> Path:
    """``write_demo`` for demo-breast-cancer."""
    return write_demo(data_dir, COMPETITION, canary)
