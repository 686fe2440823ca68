"""An uploaded experiment that says what its runs cost and how they went, for the tests of
the token, failure and time-scaling views: demo-wine and demo-digits over three seeds as
MLE-bench run-group folders, with per-run tokens in metadata.json, MLE-bench's run.log
lines, mleboard's validation_calls.jsonl and snapshots."""

from __future__ import annotations

import json

from tests.support import archive_builders as ab
from webapp.results.grading.aggregates import experiment_aggregate_refresh
from webapp.results.grading.services import run_grade
from webapp.results.models import Run, Upload
from webapp.results.uploads.services import upload_create, upload_process

COMPETITIONS = ("demo-wine", "demo-digits")
SEEDS = 3
TIME_LIMIT_H = 1.0
# Per (competition, seed): tokens declared, seconds the run took, validation calls, what
# it submitted ("good", "sample", "bad-columns", "none"), and whether the harness failed.
PLAN = {
    ("demo-wine", 0): (120_000, 30_000, 3300, 4, "good", True),
    ("demo-wine", 1): (90_000, 20_000, 200, 0, "bad-columns", True),  # stopped early
    ("demo-wine", 2): (150_000, 41_000, 3600, 2, "bad-columns", True),  # validated, invalid
    ("demo-digits", 0): (60_000, 9_000, 1800, 1, "good", True),
    ("demo-digits", 1): (70_000, 12_000, 2400, 0, "sample", True),
    ("demo-digits", 2): (5_000, 1_000, 10, 0, "none", False),  # a harness failure
}


def _files(build) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for seed in range(SEEDS):
        group = f"2024-10-0{seed + 1}T00-00-00-GMT_run-group_aide"
        runs = {}
        for cid in COMPETITIONS:
            prompt, completion, seconds, calls, what, success = PLAN[(cid, seed)]
            rid = ab.run_id(cid, 0, group)
            runs[rid] = {
                "success": success,
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
            }
            base = f"{group}/{rid}/"
            good = build.submissions["linear"][0][cid].read_bytes()
            sample = build.submissions["sample-submission"][0][cid].read_bytes()
            if what == "good":
                files[base + "submission/submission.csv"] = good
            elif what == "sample":
                files[base + "submission/submission.csv"] = sample
            elif what == "bad-columns":
                header, _, rest = good.partition(b"\n")
                files[base + "submission/submission.csv"] = (
                    header.replace(b"id", b"row") + b"\n" + rest
                )
            files[base + "run.log"] = (
                f"[Worker 0] Running seed {seed} for {cid}\nRun completed in {seconds} seconds.\n"
            ).encode()
            files[base + "validation_calls.jsonl"] = b"".join(
                json.dumps({"status": 200, "valid": True}).encode() + b"\n" for _ in range(calls)
            )
            files[base + "logs/agent.log"] = b"agent log\n"
            files[base + "code/train.py"] = b"print('hello')\n"
            if what == "good":  # first the sample, then the good one: the curve rises
                files[base + "snapshots/600/submission.csv"] = sample
                files[base + "snapshots/1800/submission.csv"] = good
        files[f"{group}/metadata.json"] = json.dumps(
            {"run_group": group, "created_at": "2024-10-01T00-00-00-GMT", "runs": runs}
        ).encode()
    return files


def upload_costed_experiment(owner, build, *, metadata=None, grade: bool = True, note: str = ""):
    """The upload above, read and (``grade``) graded in this process; its experiment.
    ``note`` makes another archive of the same runs (a note file beside them)."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    meta = {
        "scaffold": "aide",
        "model": "gpt-4o",
        "hardware": "1xA10",
        "runtime_hours": TIME_LIMIT_H,
        "internet_access": False,
        **(metadata or {}),
    }
    created = upload_create(
        owner=owner,
        uploaded_file=SimpleUploadedFile(
            "runs.zip",
            ab.zip_bytes({**_files(build), **({"NOTE.txt": note.encode()} if note else {})}),
        ),
        metadata=meta,
    )
    upload_process(created.upload.pk)
    upload = Upload.objects.get(pk=created.upload.pk)
    assert upload.experiment_id, upload.error
    if grade:
        for pk in Run.objects.filter(experiment_id=upload.experiment_id).values_list(
            "pk", flat=True
        ):
            run_grade(pk)
        experiment_aggregate_refresh(upload.experiment_id)
    return upload.experiment
