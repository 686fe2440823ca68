"""Whole responses of the public pages and read API, cached for anonymous visitors.

A response is stored when the request is a GET or HEAD of a public address (the
leaderboard, competitions, experiments, compare, and their ``/api/`` twins) from a visitor
without a session, a messages cookie or an ``Authorization`` header, and the response is a
200 that sets no cookie (a page that used the CSRF token sets one, so a token never lands
in the cache). Everyone else gets the page rendered for them, as before.

Keys are canonical (``webapp.edge.page_cache.routes``): the address, the query parameters it
reads (others are dropped, from the key and from the request the view sees), sorted, one
value each; the API's ``Accept`` is not part of the key (JSON is its one representation).
So a client varying unknown parameters or headers makes no new entries.

Each entry remembers the *content versions* it was rendered under: the catalogue's (every
page) and either the listings' (pages made of every public experiment) or its
experiment's. ``changed()`` replaces the catalogue's version (curation, the catalogue,
admin writes, publishing or withdrawing); ``experiments_changed(ids)`` replaces the
listings' and those experiments' versions, and only when one of them is public: private
work never makes a public page render again, and grading one public experiment leaves the
other experiments' pages alone. Both act after the current transaction commits. A
version never comes back, so an entry rendered before a change is never served after it.

Pages are compressed once when stored and served gzip-compressed to clients that take
it. Responses carry an ``ETag`` (a hash of the body) and ``Cache-Control: public,
max-age=0, must-revalidate``: browsers and proxies ask every time and get a 304 while nothing
changed, and the exact figures the moment something did.

Where: with ``MLEBOARD_CACHE_URL``, a Redis of its own, whose ``maxmemory`` the site sets to
``MLEBOARD_CACHE_MAX_BYTES`` with ``allkeys-lru`` (the settings refuse the broker's or the
throttles' Redis); the versions live there too, and each process keeps copies of the pages
it served lately in front of it (``RECENT_MAX_BYTES``, valid only under the current
versions: a hit reads the versions from Redis, not the page). Without it, those copies are
the cache (each process, bounded the same way) and the versions live in the ``default``
cache, which every process of the host shares. While the database is away, a public page
the cache holds is served even if a change made it stale (``X-Page-Cache: stale``) rather
than a 503. Off with ``MLEBOARD_PAGE_CACHE=0``.
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
