from django.apps import AppConfig


class IntegrityConfig(AppConfig):
    name = "webapp.integrity"
    label = "integrity"
    verbose_name = "Integrity: reference code and run checks"

    def ready(self) -> None:
        from webapp import work
        from webapp.integrity.services import checks_after_grading

        work.on_end("grading", checks_after_grading)
