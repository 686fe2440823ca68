"""The Django project: settings, URLs, the Celery app and the apps that persist and show
what the pure packages (benchmark, graders, runner) compute."""

from webapp.project.celery import app as celery_app

__all__ = ["celery_app"]
