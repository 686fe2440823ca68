from django.apps import AppConfig


class EdgeConfig(AppConfig):
    """Serving: the page cache and what it listens to."""

    name = "webapp.edge"
    label = "edge"
    verbose_name = "Serving"

    def ready(self) -> None:
        from webapp.core import changes
        from webapp.edge import page_cache, viewer_pages
        from webapp.edge.page_cache import routes

        # Cached public pages follow every change they show (publishing included), and
        # signed-in people's copies the changes of what they may see.
        page_cache.connect()
        viewer_pages.connect()
        changes.catalogue.connect(
            lambda sender, using, **kwargs: page_cache.changed(using=using),
            weak=False,
            dispatch_uid="edge-catalogue-changed",
        )
        # The corrections log's pages, once the new entry (or figure) is committed.
        changes.log_grew.connect(
            lambda sender, using, **kwargs: page_cache.bump_after_commit(
                [routes.CHANGES], using=using
            ),
            weak=False,
            dispatch_uid="edge-corrections-log",
        )
        changes.experiments.connect(
            lambda sender, ids, using, **kwargs: page_cache.experiments_changed(ids, using=using),
            weak=False,
            dispatch_uid="edge-experiments-changed",
        )
