"""The kind of work of the runs app: an agent run on a run host (``webapp.work`` moves it)."""

from __future__ import annotations

import datetime as dt

from django.db.models import Q
from django.utils import timezone

from webapp.runs.models import AgentRun
from webapp.work.declarations import CLAIM_RESET, table
from webapp.work.lifecycle import Kind
from webapp.work.outbox import heartbeat_interval


def suspect_before() -> dt.datetime:
    """A host whose last beat is older than this has missed two beats: its runs are left
    to the host-down hand-over (``webapp.runs.hosts``) rather than ended one by one."""
    return timezone.now() - dt.timedelta(seconds=2 * heartbeat_interval())


def _host_not_suspect() -> Q:
    """A silent agent run on a host that has itself gone quiet is the host-down
    hand-over's, not the sweeper's to end."""
    return ~Q(host_claim__host__heartbeat_at__lt=suspect_before())


def kinds() -> list[Kind]:
    A = AgentRun.Status
    agent_ends = (A.COMPLETED, A.TIMED_OUT, A.OUT_OF_MEMORY, A.FAILED, A.HARNESS_ERROR, A.CANCELLED)
    return [
        Kind(
            name="agent_run",
            model=AgentRun,
            description="One agent on one (competition, seed) in its container on a run "
            "host (queued on runs.cpu or runs.gpu by its resources); its outputs are then "
            "graded. A day-long run is never started twice on a living host: a silent one "
            "is ended, one whose host went down is queued again for another host.",
            waiting=(A.QUEUED,),
            running=(A.RUNNING,),
            final=agent_ends,
            transitions=table(
                queued=(A.RUNNING, A.CANCELLED, A.HARNESS_ERROR),
                running=(A.QUEUED, *agent_ends),
                **{state: () for state in agent_ends},
            ),
            done=A.COMPLETED,
            failed=A.HARNESS_ERROR,
            reason_field="message",
            cancellable=(A.QUEUED, A.RUNNING),
            reset={
                **CLAIM_RESET,
                "heartbeat_at": None,
                "started_at": None,
                "container": "",
                "gpu_ids": [],
            },
            task="webapp.runs.tasks.execute_agent_run_task",
            send_scope=Q(cancel_requested=False),
            on_silent="webapp.runs.services.ending.agent_run_end_silent",
            silent_scope=_host_not_suspect,
        ),
    ]


def agent_runs() -> Kind:
    """The agent runs' declaration, as registered."""
    from webapp import work

    return work.kind_for("agent_run")
