"""What the apps say when something a page shows has changed. The serving layer listens
(``webapp.edge``: the page cache renders those pages again); the apps never import it.

Both act once the current transaction commits, as the listeners decide."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import DEFAULT_DB_ALIAS
from django.dispatch import Signal

# Something every public page may show: the catalogue, curation, publishing. Sent with
# ``using``.
catalogue = Signal()
# Reports, figures or snapshots of these experiments. Sent with ``ids`` and ``using``.
experiments = Signal()


def catalogue_changed(using: str = DEFAULT_DB_ALIAS) -> None:
    catalogue.send(sender=None, using=using)


def experiments_changed(ids: Iterable[int | None], using: str = DEFAULT_DB_ALIAS) -> None:
    experiments.send(sender=None, ids=[pk for pk in ids if pk is not None], using=using)
