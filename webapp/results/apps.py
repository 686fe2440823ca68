from django.apps import AppConfig


class ResultsConfig(AppConfig):
    name = "webapp.results"
    label = "results"
    verbose_name = "Agents, experiments & grade reports"

    def ready(self) -> None:
        from webapp.results import curation

        curation.connect()
