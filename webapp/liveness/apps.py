from django.apps import AppConfig


class LivenessConfig(AppConfig):
    name = "webapp.liveness"
    label = "liveness"
    verbose_name = "Workers and beat"
