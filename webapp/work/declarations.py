"""Every kind of work mleboard does, declared once. The sweeper, pages, the API and
``docs/lifecycle.md`` (``manage.py lifecycle_docs``) read these; ``webapp.work.lifecycle``
moves rows only along ``transitions``.

A restart (a person sends an archive again, re-grades, asks again) is a move too, so it is
in the table: "final" says no worker has anything left to do, not that nothing may follow.
"""

from __future__ import annotations

from django.apps import apps
from django.db.models import Q

from webapp.work.lifecycle import Kind, dotted


def _table(**moves: tuple[str, ...]) -> dict[str, frozenset[str]]:
    return {state: frozenset(onward) for state, onward in moves.items()}


# Cleared whenever a claimed row waits again: the claim, and the send (so the sweeper
# sends it again at once unless the caller says when).
CLAIM_RESET = {"claimed_by": "", "dispatched_at": None}
# Cleared in addition when a person starts work over: the outcome and the budget.
RESTART_RESET = {"error": "", "attempts": 0}


def _host_not_suspect() -> Q:
    """A silent agent run on a host that has itself gone quiet is the host-down
    hand-over's (``webapp.runs.hosts``), not the sweeper's to end."""
    return ~Q(host_claim__host__heartbeat_at__lt=dotted("webapp.runs.hosts.suspect_before")())


def declared() -> list[Kind]:
    # Found through the app registry: the apps import webapp.work, not the other way.
    Familiarity = apps.get_model("competitions", "Familiarity")
    RunCheck = apps.get_model("integrity", "RunCheck")
    Experiment, PartialUpload, Run, Upload = (
        apps.get_model("results", name) for name in ("Experiment", "PartialUpload", "Run", "Upload")
    )
    AgentRun = apps.get_model("runs", "AgentRun")

    U, R, A, F = Upload.Status, Run.Status, AgentRun.Status, Familiarity.Status
    C, P = RunCheck.Status, PartialUpload.State
    checked, decided = (C.NOT_CHECKED, C.CLEAN, C.FLAGGED), (C.REVIEWED_OK, C.DISQUALIFIED)
    agent_ends = (A.COMPLETED, A.TIMED_OUT, A.OUT_OF_MEMORY, A.FAILED, A.HARNESS_ERROR, A.CANCELLED)
    return [
        Kind(
            name="upload",
            model=Upload,
            description="Reading an uploaded archive into an experiment and its runs; it stays "
            "processing while the runs are graded, and is graded when none is left.",
            waiting=(U.QUEUED,),
            running=(U.PROCESSING,),
            final=(U.GRADED, U.FAILED),
            transitions=_table(
                queued=(U.PROCESSING, U.FAILED),
                processing=(U.QUEUED, U.GRADED, U.FAILED),
                graded=(U.PROCESSING,),  # re-graded
                failed=(U.QUEUED, U.PROCESSING),  # sent again; its failed runs re-graded
            ),
            done=U.GRADED,
            failed=U.FAILED,
            reset=CLAIM_RESET,
            restart_reset=RESTART_RESET,
            task="webapp.results.tasks.process_upload_task",
            # Being read (no experiment yet): once it has one, its runs are the work.
            silent_scope=Q(experiment__isnull=True),
            messages={
                "silent": "reading the upload was interrupted {attempts} times (its worker "
                "stopped answering); send the archive again to retry",
                "transient": "the upload could not be read after {attempts} attempts (the "
                "database or the storage kept failing); send the archive again to retry",
            },
        ),
        Kind(
            name="grading",
            model=Run,
            description="Grading one (competition, seed) of an experiment with the real "
            "grader and ranking it on the competition's private leaderboard.",
            waiting=(R.QUEUED,),
            running=(R.RUNNING,),
            final=(R.GRADED, R.FAILED),
            transitions=_table(
                queued=(R.RUNNING, R.FAILED),
                running=(R.QUEUED, R.GRADED, R.FAILED),
                graded=(R.QUEUED,),  # re-graded
                failed=(R.QUEUED,),  # re-graded
            ),
            done=R.GRADED,
            failed=R.FAILED,
            reset=CLAIM_RESET,
            restart_reset=RESTART_RESET,
            task="webapp.results.tasks.grade_run_task",
            messages={
                "silent": "grading was interrupted {attempts} times (its worker stopped "
                "answering); re-grade to try again",
                "transient": "grading failed {attempts} times for a transient reason "
                "({error}); re-grade to try again",
            },
        ),
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
            transitions=_table(
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
            on_silent="webapp.runs.services.agent_run_end_silent",
            silent_scope=_host_not_suspect,
        ),
        Kind(
            name="familiarity",
            model=Familiarity,
            description="Measuring a base model's familiarity with a competition's texts.",
            waiting=(F.QUEUED,),
            running=(F.RUNNING,),
            final=(F.DONE, F.FAILED),
            transitions=_table(
                queued=(F.RUNNING,),
                running=(F.QUEUED, F.DONE, F.FAILED),
                done=(),
                failed=(F.QUEUED,),  # asked again
            ),
            done=F.DONE,
            failed=F.FAILED,
            reset=CLAIM_RESET,
            restart_reset=RESTART_RESET,
            task="webapp.competitions.tasks.measure_familiarity_task",
            messages={
                "silent": "measuring familiarity was interrupted {attempts} times (its worker "
                "stopped answering); ask again with manage.py compute_familiarity",
            },
        ),
        Kind(
            name="integrity_check",
            model=RunCheck,
            description="The integrity checks of a graded run and a person's review of "
            "them. Due while due_since is set (the sweeper sends it again when late, "
            "MLEBOARD_MAX_ATTEMPTS times); the status is the outcome.",
            waiting=(C.NOT_CHECKED,),
            final=(C.CLEAN, C.FLAGGED, C.REVIEWED_OK, C.DISQUALIFIED),
            transitions=_table(
                # A check ends clean, flagged, or not checked (nothing stored to check).
                not_checked=(*checked, C.DISQUALIFIED),
                clean=(*checked, *decided),
                flagged=(*checked, *decided),
                # A decision stays through a new check and may change; reopened, the
                # findings decide again.
                reviewed_ok=(*decided, C.CLEAN, C.FLAGGED),
                disqualified=(*decided, C.CLEAN, C.FLAGGED),
            ),
            task="webapp.integrity.tasks.check_run_task",
            due_field="due_since",
            sweep="webapp.integrity.services.sweep_checks",
        ),
        Kind(
            name="figures",
            model=Experiment,
            description="Recomputing an experiment's figures after its reports or checks "
            "changed. Due while figures_due_since is set; no status.",
            field="",
            task="webapp.results.tasks.refresh_experiment_aggregate_task",
            due_field="figures_due_since",
            sweep="webapp.ops.sweeper.resend_figures",
        ),
        Kind(
            name="resumable_upload",
            model=PartialUpload,
            description="An archive arriving in pieces over tus; complete, it becomes an "
            "upload. Receiving ends after MLEBOARD_UPLOAD_PARTIAL_TTL_S without a byte; an "
            "assembly silent for MLEBOARD_STALE_AFTER_S is assembled again by the sweeper.",
            field="state",
            waiting=(P.RECEIVING,),
            running=(P.ASSEMBLING,),
            final=(P.COMPLETE, P.EXPIRED, P.TERMINATED),
            transitions=_table(
                receiving=(P.ASSEMBLING, P.EXPIRED, P.TERMINATED),
                assembling=(P.COMPLETE, P.EXPIRED),
                complete=(),
                expired=(),
                terminated=(),
            ),
            failed=P.EXPIRED,
            sweep="webapp.results.resumable.partial_uploads_sweep",
        ),
    ]
