"""Whole responses of the public pages and read API, cached for anonymous visitors.

Only a GET or HEAD of a public address from a visitor with no session, messages cookie or
``Authorization``, answered 200 with no cookie set, is stored; everyone else gets the page
rendered for them. Keys are canonical (``routes``). Each entry remembers the content
versions it was rendered under; ``changed()`` (the catalogue's) and
``experiments_changed(ids)`` (the listings' and those experiments', only when one is
public) replace them after the transaction commits, and a version never comes back, so a
stale entry is never served (except a public page while the database is away). Where it
lives (a Redis of its own, else each process) and the rest: docs/operate.md. Off with
``MLEBOARD_PAGE_CACHE=0``.
"""

from webapp.edge.page_cache.keys import (
    cacheable_route,
    canonical_dates,
    canonicalize,
    static_release,
)
from webapp.edge.page_cache.middleware import (
    ACCEPTS_GZIP,
    OUTAGE_HEADER,
    SKIPPED_HEADERS,
    PageCacheMiddleware,
    conditional,
    storable,
)
from webapp.edge.page_cache.signals import connect
from webapp.edge.page_cache.store import VARIANTS_MAX, clear, keep, lookup, on_clear, stored
from webapp.edge.page_cache.versions import (
    bump,
    bump_after_commit,
    changed,
    current_versions,
    enabled,
    ensure_bounded,
    experiments_changed,
    private_changed,
)

__all__ = [
    "ACCEPTS_GZIP",
    "OUTAGE_HEADER",
    "SKIPPED_HEADERS",
    "VARIANTS_MAX",
    "PageCacheMiddleware",
    "bump",
    "bump_after_commit",
    "cacheable_route",
    "canonical_dates",
    "canonicalize",
    "changed",
    "clear",
    "conditional",
    "connect",
    "current_versions",
    "enabled",
    "ensure_bounded",
    "experiments_changed",
    "keep",
    "lookup",
    "on_clear",
    "private_changed",
    "static_release",
    "storable",
    "stored",
]
