from django.apps import AppConfig


class OpsConfig(AppConfig):
    """Operations: the sweeper and its periodic task, the processes, the status page."""

    name = "webapp.ops"
    label = "ops"
    verbose_name = "Operations"
