from django.apps import AppConfig


class ResultsConfig(AppConfig):
    name = "webapp.results"
    label = "results"
    verbose_name = "Agents, experiments & grade reports"

    def ready(self) -> None:
        from webapp import work
        from webapp.core import roles
        from webapp.results import curation, kinds
        from webapp.results.grading.services import run_ended
        from webapp.results.uploads.services import upload_ended

        work.declare(*kinds.kinds())
        curation.connect()
        roles.connect()  # the site's groups follow every migrate
        work.on_end("grading", run_ended)
        work.on_end("upload", upload_ended)
