"""Seeded runs for the integrity checks on the site: one copying a reference with its
variables renamed, one writing its submission from literals, one calling an LLM API, and
clean ones. Each is the ``code/`` of an uploaded run."""

from __future__ import annotations

import io
import json
import zipfile

from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from tests.support import archive_builders as ab
from tests.support.integrity_corpus import REFERENCE, renamed
from webapp.competitions.models import Competition
from webapp.integrity import services
from webapp.integrity.references import (
    read_references_zip,
)
from webapp.results.models import GradeReport, Run, Upload
from webapp.results.uploads.services import upload_create, upload_process

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


COMPETITION = "spaceship-titanic"


def graded_upload(owner, codes: dict[str, str], *, medal=True, metadata=None) -> list[Run]:
    """An uploaded run group, one run per (competition, code), graded by hand (each with
    a medal unless ``medal`` is False). Returns its runs in the order given."""
    group = f"2024-10-01_run-group_{owner.username}"
    files = {f"{group}/metadata.json": json.dumps({"run_group": group, "runs": {}}).encode()}
    for index, (cid, code) in enumerate(codes.items()):
        base = f"{group}/{ab.run_id(cid, index, owner.username)}"
        files[f"{base}/submission/submission.csv"] = b"id,target\n1,0\n"
        files[f"{base}/code/solution.py"] = code.encode()
        files[f"{base}/logs/run.log"] = b"training\ndone\n"
    created = upload_create(
        owner=owner,
        uploaded_file=SimpleUploadedFile("runs.zip", ab.zip_bytes(files)),
        metadata={"scaffold": "tester", "model": owner.username, **(metadata or {})},
    )
    upload_process(created.upload.pk)
    experiment = Upload.objects.get(pk=created.upload.pk).experiment
    runs = []
    for cid in codes:
        run = Run.objects.get(experiment=experiment, competition__slug=cid)
        Run.objects.filter(pk=run.pk).update(status=Run.Status.GRADED)
        GradeReport.objects.create(
            run=run,
            experiment=experiment,
            competition=run.competition,
            seed=run.seed,
            score=0.9,
            any_medal=medal,
            bronze_medal=medal,
            above_median=True,
            submission_exists=True,
            valid_submission=True,
            created_at=timezone.now(),
        )
        runs.append(Run.objects.get(pk=run.pk))
    return runs


def add_references(cid=COMPETITION, data=None):
    entries = read_references_zip(io.BytesIO(data or references_zip()), "top notebooks")
    return services.corpus_create(Competition.objects.get(slug=cid), entries, note="top")
