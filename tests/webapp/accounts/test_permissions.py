"""Who may act: reviewing (disqualify, reopen, check again), re-grading and cancelling
others' work, publishing and the run hosts each take their own Django permission, held by
the shipped groups (reviewers, operators); the staff flag alone allows none of them."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from tests.support import integrity_cases as cases
from tests.support.factories import FULL_DISCLOSURE
from tests.support.integrity_cases import COMPETITION, graded_upload
from webapp.competitions.models import Competition
from webapp.competitions.services import catalogue_sync
from webapp.core import roles
from webapp.integrity import services
from webapp.integrity.models import RunCheck
from webapp.results.disclosure import disclosure_update
from webapp.results.models import Experiment, Run
from webapp.runs.models import AgentRun, Launch

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


def client_for(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def api_for(user) -> Client:
    token, _ = Token.objects.get_or_create(user=user)
    return Client(HTTP_AUTHORIZATION=f"Token {token.key}")


@pytest.fixture
def flagged_run(alice):
    """alice's published experiment with a run flagged (a submission typed in)."""
    (run,) = graded_upload(alice, {COMPETITION: cases.LITERAL})
    Experiment.objects.filter(pk=run.experiment_id).update(is_published=True)
    services.run_check(run.pk)
    assert RunCheck.objects.get(run=run).status == RunCheck.Status.FLAGGED
    return run


@pytest.fixture
def queued_agent_run(alice):
    launch = Launch.objects.create(owner=alice, agent_name="dummy", competitions=[COMPETITION])
    return AgentRun.objects.create(
        launch=launch, competition=Competition.objects.get(slug=COMPETITION), seed=0
    )


# ---------------------------------------------------------------- the groups


def test_the_groups_hold_what_roles_declares():
    assert roles.sync_groups() == []  # every declared permission exists: no typo
    for name, perms in roles.GROUPS.items():
        group = Group.objects.get(name=name)
        held = {
            f"{p.content_type.app_label}.{p.codename}"
            for p in group.permissions.select_related("content_type")
        }
        assert held == set(perms), name


def test_syncing_the_groups_keeps_what_an_admin_added_and_adds_back_what_was_removed():
    reviewers = Group.objects.get(name=roles.REVIEWERS)
    extra = Permission.objects.get(codename="view_upload")
    review = Permission.objects.get(codename="review_runcheck")
    reviewers.permissions.add(extra)
    reviewers.permissions.remove(review)
    roles.sync_groups()
    assert {extra, review} <= set(reviewers.permissions.all())


@pytest.mark.django_db(transaction=True)
def test_the_groups_are_back_after_a_flush(django_db_blocker):
    """A flush (as between transactional tests) re-runs post_migrate: the groups follow."""
    from django.core.management import call_command

    call_command("flush", "--noinput", verbosity=0)
    assert set(Group.objects.values_list("name", flat=True)) >= {"reviewers", "operators"}


# ---------------------------------------------------------------- reviewing


@pytest.mark.parametrize("who", ["owner", "another", "staff"])
def test_only_reviewers_decide(flagged_run, who, alice, bob, staff_without_permissions):
    user = {"owner": alice, "another": bob, "staff": staff_without_permissions}[who]
    client = client_for(user)
    url = reverse("integrity-run", args=[flagged_run.pk])
    page = client.get(url)
    assert page.status_code == 200 and 'id="decide"' not in page.content.decode()
    for decision in ("disqualified", "reviewed_ok", "reopen", "recheck"):
        response = client.post(url, {"decision": decision, "reason": "because"})
        assert response.status_code == 403, (who, decision)
    check = RunCheck.objects.get(run=flagged_run)
    assert check.status == RunCheck.Status.FLAGGED and check.due_since is None
    assert client.get(reverse("integrity-queue")).status_code == 403


def test_a_reviewer_disqualifies_reopens_and_checks_again(flagged_run, reviewer):
    client = client_for(reviewer)
    url = reverse("integrity-run", args=[flagged_run.pk])
    assert 'id="decide"' in client.get(url).content.decode()
    assert (
        reverse("integrity-run", args=[flagged_run.pk])
        in client.get(reverse("integrity-queue")).content.decode()
    )
    client.post(url, {"decision": "disqualified", "reason": "typed the answers"})
    assert RunCheck.objects.get(run=flagged_run).status == RunCheck.Status.DISQUALIFIED
    client.post(url, {"decision": "reopen"})
    assert RunCheck.objects.get(run=flagged_run).status == RunCheck.Status.FLAGGED
    client.post(url, {"decision": "recheck"})
    assert RunCheck.objects.get(run=flagged_run).due_since is not None


def test_a_reviewer_may_not_publish_regrade_or_cancel(flagged_run, reviewer, queued_agent_run):
    api = api_for(reviewer)
    assert api.post(f"/api/experiments/{flagged_run.experiment_id}/regrade/").status_code == 403
    assert api.post(f"/api/agent-runs/{queued_agent_run.pk}/cancel/").status_code == 404
    assert api.get("/api/hosts/").status_code == 403


# ---------------------------------------------------------------- re-grading


def test_re_grading_others_work_takes_the_permission(
    flagged_run, alice, bob, staff_without_permissions, operator
):
    url = f"/api/experiments/{flagged_run.experiment_id}/regrade/"
    # Published, so everyone sees it; only its owner and operators re-grade it.
    assert api_for(bob).post(url).status_code == 403
    assert api_for(staff_without_permissions).post(url).status_code == 403
    assert Run.objects.get(pk=flagged_run.pk).status == Run.Status.GRADED
    assert api_for(operator).post(url).status_code == 202
    assert api_for(alice).post(url).status_code == 202


def test_a_private_experiment_is_not_found_by_who_may_not_see_it(alice, bob):
    (run,) = graded_upload(alice, {COMPETITION: cases.CLEAN})
    assert api_for(bob).post(f"/api/experiments/{run.experiment_id}/regrade/").status_code == 404


# ---------------------------------------------------------------- cancelling


def test_cancelling_others_runs_takes_the_permission(
    queued_agent_run, alice, bob, staff_without_permissions, operator
):
    url = f"/api/agent-runs/{queued_agent_run.pk}/cancel/"
    # A launch is private: the others do not even see it.
    assert api_for(bob).post(url).status_code == 404
    assert api_for(staff_without_permissions).post(url).status_code == 404
    assert (
        client_for(staff_without_permissions)
        .post(reverse("agent-run-cancel", args=[queued_agent_run.pk]))
        .status_code
        == 404
    )
    assert AgentRun.objects.get(pk=queued_agent_run.pk).status == AgentRun.Status.QUEUED
    # Seeing every launch (runs.view_launch) is not cancelling them.
    watcher = bob
    watcher.user_permissions.add(Permission.objects.get(codename="view_launch"))
    watcher = type(bob).objects.get(pk=bob.pk)
    assert api_for(watcher).post(url).status_code == 403
    page = client_for(watcher).get(reverse("launch-detail", args=[queued_agent_run.launch_id]))
    assert page.status_code == 200 and "cancel-run" not in page.content.decode()
    assert api_for(operator).post(url).status_code == 202
    assert AgentRun.objects.get(pk=queued_agent_run.pk).status == AgentRun.Status.CANCELLED


def test_owners_cancel_their_own_runs(queued_agent_run, alice):
    page = client_for(alice).get(reverse("launch-detail", args=[queued_agent_run.launch_id]))
    assert "cancel-run" in page.content.decode()
    response = client_for(alice).post(reverse("agent-run-cancel", args=[queued_agent_run.pk]))
    assert response.status_code == 302
    assert AgentRun.objects.get(pk=queued_agent_run.pk).status == AgentRun.Status.CANCELLED


# ---------------------------------------------------------------- publishing, the admin


def _admin_action(client, model: str, action: str, ids) -> str:
    """The page the action answers with (its messages)."""
    return client.post(
        f"/admin/results/{model}/",
        {"action": action, "_selected_action": [str(i) for i in ids], "index": 0},
        follow=True,
    ).content.decode()


def test_publishing_takes_the_permission_not_the_staff_flag(alice, django_user_model):
    (run,) = graded_upload(alice, {COMPETITION: cases.CLEAN})
    experiment = run.experiment
    # Staff who may edit experiments, but not publish them.
    editor = django_user_model.objects.create_user("ed", password="pw-ed-123", is_staff=True)
    editor.user_permissions.add(
        *Permission.objects.filter(codename__in=["change_experiment", "view_experiment"])
    )
    client = client_for(editor)
    changelist = client.get("/admin/results/experiment/").content.decode()
    assert 'value="regrade"' not in changelist and 'value="publish"' not in changelist
    _admin_action(client, "experiment", "publish", [experiment.pk])
    form = client.get(f"/admin/results/experiment/{experiment.pk}/change/").content.decode()
    assert 'name="is_published"' not in form  # shown read-only
    assert Experiment.objects.get(pk=experiment.pk).is_published is False

    admin_operator = django_user_model.objects.create_user(
        "opal", password="pw-opal-123", is_staff=True
    )
    admin_operator.groups.add(Group.objects.get(name=roles.OPERATORS))
    client = client_for(admin_operator)
    assert 'value="publish"' in client.get("/admin/results/experiment/").content.decode()
    # Not before its conditions are stated: the refusal names what is missing.
    refused = _admin_action(client, "experiment", "publish", [experiment.pk])
    assert "Not published" in refused and "vCPUs" in refused
    assert Experiment.objects.get(pk=experiment.pk).is_published is False
    disclosure_update(experiment, FULL_DISCLOSURE)
    _admin_action(client, "experiment", "publish", [experiment.pk])
    assert Experiment.objects.get(pk=experiment.pk).is_published is True


def test_staff_without_permissions_see_and_do_nothing_in_the_admin(
    flagged_run, staff_without_permissions
):
    client = client_for(staff_without_permissions)
    assert client.get("/admin/").status_code == 200
    for path in (
        "/admin/results/experiment/",
        "/admin/results/run/",
        "/admin/results/upload/",
        "/admin/integrity/runcheck/",
        "/admin/integrity/referencecorpus/",
        "/admin/integrity/scaffoldtemplate/",
        "/admin/runs/runhost/",
        "/admin/runs/launch/",
    ):
        assert client.get(path).status_code == 403, path
    _admin_action(client, "experiment", "unpublish", [flagged_run.experiment_id])
    assert Experiment.objects.get(pk=flagged_run.experiment_id).is_published is True


def test_admin_lists_hold_only_what_the_person_may_see(alice, bob, django_user_model):
    (mine,) = graded_upload(alice, {COMPETITION: cases.CLEAN})
    (theirs,) = graded_upload(bob, {COMPETITION: cases.CLEAN_REGRESSION})
    # May use the admin's run list, but sees experiments as the site's rule says.
    clerk = django_user_model.objects.create_user("clerk", password="pw-clerk-1", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_run"))
    page = client_for(clerk).get("/admin/results/run/").content.decode()
    assert mine.experiment.name not in page and theirs.experiment.name not in page
    Experiment.objects.filter(pk=mine.experiment_id).update(is_published=True)
    page = client_for(clerk).get("/admin/results/run/").content.decode()
    assert mine.experiment.name in page and theirs.experiment.name not in page
