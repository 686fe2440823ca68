"""The demo: four small competitions built from data scikit-learn ships, in MLE-bench's
prepared layout, each with a leaderboard made by a *synthetic reference population* of
models mleboard trains itself (never presented as humans), and the submissions of a few
simple reference agents over several seeds.

Everything here is deterministic for a given seed and takes a few seconds, so a fresh
machine gets a site with real content and no download. The reference populations' scores
are trained once and shipped (``data/demo_populations.json``).
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

DEMO_COMPETITIONS = ("demo-breast-cancer", "demo-diabetes", "demo-digits", "demo-wine")
POPULATION_SIZE = 150  # Kaggle's 100-249 band: gold is the top 10.

_DESCRIPTIONS = {
    "demo-digits": (
        "Classify 8x8 images of handwritten digits (0-9). Each row of train.csv holds the 64 "
        "pixel intensities (pixel_0 ... pixel_63) and the label. Predict `label` for every id "
        "in test.csv. Metric: accuracy."
    ),
    "demo-breast-cancer": (
        "Predict whether a breast mass is malignant (target = 1) from 30 features computed "
        "from a digitised image of a fine needle aspirate. Submit a probability in [0, 1] for "
        "`target` for every id in test.csv. Metric: ROC AUC."
    ),
    "demo-diabetes": (
        "Predict a quantitative measure of diabetes progression one year after baseline from "
        "ten baseline variables. Submit `target` for every id in test.csv. Metric: RMSE "
        "(lower is better)."
    ),
    "demo-wine": (
        "Predict the cultivar (0, 1 or 2) of a wine from 13 chemical measurements. Submit the "
        "probabilities class_0, class_1, class_2 (each row summing to 1) for every id in "
        "test.csv. Metric: multi-class log loss (lower is better)."
    ),
}


@dataclass
class DemoTask:
    competition_id: str
    kind: str  # "classification" | "binary" | "regression" | "multiclass_proba"
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    feature_names: list[str]
    test_ids: list[str]


@dataclass
class DemoBuild:
    data_dir: Path
    leaderboards: dict[str, Path] = field(default_factory=dict)
    # agent name -> seed -> competition id -> submission path
    submissions: dict[str, dict[int, dict[str, Path]]] = field(default_factory=dict)


def _load(competition_id: str):
    from sklearn import datasets

    loader = {
        "demo-digits": datasets.load_digits,
        "demo-breast-cancer": datasets.load_breast_cancer,
        "demo-diabetes": datasets.load_diabetes,
        "demo-wine": datasets.load_wine,
    }[competition_id]
    bunch = loader()
    names = (
        [f"pixel_{i}" for i in range(bunch.data.shape[1])]
        if competition_id == "demo-digits"
        else [str(n).replace(" ", "_") for n in bunch.feature_names]
    )
    return bunch.data, bunch.target, names


def demo_task(competition_id: str) -> DemoTask:
    """Split the dataset like MLE-bench re-splits Kaggle's train set: a held-out 20% test
    set with a fixed random state, ids assigned after shuffling so they carry no order."""
    from sklearn.model_selection import train_test_split

    x, y, names = _load(competition_id)
    kind = {
        "demo-digits": "classification",
        "demo-breast-cancer": "binary",
        "demo-diabetes": "regression",
        "demo-wine": "multiclass_proba",
    }[competition_id]
    stratify = None if kind == "regression" else y
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=0, stratify=stratify
    )
    rng = np.random.default_rng(0)
    test_ids = [f"t{n:05d}" for n in rng.permutation(100000)[: len(x_test)]]
    return DemoTask(competition_id, kind, x_train, y_train, x_test, y_test, names, test_ids)


def _write_csv(path: Path, header: list[str], rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def _fmt(value) -> str:
    return repr(float(value)) if isinstance(value, float | np.floating) else str(value)


def _prediction_rows(task: DemoTask, prediction: np.ndarray) -> tuple[list[str], list[list[str]]]:
    if task.kind == "multiclass_proba":
        header = ["id", "class_0", "class_1", "class_2"]
        rows = [
            [i, *(_fmt(p) for p in probs)]
            for i, probs in zip(task.test_ids, prediction, strict=True)
        ]
    elif task.kind == "classification":
        header = ["id", "label"]
        rows = [[i, str(int(p))] for i, p in zip(task.test_ids, prediction, strict=True)]
    else:
        header = ["id", "target"]
        rows = [[i, _fmt(p)] for i, p in zip(task.test_ids, prediction, strict=True)]
    return header, rows


def write_prepared(task: DemoTask, data_dir: Path) -> None:
    """Write ``<data_dir>/<id>/prepared/{public,private}`` like MLE-bench's prepare step."""
    root = data_dir / task.competition_id / "prepared"
    public, private = root / "public", root / "private"
    target_header = ["label"] if task.kind == "classification" else ["target"]
    train_ids = [f"r{n:05d}" for n in range(len(task.x_train))]
    _write_csv(
        public / "train.csv",
        ["id", *task.feature_names, *target_header],
        [
            [i, *(_fmt(v) for v in row), _fmt(t) if task.kind == "regression" else str(int(t))]
            for i, row, t in zip(train_ids, task.x_train, task.y_train, strict=True)
        ],
    )
    _write_csv(
        public / "test.csv",
        ["id", *task.feature_names],
        [[i, *(_fmt(v) for v in row)] for i, row in zip(task.test_ids, task.x_test, strict=True)],
    )
    _write_csv(
        private / "test.csv",
        ["id", *target_header],
        [
            [i, _fmt(t) if task.kind == "regression" else str(int(t))]
            for i, t in zip(task.test_ids, task.y_test, strict=True)
        ],
    )
    header, rows = _prediction_rows(task, _sample_prediction(task))
    _write_csv(public / "sample_submission.csv", header, rows)
    (public / "description.md").write_text(description(task.competition_id))


def description(competition_id: str) -> str:
    """The demo competition's ``description.md``, as written into its public folder."""
    return (
        f"# {competition_id}\n\n{_DESCRIPTIONS[competition_id]}\n\n"
        "This is an mleboard demo competition built from a dataset that scikit-learn ships. "
        "Its leaderboard is a synthetic reference population of models, not human teams.\n"
    )


def obfuscated_description(competition_id: str) -> str:
    """The description without the competition's identity, as MLE-bench's
    ``description_obfuscated.md`` are: no name, no source of the data."""
    return f"# Task\n\n{_DESCRIPTIONS[competition_id]}\n"


def _sample_prediction(task: DemoTask) -> np.ndarray:
    """What a sample submission holds: a constant, valid prediction."""
    n = len(task.x_test)
    if task.kind == "multiclass_proba":
        return np.full((n, 3), 1 / 3)
    if task.kind == "classification":
        return np.zeros(n, dtype=int)
    if task.kind == "binary":
        return np.full(n, 0.5)
    return np.full(n, float(np.mean(task.y_train)))


def _model(kind: str, family: str, strength: float, seed: int, n_train: int):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    regression = kind == "regression"
    if family == "linear":
        est = (
            Ridge(alpha=10 ** (3 * (1 - strength) - 1))
            if regression
            else LogisticRegression(C=10 ** (4 * strength - 3), max_iter=2000)
        )
        return make_pipeline(StandardScaler(), est)
    if family == "knn":
        k = min(n_train, max(1, int(round(1 + 30 * (1 - strength)))))
        est = (
            KNeighborsRegressor(n_neighbors=k)
            if regression
            else KNeighborsClassifier(n_neighbors=k)
        )
        return make_pipeline(StandardScaler(), est)
    depth = max(1, int(round(1 + 9 * strength)))
    cls = RandomForestRegressor if regression else RandomForestClassifier
    return cls(n_estimators=15, max_depth=depth, random_state=seed, n_jobs=1)


def predict(
    task: DemoTask,
    family: str,
    *,
    strength: float = 1.0,
    seed: int = 0,
    train_fraction: float = 1.0,
    noise: float = 0.0,
) -> np.ndarray:
    """Train one model of ``family`` (linear | knn | forest) on a subsample of the train
    set and predict the test set in the competition's submission form."""
    rng = np.random.default_rng(seed)
    n = len(task.x_train)
    take = rng.choice(n, size=max(10, int(n * train_fraction)), replace=False)
    x, y = task.x_train[take], task.y_train[take]
    if noise:
        x = x + rng.normal(0, noise * (x.std(axis=0) + 1e-9), size=x.shape)
    model = _model(task.kind, family, strength, seed, len(x)).fit(x, y)
    if task.kind == "regression":
        return model.predict(task.x_test)
    if task.kind == "classification":
        return model.predict(task.x_test)
    proba = model.predict_proba(task.x_test)
    if task.kind == "binary":
        return proba[:, 1]
    full = np.zeros((len(task.x_test), 3))
    full[:, model.classes_.astype(int)] = proba
    return full


def _population_score(task: DemoTask, prediction: np.ndarray) -> float:
    from sklearn import metrics

    if task.kind == "classification":
        return float(metrics.accuracy_score(task.y_test, prediction))
    if task.kind == "binary":
        return float(metrics.roc_auc_score(task.y_test, prediction))
    if task.kind == "regression":
        return float(metrics.root_mean_squared_error(task.y_test, prediction))
    return float(metrics.log_loss(task.y_test, prediction, labels=[0, 1, 2]))


def reference_population_scores(task: DemoTask, size: int = POPULATION_SIZE) -> list[float]:
    """Scores of ``size`` reference models of varied family, capacity, data and noise on
    the private test set, rounded to 5 decimals like graded scores."""
    rng = np.random.default_rng(1234)
    scores = []
    families = ("linear", "knn", "forest")
    for team in range(size):
        family = families[team % 3]
        strength = float(rng.uniform(0.3, 1.0))
        fraction = float(rng.uniform(0.25, 1.0))
        noise = float(rng.choice([0.0, 0.0, 0.0, 0.2, 0.6]))
        prediction = predict(
            task, family, strength=strength, seed=team, train_fraction=fraction, noise=noise
        )
        scores.append(round(_population_score(task, prediction), 5))
    return scores


# The reference populations, trained once and shipped: 600 models are most of what building
# the demo costs, and their scores never change for a given seed and library version.
# ``python -m benchmark.demo --write-populations`` trains them again into this file;
# tests/benchmark/test_demo_populations.py keeps it equal to a fresh training.
POPULATIONS_FILE = Path(__file__).resolve().parent / "data" / "demo_populations.json"


@functools.cache
def _shipped_populations() -> dict[str, list[float]]:
    shipped = json.loads(POPULATIONS_FILE.read_text(encoding="utf-8"))
    return {cid: list(scores) for cid, scores in shipped["scores"].items()}


def population_scores(competition_id: str) -> list[float]:
    """The reference population's scores of a demo competition (as
    ``reference_population_scores`` trains them), from the shipped file."""
    return list(_shipped_populations()[competition_id])


def write_populations(path: Path = POPULATIONS_FILE) -> None:
    """Train every demo competition's reference population and write their scores."""
    scores = {cid: reference_population_scores(demo_task(cid)) for cid in DEMO_COMPETITIONS}
    about = (
        "Scores of the demo's synthetic reference populations "
        "(benchmark.demo.reference_population_scores), written by "
        "`python -m benchmark.demo --write-populations`."
    )
    lines = [f"  {json.dumps(cid)}: {json.dumps(scores[cid])}" for cid in DEMO_COMPETITIONS]
    text = (
        f'{{\n "about": {json.dumps(about)},\n "size": {POPULATION_SIZE},\n "scores": {{\n'
        + ",\n".join(lines)
        + "\n }\n}\n"
    )
    path.write_text(text, encoding="utf-8")


def write_leaderboard(path: Path, scores: list[float], lower_is_better: bool) -> None:
    """Write a population as MLE-bench's ``leaderboard.csv``, best first."""
    ordered = sorted(scores, reverse=not lower_is_better)
    _write_csv(
        path,
        ["scoreNullable", "teamId", "hasTeamName", "submissionDate", "score", "hasScore"],
        [[repr(s), 900000 + i, "False", "", repr(s), "True"] for i, s in enumerate(ordered)],
    )


# Reference agents of the demo: a name, how it predicts, and how many seeds.
REFERENCE_AGENTS = {
    "sample-submission": None,
    "linear": ("linear", 0.6),
    "random-forest": ("forest", 0.8),
}


def build_demo(data_dir: Path, *, seeds: int = 3, competitions=DEMO_COMPETITIONS) -> DemoBuild:
    """Build the demo competitions, their synthetic leaderboards (``<id>/leaderboard.csv``)
    and the reference agents' submissions under ``data_dir``."""
    data_dir = Path(data_dir)
    build = DemoBuild(data_dir=data_dir)
    lower = {"demo-diabetes": True, "demo-wine": True}
    for competition_id in competitions:
        task = demo_task(competition_id)
        write_prepared(task, data_dir)
        board = data_dir / competition_id / "leaderboard.csv"
        write_leaderboard(
            board, population_scores(competition_id), lower.get(competition_id, False)
        )
        build.leaderboards[competition_id] = board
        for agent, recipe in REFERENCE_AGENTS.items():
            for seed in range(seeds):
                if recipe is None:
                    prediction = _sample_prediction(task)
                else:
                    family, strength = recipe
                    prediction = predict(
                        task, family, strength=strength, seed=100 + seed, train_fraction=0.6
                    )
                header, rows = _prediction_rows(task, prediction)
                path = (
                    data_dir
                    / "_submissions"
                    / agent
                    / f"seed{seed}"
                    / competition_id
                    / "submission.csv"
                )
                _write_csv(path, header, rows)
                build.submissions.setdefault(agent, {}).setdefault(seed, {})[competition_id] = path
    return build


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The demo's reference populations.")
    parser.add_argument(
        "--write-populations",
        action="store_true",
        help=f"train them again and write their scores to {POPULATIONS_FILE.name}",
    )
    args = parser.parse_args(argv)
    if not args.write_populations:
        parser.error("nothing to do: give --write-populations")
    write_populations()
    print(f"wrote {POPULATIONS_FILE}")


if __name__ == "__main__":
    main()
