from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "webapp.runs"
    label = "runs"
    verbose_name = "Agent runs"

    def ready(self) -> None:
        from webapp.liveness.services import register_source
        from webapp.runs.hosts import host_beats

        # A runs worker says it is alive through its host's heartbeat.
        register_source(host_beats)
