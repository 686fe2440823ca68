from django.apps import AppConfig


class PagesConfig(AppConfig):
    """Pages that combine apps: a run's pages, My work, a competition's page, the docs."""

    name = "webapp.pages"
    label = "pages"
    verbose_name = "Pages"
