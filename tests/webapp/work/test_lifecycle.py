"""The declared lifecycles (``webapp.work.declarations``): consistent tables, the runner's outcomes
inside the agent run's states, moves refused off the table, the rendered docs current."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from runner import Outcome
from webapp import work
from webapp.competitions.models import Competition
from webapp.results.models import Experiment, Run
from webapp.results.services import agent_get_or_create
from webapp.runs.models import AgentRun
from webapp.work.docs import lifecycle_markdown

REPO = Path(__file__).resolve().parents[3]


def test_the_runners_outcomes_are_agent_run_states():
    states = set(AgentRun.Status.values)
    assert {o.value for o in Outcome} <= states
    assert {o.value for o in Outcome} <= set(work.kind_for("agent_run").final)


@pytest.mark.parametrize("name", list(work.kinds()))
def test_each_table_is_closed_and_covers_every_state(name):
    kind = work.kind_for(name)
    if not kind.field:
        assert kind.due_field and kind.task, "work without a status is an outbox column"
        return
    choices = {value for value, _ in kind.model._meta.get_field(kind.field).choices}
    assert set(kind.states) == choices, "every state is waiting, running or final, once"
    assert len(kind.states) == len(set(kind.states))
    assert set(kind.transitions) == choices
    for onward in kind.transitions.values():
        assert onward <= choices
    for state in kind.running:
        # Work no worker claims (a reproduction, which its launch's runs drive) may
        # start running at once, with no waiting state.
        assert kind.claims is False or state in kind.transitions[kind.waiting[0]]
    if kind.failed:
        assert kind.failed in kind.final
    assert all(kind.sources(s) for s in kind.running), "running is reached from somewhere"


def test_the_docs_show_the_declared_tables():
    """``docs/lifecycle.md`` is rendered by ``manage.py lifecycle_docs``; regenerate it with
    ``manage.py lifecycle_docs --write docs/lifecycle.md`` after changing a declaration."""
    assert (REPO / "docs" / "lifecycle.md").read_text() == lifecycle_markdown()


def test_the_command_prints_the_docs(capsys):
    call_command("lifecycle_docs")
    assert capsys.readouterr().out == lifecycle_markdown()


@pytest.fixture
def run(django_user_model):
    from webapp.competitions.services import catalogue_sync

    catalogue_sync()
    experiment = Experiment.objects.create(
        name="lifecycle",
        owner=django_user_model.objects.create_user("lea", password="pw-lea-12345"),
        source=Experiment.Source.GRADED,
        agent=agent_get_or_create("s", "m"),
    )
    return Run.objects.create(
        experiment=experiment, competition=Competition.objects.get(slug="demo-wine"), seed=0
    )


@pytest.mark.django_db
def test_a_move_off_the_table_is_refused(run):
    grading = work.kind_for("grading")
    assert work.claim(grading, run.pk, "t") and work.finish(grading, run.pk, token="t")
    # Graded never goes to failed: a late failure of another attempt cannot undo a grade.
    assert not work.fail(grading, run.pk, "late")
    run.refresh_from_db()
    assert run.status == Run.Status.GRADED and run.is_final and run.status_label == "Graded"
    with pytest.raises(ValueError):
        work.finish(grading, run.pk, Run.Status.QUEUED)


@pytest.mark.django_db
def test_retry_or_fail_releases_then_fails_past_the_budget(run, settings):
    settings.MLEBOARD_MAX_ATTEMPTS = 2
    grading = work.kind_for("grading")
    ended = []
    work.on_end("grading", lambda pks, state: ended.append((pks, state)))
    try:
        assert work.claim(grading, run.pk, "a")
        assert work.retry_or_fail(grading, run.pk, "a", "transient", error="db away") == "released"
        row = Run.objects.get(pk=run.pk)
        assert (row.status, row.claimed_by, row.dispatched_at) == ("queued", "", None)
        assert not row.is_final and ended == []
        assert work.claim(grading, run.pk, "b")
        # Only the claim's holder moves it.
        assert work.retry_or_fail(grading, run.pk, "a", "transient", error="db away") == ""
        assert work.retry_or_fail(grading, run.pk, "b", "transient", error="db away") == "failed"
        row = Run.objects.get(pk=run.pk)
        assert row.status == "failed" and "failed 2 times" in row.error and "db away" in row.error
        assert ended == [([run.pk], "failed")]
    finally:
        work.lifecycle._END_HOOKS["grading"].pop()


@pytest.mark.django_db
def test_hand_back_lets_held_work_wait_again_with_its_attempt_given_back(run, settings):
    settings.MLEBOARD_MAX_ATTEMPTS = 1
    grading = work.kind_for("grading")
    assert work.claim(grading, run.pk, "held")
    assert work.hand_back(grading, ["other", ""]) == 0
    assert work.hand_back(grading, ["held"]) == 1
    row = Run.objects.get(pk=run.pk)
    assert (row.status, row.claimed_by, row.dispatched_at, row.attempts) == ("queued", "", None, 0)
    # Its one attempt is still there: the next start claims it again.
    assert work.claim(grading, run.pk, "next") and work.finish(grading, run.pk, token="next")
    # Nothing held any more: a late hand-back moves nothing.
    assert work.hand_back(grading, ["next"]) == 0
    assert Run.objects.get(pk=run.pk).status == "graded"
