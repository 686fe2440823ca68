"""The kinds of work of the results app: reading an upload, grading a run, refreshing an
experiment's figures and assembling a resumable upload (``webapp.work`` moves them)."""

from __future__ import annotations

from django.db.models import Q

from webapp.results.models import Experiment, PartialUpload, Run, Upload
from webapp.work.declarations import CLAIM_RESET, RESTART_RESET, table
from webapp.work.lifecycle import Kind


def kinds() -> list[Kind]:
    U, R, P = Upload.Status, Run.Status, PartialUpload.State
    return [
        Kind(
            name="upload",
            model=Upload,
            description="Reading an uploaded archive into an experiment and its runs; it stays "
            "processing while the runs are graded, and is graded when none is left.",
            waiting=(U.QUEUED,),
            running=(U.PROCESSING,),
            final=(U.GRADED, U.FAILED),
            transitions=table(
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
            transitions=table(
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
            transitions=table(
                receiving=(P.ASSEMBLING, P.EXPIRED, P.TERMINATED),
                assembling=(P.COMPLETE, P.EXPIRED),
                complete=(),
                expired=(),
                terminated=(),
            ),
            failed=P.EXPIRED,
            sweep="webapp.results.uploads.resumable.partial_uploads_sweep",
        ),
    ]
