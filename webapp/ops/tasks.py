"""The sweeper's periodic task (beat sends it every ``MLEBOARD_SWEEP_INTERVAL_S``)."""

from celery import shared_task


@shared_task(name="webapp.ops.tasks.sweep_task")
def sweep_task() -> dict:
    from webapp.ops.sweeper import sweep

    return sweep().as_dict()
