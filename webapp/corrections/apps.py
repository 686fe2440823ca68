from django.apps import AppConfig


class CorrectionsConfig(AppConfig):
    """The corrections log: it listens to what the other apps already send and appends
    one entry per event (``webapp.corrections.record``)."""

    name = "webapp.corrections"
    label = "corrections"
    verbose_name = "Corrections log"

    def ready(self) -> None:
        from webapp.corrections import record

        record.connect()
