"""Seeded runs for the integrity checks on the site: one copying a reference with its
variables renamed, one writing its submission from literals, one calling an LLM API, and
clean ones. Each is the ``code/`` of an uploaded run."""

from __future__ import annotations

import io
import zipfile

from tests.benchmark.integrity_corpus import REFERENCE, renamed

COPIED = renamed(REFERENCE)

LITERAL = """\
import pandas as pd

# The answers, typed in.
sub = pd.DataFrame({"id": [0, 1, 2, 3], "target": [0.9, 0.1, 0.8, 0.2]})
sub.to_csv("/home/submission/submission.csv", index=False)
"""

LLM_CALL = """\
import pandas as pd
from openai import OpenAI

client = OpenAI()
answer = client.chat.completions.create(
    model="gpt-4o", messages=[{"role": "user", "content": "write a model for this data"}]
)
exec(answer.choices[0].message.content)
"""

CLEAN = """\
import pandas as pd
from sklearn.linear_model import LogisticRegression

train = pd.read_csv("/home/data/train.csv")
test = pd.read_csv("/home/data/test.csv")
features = [c for c in train.columns if c not in ("id", "target")]
model = LogisticRegression(max_iter=1000).fit(train[features], train["target"])
test["target"] = model.predict_proba(test[features])[:, 1]
test[["id", "target"]].to_csv("/home/submission/submission.csv", index=False)
"""

# A second clean solution, for a competition with another target.
CLEAN_REGRESSION = """\
import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor

frame = pd.read_csv("/home/data/train.csv")
holdout = pd.read_csv("/home/data/test.csv")
columns = frame.columns.drop(["id", "target"])
booster = GradientBoostingRegressor(n_estimators=200, learning_rate=0.05, max_depth=3)
booster.fit(frame[columns].values, np.log1p(frame["target"].values))
holdout["target"] = np.expm1(booster.predict(holdout[columns].values))
holdout[["id", "target"]].to_csv("/home/submission/submission.csv", index=False)
"""


def references_zip(extra: dict[str, str] | None = None) -> bytes:
    """A reference corpus as an admin uploads it: the reference notebook as a script and
    as an .ipynb, an unrelated script, and sources.csv."""
    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": ["# A top public notebook"]},
            {"cell_type": "code", "source": REFERENCE.splitlines(keepends=True)},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    import json

    files = {
        "top-1/solution.py": REFERENCE,
        "top-2/notebook.ipynb": json.dumps(notebook),
        "sources.csv": "path,source\ntop-1/solution.py,https://www.kaggle.com/code/someone/top-1\n",
        **(extra or {}),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()
