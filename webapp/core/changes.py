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


# An event that moved a published figure or a competition, for the corrections log
# (``webapp.corrections`` listens and appends one entry, in the sender's transaction).
# Sent with ``kind`` (one of ``webapp.corrections.models.Kind``), ``experiment_id``,
# ``competition_id``, ``reason``, ``by`` (the person acting, or None: the site itself),
# ``detail`` (facts the log words itself) and ``using``.
corrected = Signal()
# An experiment's figures were stored anew, inside the refresh's transaction once its due
# mark is cleared. Sent with ``experiment_id`` and ``using``.
figures_stored = Signal()
# The corrections log has a new entry or a figure filled in. Sent with ``using``.
log_grew = Signal()


def correction(
    kind: str,
    *,
    experiment_id: int | None = None,
    competition_id: int | None = None,
    reason: str = "",
    by=None,
    detail: dict | None = None,
    using: str = DEFAULT_DB_ALIAS,
) -> None:
    corrected.send(
        sender=None,
        kind=kind,
        experiment_id=experiment_id,
        competition_id=competition_id,
        reason=reason,
        by=by,
        detail=detail or {},
        using=using,
    )


def figures_stored_for(experiment_id: int, using: str = DEFAULT_DB_ALIAS) -> None:
    figures_stored.send(sender=None, experiment_id=experiment_id, using=using)


def log_changed(using: str = DEFAULT_DB_ALIAS) -> None:
    log_grew.send(sender=None, using=using)
