"""The kind of work of the competitions app: measuring a model's familiarity with a
competition's texts (``webapp.work`` moves it)."""

from __future__ import annotations

from webapp.competitions.models import Familiarity
from webapp.work.declarations import CLAIM_RESET, RESTART_RESET, table
from webapp.work.lifecycle import Kind


def kinds() -> list[Kind]:
    F = Familiarity.Status
    return [
        Kind(
            name="familiarity",
            model=Familiarity,
            description="Measuring a base model's familiarity with a competition's texts.",
            waiting=(F.QUEUED,),
            running=(F.RUNNING,),
            final=(F.DONE, F.FAILED),
            transitions=table(
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
    ]
