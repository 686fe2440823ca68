"""The baseline agent: scikit-learn models chosen by cross-validation.

Steps: read the description and the CSVs, infer the task (``task_inference``), encode the
features, score a few model families with k-fold cross-validation on the metric the
description names, refit the best on all training rows, predict the test set, ask the
validation service whether the submission is well formed, and write it. If anything
fails it falls back to the sample submission, so the run still ends with a valid file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent))
from task_inference import Target, Task, infer_task  # noqa: E402

DATA_DIR = Path(os.environ.get("DATA_DIR", "/home/data"))
SUBMISSION_DIR = Path(os.environ.get("SUBMISSION_DIR", "/home/submission"))
LOGS_DIR = Path(os.environ.get("LOGS_DIR", "/home/logs"))
CODE_DIR = Path(os.environ.get("CODE_DIR", "/home/code"))
VALIDATE_SCRIPT = os.environ.get("VALIDATE_SCRIPT", "/home/validate_submission.sh")
SEED = int(os.environ.get("SEED", "0"))
FOLDS = int(os.environ.get("BASELINE_CV_FOLDS", "5"))
MAX_CV_ROWS = int(os.environ.get("BASELINE_MAX_CV_ROWS", "20000"))
N_JOBS = max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1, 8))


def say(message: str) -> None:
    print(f"[baseline {time.strftime('%H:%M:%S')}] {message}", flush=True)


def encode(train: pd.DataFrame, test: pd.DataFrame, task: Task) -> tuple[np.ndarray, np.ndarray]:
    """Feature matrices: numbers as floats, categories as shared integer codes (NaN kept)."""
    x_train = pd.DataFrame(index=train.index)
    x_test = pd.DataFrame(index=test.index)
    for column in task.features:
        if column in task.categorical:
            both = pd.concat([train[column], test[column]]).astype("category")
            codes = both.cat.codes.replace(-1, np.nan).astype(float)
            x_train[column] = codes.iloc[: len(train)].to_numpy()
            x_test[column] = codes.iloc[len(train) :].to_numpy()
        else:
            x_train[column] = pd.to_numeric(train[column], errors="coerce").astype(float)
            x_test[column] = pd.to_numeric(test[column], errors="coerce").astype(float)
    return x_train.to_numpy(), x_test.to_numpy()


def candidates(kind: str) -> dict:
    if kind == "classification":
        return {
            "logistic_regression": make_pipeline(
                SimpleImputer(strategy="median"),
                StandardScaler(),
                LogisticRegression(max_iter=2000),
            ),
            "random_forest": make_pipeline(
                SimpleImputer(strategy="median"),
                RandomForestClassifier(n_estimators=200, n_jobs=N_JOBS, random_state=SEED),
            ),
            "hist_gradient_boosting": HistGradientBoostingClassifier(random_state=SEED),
        }
    return {
        "ridge": make_pipeline(SimpleImputer(strategy="median"), StandardScaler(), Ridge()),
        "random_forest": make_pipeline(
            SimpleImputer(strategy="median"),
            RandomForestRegressor(n_estimators=200, n_jobs=N_JOBS, random_state=SEED),
        ),
        "hist_gradient_boosting": HistGradientBoostingRegressor(random_state=SEED),
    }


def scoring(target: Target, metric: str | None) -> str:
    """The scikit-learn scorer for this target (higher is better for all of them)."""
    if target.kind == "regression":
        return "neg_mean_absolute_error" if metric == "mae" else "neg_root_mean_squared_error"
    if target.output == "proba":
        return "neg_log_loss" if metric == "log_loss" else "roc_auc"
    if target.output == "proba_columns":
        return "neg_log_loss"
    return "f1_macro" if metric == "f1" else "accuracy"


def choose_model(x: np.ndarray, y: pd.Series, target: Target, metric: str | None, report: dict):
    """Cross-validate each candidate; return the best (unfitted) model and its name."""
    rng = np.random.default_rng(SEED)
    rows = np.arange(len(y))
    if len(rows) > MAX_CV_ROWS:
        rows = np.sort(rng.choice(rows, MAX_CV_ROWS, replace=False))
    x_cv, y_cv = x[rows], y.iloc[rows]
    folds = max(2, min(FOLDS, len(y_cv)))
    splitter = KFold(folds, shuffle=True, random_state=SEED)
    if target.kind == "classification" and y_cv.value_counts().min() >= folds:
        splitter = StratifiedKFold(folds, shuffle=True, random_state=SEED)
    scorer = scoring(target, metric)
    best_name, best_score, models = None, -np.inf, candidates(target.kind)
    for name, model in models.items():
        started = time.monotonic()
        try:
            scores = cross_val_score(model, x_cv, y_cv, cv=splitter, scoring=scorer, n_jobs=1)
            score = float(np.mean(scores))
        except Exception as exc:  # a model that cannot fit this data is just skipped
            say(f"{target.train_column}: {name} failed in cross-validation: {exc}")
            continue
        report.setdefault("cv", {}).setdefault(target.train_column, {})[name] = {
            "scoring": scorer,
            "mean": score,
            "seconds": round(time.monotonic() - started, 2),
        }
        say(f"{target.train_column}: {name} {scorer} = {score:.5f}")
        if np.isfinite(score) and score > best_score:
            best_name, best_score = name, score
    if best_name is None:
        raise RuntimeError(f"no model could be fitted for {target.train_column}")
    return models[best_name], best_name


def predict_target(x_train, x_test, train: pd.DataFrame, target: Target, task: Task, report):
    """Columns for this target's part of the submission, in test-row order."""
    y = train[target.train_column]
    known = y.notna().to_numpy()
    model, name = choose_model(x_train[known], y[known], target, task.metric, report)
    report.setdefault("chosen", {})[target.train_column] = name
    model.fit(x_train[known], y[known])
    if target.kind == "regression":
        return {target.columns[0]: model.predict(x_test)}
    if target.output == "label":
        return {target.columns[0]: model.predict(x_test)}
    proba = model.predict_proba(x_test)
    classes = list(model.classes_)
    if target.output == "proba":
        positive = 1 if 1 in classes else classes[-1]
        return {target.columns[0]: proba[:, classes.index(positive)]}
    return {
        column: proba[:, classes.index(cls)] if cls in classes else np.zeros(len(x_test))
        for column, cls in target.column_classes.items()
    }


def build_submission(data_dir: Path, report: dict) -> pd.DataFrame:
    description_path = data_dir / "description.md"
    description = description_path.read_text() if description_path.exists() else ""
    train = pd.read_csv(data_dir / "train.csv")
    test = pd.read_csv(data_dir / "test.csv")
    sample = pd.read_csv(data_dir / "sample_submission.csv")
    say(f"train {train.shape}, test {test.shape}, sample submission columns {list(sample.columns)}")
    task = infer_task(train, test, sample, description)
    report["task"] = {
        "id_column": task.id_column,
        "metric_hint": task.metric,
        "targets": [
            {"column": t.train_column, "kind": t.kind, "output": t.output} for t in task.targets
        ],
        "n_features": len(task.features),
        "categorical": task.categorical,
    }
    say(f"task: {json.dumps(report['task'])}")
    x_train, x_test = encode(train, test, task)
    predictions = pd.DataFrame({task.id_column: test[task.id_column].to_numpy()})
    for target in task.targets:
        for column, values in predict_target(x_train, x_test, train, target, task, report).items():
            predictions[column] = values
    if set(sample[task.id_column]) <= set(predictions[task.id_column]):
        # Keep the sample's row order and ids.
        predictions = sample[[task.id_column]].merge(predictions, on=task.id_column, how="left")
    return predictions[list(sample.columns)]


def validate(path: Path) -> tuple[bool | None, str]:
    """Ask the validation service; (None, why) when it cannot be asked."""
    if not os.path.exists(VALIDATE_SCRIPT):
        return None, "no validation script"
    try:
        done = subprocess.run(
            [VALIDATE_SCRIPT, str(path)], capture_output=True, text=True, timeout=300
        )
        answer = json.loads(done.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        return None, f"validation unavailable: {exc}"
    if "valid" in answer:
        return bool(answer["valid"]), str(answer.get("result", ""))
    return None, str(answer.get("error", answer))


def main() -> int:
    started = time.monotonic()
    report: dict = {"seed": SEED}
    target = SUBMISSION_DIR / "submission.csv"
    SUBMISSION_DIR.mkdir(parents=True, exist_ok=True)
    try:
        submission = build_submission(DATA_DIR, report)
        submission.to_csv(target, index=False)
        valid, message = validate(target)
        report["validation"] = {"valid": valid, "message": message}
        say(f"validation: {message}")
        if valid is False:
            raise RuntimeError(f"the validation service rejected the submission: {message}")
    except Exception as exc:
        traceback.print_exc()
        report["fallback"] = f"{type(exc).__name__}: {exc}"
        say("falling back to the sample submission")
        shutil.copyfile(DATA_DIR / "sample_submission.csv", target)
    report["seconds"] = round(time.monotonic() - started, 2)
    try:
        LOGS_DIR.mkdir(parents=True, exist_ok=True)
        (LOGS_DIR / "baseline_report.json").write_text(json.dumps(report, indent=2, default=str))
        CODE_DIR.mkdir(parents=True, exist_ok=True)
        for name in ("main.py", "task_inference.py"):
            shutil.copyfile(Path(__file__).resolve().parent / name, CODE_DIR / name)
    except OSError as exc:
        say(f"could not save the report or code: {exc}")
    say(f"done in {report['seconds']}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
