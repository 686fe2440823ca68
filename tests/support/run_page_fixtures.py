"""Runs with files for the run-page tests: an uploaded AIDE run (its journal under
``logs/``), built with ``archive_builders``, and an agent run's output folder."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from tests.support import archive_builders as ab
from tests.support.journals import synthetic_journal
from webapp.results.models import GradeReport, Run, Upload
from webapp.results.uploads.services import upload_create, upload_process

COMPETITION = "spaceship-titanic"
RUN_GROUP = "2024-10-01_run-group_aide"


def run_log(lines: int = 3000) -> bytes:
    body = [f"step {i}: loss={1 / (i + 1):.5f}" for i in range(lines)]
    body[1234] = "step 1234: NEEDLE found the best model"
    body[2000] = "x" * 5000 + " a very long line that must wrap NEEDLE"
    return ("\n".join(body) + "\n").encode()


def aide_upload(owner, *, nodes: int = 250, journal: bytes | None = None) -> Run:
    """An uploaded run group with one AIDE run: submission, logs (run.log, a nested
    journal.json), code; graded by hand. Returns its Run."""
    files = ab.run_group_files(RUN_GROUP, [COMPETITION])
    run_dir = next(k for k in files if k.endswith("/logs/run.log")).rsplit("/logs/", 1)[0]
    files[f"{run_dir}/logs/run.log"] = run_log()
    files[f"{run_dir}/logs/aide/journal.json"] = (
        journal if journal is not None else json.dumps(synthetic_journal(nodes)).encode()
    )
    files[f"{run_dir}/code/train.py"] = b"import pandas as pd\n\ndef main():\n    return 42\n"
    files[f"{run_dir}/submission/submission.csv"] = (
        "PassengerId,Transported\n"
        + "".join(f"{i:04d}_01,{'True' if i % 2 else 'False'}\n" for i in range(500))
    ).encode()
    created = upload_create(
        owner=owner,
        uploaded_file=SimpleUploadedFile("runs.zip", ab.zip_bytes(files)),
        metadata={"scaffold": "aide", "model": "gpt-4o"},
    )
    upload_process(created.upload.pk)
    upload = Upload.objects.get(pk=created.upload.pk)
    run = Run.objects.get(experiment=upload.experiment)
    GradeReport.objects.create(
        run=run,
        experiment=run.experiment,
        competition=run.competition,
        seed=run.seed,
        score=0.80123,
        gold_threshold=0.82,
        silver_threshold=0.81,
        bronze_threshold=0.805,
        median_threshold=0.79,
        above_median=True,
        submission_exists=True,
        valid_submission=True,
        percentile=71.5,
        created_at=timezone.now(),
    )
    return run


def agent_run_with_output(owner, competition_id: str = COMPETITION):
    """A finished AgentRun whose output folder holds run.log, a JSON-lines event log in
    the OpenHands style, code and a submission."""
    from webapp.competitions.models import Competition
    from webapp.runs.models import AgentRun, Launch

    launch = Launch.objects.create(owner=owner, agent_name="dummy", competitions=[competition_id])
    run = AgentRun.objects.create(
        launch=launch,
        competition=Competition.objects.get(slug=competition_id),
        seed=0,
        status=AgentRun.Status.COMPLETED,
        validation_counts={"answered": 3, "rate_limited": 1, "too_large": 0, "errors": 0},
    )
    output = Path(settings.MEDIA_ROOT) / "agent-runs" / str(run.pk)
    ab.write_file(output / "run.log", b"starting\nvalidation answered: ok\ndone\n")
    events = [
        {
            "action": "run",
            "args": {"command": "python train.py"},
            "timestamp": "2026-01-01T00:00:00",
        },
        {"observation": "run", "content": "accuracy 0.8", "timestamp": "2026-01-01T00:01:00"},
        {"action": "finish", "message": "wrote submission.csv"},
    ]
    ab.write_file(
        output / "logs" / "events.jsonl", "".join(json.dumps(e) + "\n" for e in events).encode()
    )
    ab.write_file(output / "code" / "train.py", b"print('train')\n")
    ab.write_file(output / "submission" / "submission.csv", b"id,y\n1,0\n2,1\n")
    run.output_dir = str(output)
    run.save(update_fields=["output_dir"])
    return run
