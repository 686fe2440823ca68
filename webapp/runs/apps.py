from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "webapp.runs"
    label = "runs"
    verbose_name = "Agent runs"

    def ready(self) -> None:
        from webapp import work
        from webapp.liveness.services import register_source
        from webapp.results import extensions
        from webapp.runs import kinds, pages, snapshots
        from webapp.runs.hosts import host_beats

        work.declare(*kinds.kinds())
        # A runs worker says it is alive through its host's heartbeat.
        register_source(host_beats)
        # An upload's snapshots: stored from its run folders, graded with each run, drawn
        # on the experiment page.
        extensions.on_runs_uploaded(snapshots.uploaded_snapshots_create)
        extensions.graded_along(
            extensions.GradedAlong(
                grade=snapshots.uploaded_snapshots_grades, store=snapshots.snapshots_store
            )
        )
        extensions.experiment_figure("time_figure", pages.time_scaling_figure)
