"""The kinds of work of submitted agents: a submission's review and offline build, and a
reproduction (``webapp.work`` moves them; the sweeper ends each state past its deadline)."""

from __future__ import annotations

from django.db.models import Q

from webapp.agentsubs.models import AgentSubmission, Reproduction
from webapp.work.declarations import CLAIM_RESET, table
from webapp.work.lifecycle import Kind


def kinds() -> list[Kind]:
    S = AgentSubmission.Status
    R = Reproduction.Status
    return [
        Kind(
            name="agent_build",
            model=AgentSubmission,
            description="A submitted agent: waits for a person's review (failed past "
            "MLEBOARD_AGENT_REVIEW_DAYS), then, approved, is built on a run host with no "
            "network (sent again while it waits; failed past MLEBOARD_AGENT_BUILD_DEADLINE_S "
            "or its attempts), and ends built or refused with the reason.",
            waiting=(S.APPROVED, S.SUBMITTED),
            running=(S.BUILDING,),
            final=(S.BUILT, S.REFUSED, S.FAILED),
            transitions=table(
                submitted=(S.APPROVED, S.REFUSED, S.FAILED),
                approved=(S.BUILDING, S.FAILED),
                building=(S.APPROVED, S.BUILT, S.REFUSED, S.FAILED),
                built=(),
                refused=(),
                failed=(),
            ),
            done=S.BUILT,
            failed=S.FAILED,
            reason_field="reason",
            reset=CLAIM_RESET,
            task="webapp.agentsubs.tasks.build_agent_task",
            send_scope=Q(status=S.APPROVED),
            sweep="webapp.agentsubs.services.agents_sweep",
            messages={
                "silent": "its build stopped answering {attempts} times; approve it again "
                "by submitting it again",
                "transient": "the engine failed {attempts} times building it: {error}",
            },
        ),
        Kind(
            name="agent_reproduction",
            model=Reproduction,
            description="A built agent run over a split × seeds by its launch: done once "
            "every run has ended and been graded (the verdict stored), failed past its "
            "deadline (the time limit for each run, plus an hour).",
            running=(R.REPRODUCING,),
            final=(R.DONE, R.FAILED),
            # Created reproducing (its launch's runs are queued with it); the loop is the
            # sweeper finding it not yet settled.
            transitions=table(reproducing=(R.REPRODUCING, R.DONE, R.FAILED), done=(), failed=()),
            done=R.DONE,
            failed=R.FAILED,
            reason_field="error",
            sweep="webapp.agentsubs.reproductions.reproductions_sweep",
        ),
    ]
