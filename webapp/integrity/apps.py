from django.apps import AppConfig


class IntegrityConfig(AppConfig):
    name = "webapp.integrity"
    label = "integrity"
    verbose_name = "Integrity: reference code and run checks"
