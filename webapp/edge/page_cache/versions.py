"""The content versions a stored page was rendered under, and what replaces them: a page
is served only under the versions it was stored with."""

import logging
import secrets
import time
from collections.abc import Iterable

from django.conf import settings
from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS, connections, transaction

from webapp.edge.page_cache import routes

log = logging.getLogger(__name__)


PAGES_ALIAS = "pages"


VERSION_KEY = "mleboard:pages:version"  # the catalogue's: every page depends on it


_SCOPE_VERSION_KEY = "mleboard:pages:version:{}"  # "listings", "experiment:<id>"


def enabled() -> bool:
    return bool(getattr(settings, "MLEBOARD_PAGE_CACHE", False))


def shared() -> bool:
    """Whether pages live in a Redis of their own (MLEBOARD_CACHE_URL)."""
    return PAGES_ALIAS in settings.CACHES


def pages():
    return caches[PAGES_ALIAS]


def _version_cache():
    """Where the versions live: with the pages in their Redis, else in the ``default``
    cache, which every process of the host shares (so a grading worker's change reaches
    every web process)."""
    return pages() if shared() else caches["default"]


def _new_version() -> str:
    return f"{time.time_ns():x}-{secrets.token_hex(4)}"


_bounded_checked = False


def ensure_bounded() -> None:
    """Give the pages' Redis its bound (``MLEBOARD_CACHE_MAX_BYTES``, least recently used
    keys evicted) if it has another; once per process, at its first use."""
    global _bounded_checked
    if _bounded_checked or not shared():
        return
    _bounded_checked = True
    wanted = {
        "maxmemory": str(settings.MLEBOARD_CACHE_MAX_BYTES),
        "maxmemory-policy": "allkeys-lru",
    }
    try:
        client = pages()._cache.get_client(write=True)
        for name, value in wanted.items():
            if client.config_get(name).get(name) != value:
                client.config_set(name, value)
                log.info("page cache: set the Redis %s to %s", name, value)
    except Exception:
        log.warning(
            "page cache: could not set the bound of its Redis (maxmemory %s, allkeys-lru); "
            "configure that Redis so by hand",
            wanted["maxmemory"],
            exc_info=True,
        )


def _bump(keys: Iterable[str]) -> None:
    try:
        _version_cache().set_many({key: _new_version() for key in keys}, timeout=None)
    except Exception:  # the cache is down: nothing is served from it either
        log.exception("page cache: could not record a change")


def _bump_catalogue() -> None:
    _bump([VERSION_KEY])


def changed(using: str = DEFAULT_DB_ALIAS) -> None:
    """Something every public page may show changed (the catalogue, curation, an agent's
    name, publishing or withdrawing): every cached page is stale once the current
    transaction commits (at once outside one). Many calls in one transaction make one
    change. For reports and figures of experiments, ``experiments_changed``."""
    # Recorded even where this process serves no cached page: a worker's change must
    # reach the web processes whatever the worker's own setting.
    connection = connections[using]
    if not connection.in_atomic_block:
        _bump_catalogue()
        return
    if not any(func is _bump_catalogue for _, func, _ in connection.run_on_commit):
        transaction.on_commit(_bump_catalogue, using=using)


def _private_keys(owners: Iterable[int]) -> list[str]:
    """The scopes a change to private work replaces: its owners' and everyone's private
    work (what those who see every experiment see). Only signed-in pages read them
    (``webapp.edge.viewer_pages``); no anonymous page renders again."""
    return [_SCOPE_VERSION_KEY.format(routes.PRIVATE)] + [
        _SCOPE_VERSION_KEY.format(routes.owner_scope(owner)) for owner in set(owners)
    ]


class _ExperimentsChanged:
    """The experiments one transaction changed, acted on once it commits."""

    def __init__(self, ids: set[int], using: str) -> None:
        self.ids = ids
        self.using = using

    def __call__(self) -> None:
        from webapp.results.models import Experiment

        public, owners = [], []
        for pk, published, owner in (
            Experiment.objects.using(self.using)
            .filter(pk__in=self.ids)
            .values_list("pk", "is_published", "owner_id")
        ):
            if published:
                public.append(pk)
            elif owner is not None:
                owners.append(owner)
        keys = _private_keys(owners) if owners else []
        if public:
            keys += [_SCOPE_VERSION_KEY.format(routes.LISTINGS)] + [
                _SCOPE_VERSION_KEY.format(f"{routes.EXPERIMENT}:{pk}") for pk in public
            ]
        if keys:
            _bump(keys)


def private_changed(owners: Iterable[int | None], using: str = DEFAULT_DB_ALIAS) -> None:
    """Private work of these owners changed (or went away): their signed-in pages render
    again once the current transaction commits."""
    owners = {owner for owner in owners if owner is not None}
    if owners:
        transaction.on_commit(lambda: _bump(_private_keys(owners)), using=using)


def experiments_changed(ids: Iterable[int | None], using: str = DEFAULT_DB_ALIAS) -> None:
    """Reports, figures or snapshots of these experiments changed: once the current
    transaction commits, the pages of the public ones and the listings render again.
    Private experiments change no public page (publishing one is ``changed()``)."""
    ids = {pk for pk in ids if pk is not None}
    if not ids:
        return
    connection = connections[using]
    if not connection.in_atomic_block:
        _ExperimentsChanged(ids, using)()
        return
    for _, func, _ in connection.run_on_commit:
        if isinstance(func, _ExperimentsChanged):
            func.ids |= ids
            return
    transaction.on_commit(_ExperimentsChanged(ids, using), using=using)


def current_versions(*scopes: str) -> tuple[str, ...]:
    """The catalogue's version and each scope's (one read)."""
    keys = (VERSION_KEY, *(_SCOPE_VERSION_KEY.format(scope) for scope in scopes))
    cache = _version_cache()
    found = cache.get_many(keys)
    if len(found) < len(keys):  # first use, or evicted: any new version will do
        for key in keys:
            if key not in found:
                cache.add(key, _new_version(), timeout=None)
        found = cache.get_many(keys)
    return tuple(found.get(key, "") for key in keys)


class _ScopesChanged:
    """The scopes one transaction changed, replaced once it commits."""

    def __init__(self, scopes: set[str]) -> None:
        self.scopes = scopes

    def __call__(self) -> None:
        bump(sorted(self.scopes))


def bump_after_commit(scopes: Iterable[str], using: str = DEFAULT_DB_ALIAS) -> None:
    """Replace these scopes' versions once the current transaction commits (at once
    outside one); many calls in one transaction make one change."""
    scopes = set(scopes)
    connection = connections[using]
    if not connection.in_atomic_block:
        bump(sorted(scopes))
        return
    for _, func, _ in connection.run_on_commit:
        if isinstance(func, _ScopesChanged):
            func.scopes |= scopes
            return
    transaction.on_commit(_ScopesChanged(scopes), using=using)


def bump(scopes: Iterable[str]) -> None:
    """Replace these scopes' versions now (``webapp.edge.viewer_pages``' own scopes)."""
    _bump([_SCOPE_VERSION_KEY.format(scope) for scope in scopes])
