"""Private work with markers planted in every name, file and reference: alice's
unpublished experiment, her upload and agent run, and the competition's reference code.
Tests walk every route as each person and look for the markers."""

from __future__ import annotations

import io
import json
import zipfile

from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from tests.support import archive_builders as ab
from tests.support import integrity_cases as cases
from tests.support.integrity_corpus import REFERENCE, renamed
from tests.support.run_page_fixtures import agent_run_with_output
from webapp.competitions.models import Competition, KnownIssue
from webapp.competitions.services import catalogue_sync
from webapp.integrity import services
from webapp.integrity.models import RunCheck
from webapp.integrity.references import read_references_zip
from webapp.results.models import Experiment, GradeReport, Run, Upload
from webapp.results.uploads.services import upload_create, upload_process

# Markers of alice's private experiment (reviewers see every experiment), of her upload
# and her agent run (hers alone among the people walking), and of the reference code
# (reviewers' material).
COMPETITION = "spaceship-titanic"
OWNER = "alice_privmarkuser"  # her user name: whose an experiment is, is private too


EXPERIMENT = [
    "privmarkuser",
    "PRIVMARKEXP",
    "PRIVMARKSCAFFOLD",
    "PRIVMARKMODEL",
    "PRIVMARKGROUP",
    "privmark_solution",
    "PRIVMARKCODE",
    "PRIVMARKLOG",
]


HERS = ["PRIVMARKUPLOAD", "PRIVMARKAGENTLOG"]


REFERENCES = ["REFMARKPATH", "REFMARKSOURCE", "REFMARKCODE", "REFMARKNOTE", "REFMARKARCHIVE"]


def upload_run(owner, archive_name: str, group: str, files: dict[str, str], metadata: dict) -> Run:
    """One uploaded run on COMPETITION with ``files`` (paths inside the run's folder),
    graded by hand with a medal."""
    base = f"{group}/{ab.run_id(COMPETITION, 0, owner.username)}"
    archive = {f"{group}/metadata.json": json.dumps({"run_group": group, "runs": {}}).encode()}
    archive[f"{base}/submission/submission.csv"] = b"PassengerId,Transported\n0001_01,True\n"
    archive.update({f"{base}/{path}": text.encode() for path, text in files.items()})
    created = upload_create(
        owner=owner,
        uploaded_file=SimpleUploadedFile(archive_name, ab.zip_bytes(archive)),
        metadata=metadata,
    )
    upload_process(created.upload.pk)
    experiment = Upload.objects.get(pk=created.upload.pk).experiment
    run = Run.objects.get(experiment=experiment)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.GRADED)
    GradeReport.objects.create(
        run=run,
        experiment=experiment,
        competition=run.competition,
        seed=run.seed,
        score=0.9,
        any_medal=True,
        bronze_medal=True,
        above_median=True,
        submission_exists=True,
        valid_submission=True,
        created_at=timezone.now(),
    )
    return Run.objects.get(pk=run.pk)


def plant(django_user_model, settings):
    """Private markers planted in every name, file and reference of alice's private work
    and of the reference code; returns the people and what is theirs."""
    catalogue_sync()
    users = {
        name: django_user_model.objects.create_user(username, password=f"pw-{name}-123")
        for name, username in (
            ("alice", OWNER),
            ("bob", "bob"),
            ("carol", "carol"),
            ("dave", "dave"),
        )
    }
    users["reviewer"] = django_user_model.objects.create_user(
        "rita", password="pw-rita-123", is_staff=True
    )
    users["reviewer"].groups.add(Group.objects.get(name="reviewers"))
    users["staff"] = django_user_model.objects.create_user(
        "stan", password="pw-stan-123", is_staff=True
    )

    # The competition's reference code, every name and text marked.
    references = io.BytesIO()
    with zipfile.ZipFile(references, "w") as archive:
        archive.writestr("REFMARKPATH/solution.py", REFERENCE + "\n# REFMARKCODE\n")
        archive.writestr(
            "sources.csv",
            "path,source\nREFMARKPATH/solution.py,https://refmark.example/REFMARKSOURCE\n",
        )
    services.corpus_create(
        Competition.objects.get(slug=COMPETITION),
        read_references_zip(io.BytesIO(references.getvalue()), "REFMARKNOTE"),
        source_name="REFMARKARCHIVE.zip",
        note="REFMARKNOTE",
    )

    # alice's unpublished experiment, and an agent run of hers.
    alice_run = upload_run(
        users["alice"],
        "PRIVMARKUPLOAD.zip",
        "2024-10-01_run-group_PRIVMARKGROUP",
        {
            "code/privmark_solution.py": cases.CLEAN + "\n# PRIVMARKCODE\n",
            "logs/run.log": "PRIVMARKLOG: training\n",
        },
        {"scaffold": "PRIVMARKSCAFFOLD", "model": "PRIVMARKMODEL", "name": "PRIVMARKEXP"},
    )
    agent_run = agent_run_with_output(users["alice"])
    ab.write_file(
        __import__("pathlib").Path(agent_run.output_dir) / "logs" / "PRIVMARKAGENT.log",
        b"PRIVMARKAGENTLOG\n",
    )

    # bob's published run copies alice's code and the reference (names changed).
    bob_run = upload_run(
        users["bob"],
        "bob-runs.zip",
        "2024-10-02_run-group_bob",
        {
            "code/copy.py": renamed(cases.CLEAN),
            "code/ref_copy.py": renamed(REFERENCE),
            "logs/run.log": "training\n",
        },
        {"scaffold": "tester", "model": "bob-model", "name": "bob's published experiment"},
    )
    Experiment.objects.filter(pk=bob_run.experiment_id).update(is_published=True)
    services.run_check(alice_run.pk)
    check = services.run_check(bob_run.pk)
    assert {fact["kind"] for fact in check.reasons} == {"reference", "peer"}, check.reasons
    assert check.peer_run_id == alice_run.pk

    # The corrections log names her experiment: a reviewer disqualifies her run, and a
    # known issue on the competition moves both experiments' figures.
    services.run_check_decide(
        services.run_check_of(alice_run).pk,
        decision=RunCheck.Status.DISQUALIFIED,
        reason="the same code as another run",
        user=users["reviewer"],
    )
    KnownIssue.objects.create(
        competition=Competition.objects.get(slug=COMPETITION),
        kind=KnownIssue.Kind.LEAKAGE,
        note="the test labels leak",
    )

    upload = Upload.objects.get(experiment_id=alice_run.experiment_id)
    return {
        "users": users,
        "alice_run": alice_run,
        "bob_run": bob_run,
        "agent_run": agent_run,
        # The addresses of her pages are markers too: a link is a leak.
        "experiment": EXPERIMENT
        + [
            f"/experiments/{alice_run.experiment_id}/",
            f"/runs/result/{alice_run.pk}/",
            f"/integrity/runs/{alice_run.pk}/",
            f"/api/runs/{alice_run.pk}/",
        ],
        "hers": HERS
        + [
            f"/runs/agent/{agent_run.pk}/",
            f"/runs/{agent_run.launch_id}/",
            f"/uploads/{upload.pk}/",
        ],
        "files": [
            "code/privmark_solution.py",
            "logs/run.log",
            "code/copy.py",
            "code/ref_copy.py",
            "submission/submission.csv",
            "run.log",
            "logs/PRIVMARKAGENT.log",
            "logs/events.jsonl",
            "code/train.py",
        ],
    }
