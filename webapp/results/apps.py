from django.apps import AppConfig


class ResultsConfig(AppConfig):
    name = "webapp.results"
    label = "results"
    verbose_name = "Agents, experiments & grade reports"

    def ready(self) -> None:
        from webapp import roles
        from webapp.results import curation

        curation.connect()
        roles.connect()  # the site's groups follow every migrate
