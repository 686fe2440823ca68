"""Why a run was flagged, stored as facts and told per viewer (webapp/integrity/reasons.py),
and the migration that turned the sentences earlier checks stored into those facts."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from tests.support import integrity_cases as cases
from tests.support.integrity_cases import COMPETITION, add_references, graded_upload
from tests.support.integrity_corpus import renamed
from tests.support.planted import upload_run
from webapp.competitions.services import catalogue_sync
from webapp.integrity import services
from webapp.integrity.models import RunCheck
from webapp.integrity.reasons import Viewer, reasons_for
from webapp.results.models import Experiment, Run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


@pytest.fixture
def copied(alice, bob):
    """bob's run copies alice's unpublished run and a reference notebook."""
    add_references()
    (theirs,) = graded_upload(alice, {COMPETITION: cases.CLEAN}, metadata={"name": "secret-x"})
    ours = upload_run(
        bob,
        "bob.zip",
        "2024-10-02_run-group_bob",
        {"code/a.py": cases.COPIED, "code/b.py": renamed(cases.CLEAN)},
        {"scaffold": "tester", "model": "bob"},
    )
    return theirs, services.run_check(ours.pk)


def test_each_viewer_reads_what_they_may(copied, alice, bob, reviewer, staff_without_permissions):
    theirs, check = copied
    kinds = [fact["kind"] for fact in check.reasons]
    assert kinds == ["reference", "peer"], check.reasons
    for who in (None, bob, staff_without_permissions):
        text = " | ".join(reasons_for(check, Viewer(who)))
        assert "similar to the reference code" in text and "top-1" not in text
        assert "a run you cannot see" in text and "secret-x" not in text
        assert f"run {theirs.pk}" not in text
    text = " | ".join(reasons_for(check, Viewer(reviewer)))
    assert "reference top-1/solution.py" in text
    assert f"another owner's run {theirs.pk} of secret-x by alice" in text
    # alice sees her run named, not the reference.
    text = " | ".join(reasons_for(check, Viewer(alice)))
    assert f"run {theirs.pk} of secret-x by alice" in text and "top-1" not in text
    # Once she publishes, everyone does.
    Experiment.objects.filter(pk=theirs.experiment_id).update(is_published=True)
    assert "secret-x" in " | ".join(reasons_for(check, Viewer(None)))


def test_a_deleted_peer_is_said_so_to_reviewers_and_unseen_to_others(copied, bob, reviewer):
    theirs, check = copied
    Run.objects.filter(pk=theirs.pk).delete()
    check = RunCheck.objects.get(pk=check.pk)
    assert "since deleted" in " | ".join(reasons_for(check, Viewer(reviewer)))
    assert "a run you cannot see" in " | ".join(reasons_for(check, Viewer(bob)))


def test_stored_sentences_become_facts(alice):
    """The migration reads each format earlier versions wrote; numbers come from the
    check's own fields when it kept them."""
    migration = importlib.import_module(
        "webapp.integrity.migrations.0002_review_permission_and_reason_facts"
    )
    (run,) = graded_upload(alice, {COMPETITION: cases.CLEAN})
    check = RunCheck.objects.create(
        run=run,
        similarity=0.934,
        peer_similarity=0.71,
        threshold=0.6,
        reasons=[
            "93% similar to reference top-1/solution.py (threshold 60%)",
            "71% similar to run 40 of another owner (A's secret experiment)",
            "hand written submission: 2 findings",
            "external llm: 1 finding",
            "LLM review says yes to external llm",
            "something no version wrote (secret)",
        ],
    )
    migration.sentences_to_facts(apps, None)
    assert RunCheck.objects.get(pk=check.pk).reasons == [
        {"kind": "reference", "similarity": 0.934, "threshold": 0.6, "path": "top-1/solution.py"},
        {"kind": "peer", "similarity": 0.71, "threshold": 0.6, "run": 40},
        {"kind": "rule", "check": "hand_written_submission", "findings": 2},
        {"kind": "rule", "check": "external_llm", "findings": 1},
        {"kind": "llm", "question": "external_llm"},
        {"kind": "unknown"},
    ]
    text = " | ".join(reasons_for(RunCheck.objects.get(pk=check.pk), Viewer(None)))
    assert "secret" not in text and "run 40" not in text
    # And back, for a rollback: sentences without names.
    migration.facts_to_sentences(apps, None)
    back = RunCheck.objects.get(pk=check.pk).reasons
    assert back[1] == "71% similar to run 40 of another owner" and all(
        isinstance(r, str) for r in back
    )
