"""Seeded code for the integrity tests: a reference solution and variants of it."""

from __future__ import annotations

import re

REFERENCE = """\
import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold
from sklearn.metrics import roc_auc_score
import lightgbm as lgb

TRAIN = "/home/data/train.csv"
TEST = "/home/data/test.csv"


def load_data():
    train = pd.read_csv(TRAIN)
    test = pd.read_csv(TEST)
    return train, test


def add_features(frame):
    frame = frame.copy()
    frame["ratio"] = frame["income"] / (frame["debt"] + 1)
    frame["log_income"] = np.log1p(frame["income"])
    for column in ["city", "job"]:
        frame[column] = frame[column].astype("category").cat.codes
    frame["age_bucket"] = pd.cut(frame["age"], bins=[0, 25, 40, 60, 120], labels=False)
    return frame


def train_folds(train, test, features, target, seed=42):
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
    oof = np.zeros(len(train))
    predictions = np.zeros(len(test))
    for fold, (train_idx, valid_idx) in enumerate(folds.split(train, train[target])):
        x_train, y_train = train.iloc[train_idx][features], train.iloc[train_idx][target]
        x_valid, y_valid = train.iloc[valid_idx][features], train.iloc[valid_idx][target]
        model = lgb.LGBMClassifier(n_estimators=2000, learning_rate=0.02, num_leaves=31)
        model.fit(
            x_train,
            y_train,
            eval_set=[(x_valid, y_valid)],
            callbacks=[lgb.early_stopping(100, verbose=False)],
        )
        oof[valid_idx] = model.predict_proba(x_valid)[:, 1]
        predictions += model.predict_proba(test[features])[:, 1] / folds.n_splits
        print(f"fold {fold}: auc {roc_auc_score(y_valid, oof[valid_idx]):.5f}")
    print(f"overall auc {roc_auc_score(train[target], oof):.5f}")
    return predictions


def main():
    train, test = load_data()
    train = add_features(train)
    test = add_features(test)
    features = [c for c in train.columns if c not in ("id", "target")]
    predictions = train_folds(train, test, features, "target")
    submission = pd.DataFrame({"id": test["id"], "target": predictions})
    submission.to_csv("/home/submission/submission.csv", index=False)


if __name__ == "__main__":
    main()
"""

UNRELATED = '''\
import json
import os
from collections import defaultdict


class Inventory:
    """Items per shelf, with simple persistence."""

    def __init__(self, path):
        self.path = path
        self.shelves = defaultdict(list)
        if os.path.exists(path):
            with open(path) as handle:
                for shelf, items in json.load(handle).items():
                    self.shelves[shelf].extend(items)

    def add(self, shelf, item):
        if item in self.shelves[shelf]:
            raise ValueError(f"{item} already on {shelf}")
        self.shelves[shelf].append(item)

    def remove(self, shelf, item):
        try:
            self.shelves[shelf].remove(item)
        except ValueError:
            return False
        return True

    def save(self):
        with open(self.path, "w") as handle:
            json.dump(dict(self.shelves), handle, indent=2, sort_keys=True)

    def largest(self, count=3):
        ranked = sorted(self.shelves.items(), key=lambda pair: len(pair[1]), reverse=True)
        return [name for name, _ in ranked[:count]]


def parse_args(argv):
    options = {"path": "inventory.json", "verbose": False}
    while argv:
        flag = argv.pop(0)
        if flag == "--path":
            options["path"] = argv.pop(0)
        elif flag == "--verbose":
            options["verbose"] = True
        else:
            raise SystemExit(f"unknown flag {flag}")
    return options


if __name__ == "__main__":
    import sys

    settings = parse_args(sys.argv[1:])
    store = Inventory(settings["path"])
    store.add("a", "hammer")
    if settings["verbose"]:
        print(store.largest())
    store.save()
'''

_RENAMES = {
    "train": "df_tr",
    "test": "df_te",
    "frame": "d",
    "folds": "skf",
    "oof": "out_of_fold",
    "predictions": "preds",
    "model": "clf",
    "features": "cols",
    "load_data": "read_inputs",
    "add_features": "engineer",
    "train_folds": "fit_cv",
    "column": "col",
    "fold": "k",
}


def renamed(text: str) -> str:
    for old, new in _RENAMES.items():
        text = re.sub(rf"\b{old}\b", new, text)
    return text.replace("# ", "# note: ")


def reordered(text: str) -> str:
    """The top-level functions in reverse order."""
    head, *blocks = re.split(r"\n\n\n(?=def )", text)
    last = blocks[-1]
    main_block, _, tail = last.partition("\n\n\nif __name__")
    blocks[-1] = main_block
    return "\n\n\n".join([head, *reversed(blocks)]) + "\n\n\nif __name__" + tail


def partially_copied(text: str, other: str) -> str:
    """The reference's feature code and fold loop spliced into unrelated code."""
    start = text.index("def add_features")
    stop = text.index("def main")
    return other.replace("def parse_args", text[start:stop] + "\ndef parse_args")


def edited(text: str) -> str:
    """Comments, logging and an extra statement or two added."""
    text = text.replace(
        "    train, test = load_data()\n",
        "    # read everything\n    train, test = load_data()\n    print(train.shape, test.shape)\n",
    )
    return text.replace("    return frame\n", "    frame = frame.fillna(-1)\n    return frame\n")


PAIRS = {
    "identical": (REFERENCE, REFERENCE),
    "renamed": (REFERENCE, renamed(REFERENCE)),
    "reordered": (REFERENCE, reordered(REFERENCE)),
    "unrelated": (REFERENCE, UNRELATED),
    "partial": (REFERENCE, partially_copied(REFERENCE, UNRELATED)),
    "edited": (REFERENCE, edited(REFERENCE)),
}
