"""The kind of work of the integrity app: a graded run's checks and their review
(``webapp.work`` moves it)."""

from __future__ import annotations

from webapp.integrity.models import RunCheck
from webapp.work.declarations import table
from webapp.work.lifecycle import Kind


def kinds() -> list[Kind]:
    C = RunCheck.Status
    checked, decided = (C.NOT_CHECKED, C.CLEAN, C.FLAGGED), (C.REVIEWED_OK, C.DISQUALIFIED)
    return [
        Kind(
            name="integrity_check",
            model=RunCheck,
            description="The integrity checks of a graded run and a person's review of "
            "them. Due while due_since is set (the sweeper sends it again when late, "
            "MLEBOARD_MAX_ATTEMPTS times); the status is the outcome.",
            waiting=(C.NOT_CHECKED,),
            final=(C.CLEAN, C.FLAGGED, C.REVIEWED_OK, C.DISQUALIFIED),
            transitions=table(
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
    ]
