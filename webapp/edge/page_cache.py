"""Whole responses of the public pages and read API, cached for anonymous visitors.

A response is stored when the request is a GET or HEAD of a public address (the
leaderboard, competitions, experiments, compare, and their ``/api/`` twins) from a visitor
without a session, a messages cookie or an ``Authorization`` header, and the response is a
200 that sets no cookie (a page that used the CSRF token sets one, so a token never lands
in the cache). Everyone else gets the page rendered for them, as before.

Keys are canonical (``webapp.edge.page_cache_routes``): the address, the query parameters it
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

import bisect
import datetime as dt
import functools
import gzip
import hashlib
import logging
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable

from django.conf import settings
from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.http import HttpResponse, HttpResponseNotModified
from django.utils.cache import patch_vary_headers
from django.utils.http import parse_etags

from webapp.edge import page_cache_routes as routes

log = logging.getLogger(__name__)

PAGES_ALIAS = "pages"
VERSION_KEY = "mleboard:pages:version"  # the catalogue's: every page depends on it
_SCOPE_VERSION_KEY = "mleboard:pages:version:{}"  # "listings", "experiment:<id>"
CACHE_CONTROL = "public, max-age=0, must-revalidate"
MAX_BODY_BYTES = 4 * 1024**2
# Each process's copies of recent pages (see _Recent): in front of Redis, or the whole
# cache when there is no Redis for pages.
RECENT_MAX_BYTES = 64 * 1024**2
# Variants of one address (its query parameters; for signed-in pages, per class of
# viewers) kept at once, here and in the pages' Redis: past it the least recently stored
# goes, so a client making up parameter values by the thousand keeps at most this many
# copies of one page, not the whole cache.
VARIANTS_MAX = 64
# What a stored copy costs beyond its bytes (its key, tuple, headers and bookkeeping).
ENTRY_OVERHEAD_BYTES = 1024
# Not stored with a response: they describe one rendering, not the content.
_SKIPPED_HEADERS = {
    "server-timing",
    "set-cookie",
    "etag",
    "cache-control",
    "expires",
    "content-length",
    "content-encoding",
}
# As Django's GZipMiddleware reads Accept-Encoding.
ACCEPTS_GZIP = re.compile(r"\bgzip\b")
# What a 503 of the database-outage middleware is marked with (webapp.edge.outage).
OUTAGE_HEADER = "X-Database-Unavailable"


def enabled() -> bool:
    return bool(getattr(settings, "MLEBOARD_PAGE_CACHE", False))


def _shared() -> bool:
    """Whether pages live in a Redis of their own (MLEBOARD_CACHE_URL)."""
    return PAGES_ALIAS in settings.CACHES


def _pages():
    return caches[PAGES_ALIAS]


def _version_cache():
    """Where the versions live: with the pages in their Redis, else in the ``default``
    cache, which every process of the host shares (so a grading worker's change reaches
    every web process)."""
    return _pages() if _shared() else caches["default"]


def _new_version() -> str:
    return f"{time.time_ns():x}-{secrets.token_hex(4)}"


# --- The bound on the pages' Redis ---------------------------------------------------------

_bounded_checked = False


def ensure_bounded() -> None:
    """Give the pages' Redis its bound (``MLEBOARD_CACHE_MAX_BYTES``, least recently used
    keys evicted) if it has another; once per process, at its first use."""
    global _bounded_checked
    if _bounded_checked or not _shared():
        return
    _bounded_checked = True
    wanted = {
        "maxmemory": str(settings.MLEBOARD_CACHE_MAX_BYTES),
        "maxmemory-policy": "allkeys-lru",
    }
    try:
        client = _pages()._cache.get_client(write=True)
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


# --- Versions --------------------------------------------------------------------------------


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


# --- Storage ---------------------------------------------------------------------------------


class _Recent:
    """This process's copies of the pages it served lately: in front of the pages' Redis
    (a hit then costs one small read, the versions, instead of moving the whole page out
    of Redis), or the whole cache without one. A copy counts only under the current
    versions, so it is never staler than Redis. Bounded in bytes and in variants of one
    address (``VARIANTS_MAX``), least recently used out first."""

    def __init__(self, max_bytes: int, variants_max: int = VARIANTS_MAX) -> None:
        self.max_bytes = max_bytes
        self.variants_max = variants_max
        self.entries: OrderedDict[str, tuple[tuple, str]] = OrderedDict()
        self.groups: dict[str, OrderedDict[str, None]] = {}
        self.size = 0
        self.lock = threading.Lock()

    def get(self, key: str, versions: tuple) -> tuple | None:
        with self.lock:
            found = self.entries.get(key)
            if found is None or found[0][0] != versions:
                return None
            self.entries.move_to_end(key)
            self.groups[found[1]].move_to_end(key)
            return found[0]

    def peek(self, key: str) -> tuple | None:
        """The copy whatever its versions (a stale page, for when the database is away)."""
        with self.lock:
            found = self.entries.get(key)
            return found[0] if found else None

    def put(self, key: str, entry: tuple, group: str) -> None:
        size = _size(entry)
        if size > self.max_bytes // 8:
            return
        with self.lock:
            self._drop(key)
            self.entries[key] = (entry, group)
            self.groups.setdefault(group, OrderedDict())[key] = None
            self.size += size
            variants = self.groups[group]
            while len(variants) > self.variants_max:
                self._drop(next(iter(variants)))
            while self.size > self.max_bytes:
                self._drop(next(iter(self.entries)))

    def _drop(self, key: str) -> None:
        found = self.entries.pop(key, None)
        if found is None:
            return
        entry, group = found
        self.size -= _size(entry)
        variants = self.groups[group]
        del variants[key]
        if not variants:
            del self.groups[group]

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.groups.clear()
            self.size = 0


def _size(entry: tuple) -> int:
    content, extra = entry[3], entry[4]
    headers = sum(len(name) + len(value) for name, value in entry[2])
    if isinstance(content, tuple):  # a signed-in page's parts, with their size
        return extra + headers + ENTRY_OVERHEAD_BYTES
    return len(content) + len(extra or b"") + headers + ENTRY_OVERHEAD_BYTES


_recent = _Recent(RECENT_MAX_BYTES)


# What else forgets its copies with the pages (``webapp.edge.viewer_pages``' viewers).
_ON_CLEAR: list = []


def on_clear(forget) -> None:
    if forget not in _ON_CLEAR:
        _ON_CLEAR.append(forget)


def clear() -> None:
    """Drop every stored page (tests, and an operator's ``cache clear``)."""
    _recent.clear()
    for forget in _ON_CLEAR:
        forget()
    if _shared():
        _pages().clear()


def _lookup(key: str, scopes: tuple[str, ...], group: str) -> tuple[tuple, tuple | None]:
    """The current versions and the stored entry for ``key`` (of any versions: the
    caller compares)."""
    ensure_bounded()
    versions = current_versions(*scopes)
    return versions, _stored(key, versions, group)


def bump(scopes: Iterable[str]) -> None:
    """Replace these scopes' versions now (``webapp.edge.viewer_pages``' own scopes)."""
    _bump([_SCOPE_VERSION_KEY.format(scope) for scope in scopes])


def _stored(key: str, versions: tuple, group: str) -> tuple | None:
    """The entry stored for ``key``: this process's copy under ``versions``, else the
    shared one (copied here when it is of ``versions``), else a stale copy, else None."""
    entry = _recent.get(key, versions)
    if entry is None and _shared():
        entry = _pages().get(key)
        if _valid(entry) and entry[0] == versions:
            _recent.put(key, entry, group)
    if entry is None:
        entry = _recent.peek(key)
    return entry if _valid(entry) else None


def _valid(entry) -> bool:
    # An entry of another shape was stored by an earlier release: rendered again.
    return isinstance(entry, tuple) and len(entry) == 5 and isinstance(entry[0], tuple)


def _store(key: str, entry: tuple, group: str) -> None:
    """Keep ``entry`` under ``key``, one of the variants of ``group`` (an address, and for
    signed-in pages the class of viewers): with the pages' Redis, the group's newest
    ``VARIANTS_MAX`` are kept there too (a sorted set of its keys by time)."""
    if _shared():
        pages = _pages()
        pages.set(key, entry)
        client = pages._cache.get_client(write=True)
        index = pages.make_key(f"mleboard:variants:{_digest(group)}")
        pipe = client.pipeline()
        pipe.zadd(index, {key: time.time()})
        pipe.zcard(index)
        pipe.expire(index, 24 * 3600)
        _, count, _ = pipe.execute()
        if count > VARIANTS_MAX:
            dropped = client.zpopmin(index, count - VARIANTS_MAX)
            names = [name.decode() if isinstance(name, bytes) else name for name, _ in dropped]
            if names:
                client.delete(*(pages.make_key(name) for name in names))
    _recent.put(key, entry, group)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


# --- Which requests -----------------------------------------------------------------------


def _anonymous(request) -> bool:
    """No session (so no signed-in user and nothing personal), no messages waiting, no
    token: the page is the one every anonymous visitor gets."""
    cookies = request.COOKIES
    return not (
        settings.SESSION_COOKIE_NAME in cookies
        or getattr(settings, "MESSAGE_COOKIE_NAME", "messages") in cookies
        or "HTTP_AUTHORIZATION" in request.META
    )


def cacheable_route(request) -> routes.Match | None:
    """The route of a request whose response the cache serves or stores, else None."""
    if not (enabled() and request.method in ("GET", "HEAD") and _anonymous(request)):
        return None
    found = routes.match(request.path_info)
    if found is None:
        return None
    # The API has one representation (JSON): another Accept gets its own 406, uncached.
    if found.route.api and not routes.accepts_json(request.META.get("HTTP_ACCEPT", "")):
        return None
    return found


@functools.cache
def static_release() -> str:
    """The static files this process links (a digest of collectstatic's manifest): a page
    stored by an earlier release links stylesheets and scripts under names that may be
    gone, so a new release has keys of its own."""
    from django.contrib.staticfiles.storage import staticfiles_storage

    names = sorted(getattr(staticfiles_storage, "hashed_files", {}).items())
    return hashlib.blake2b(repr(names).encode(), digest_size=8).hexdigest()


class _ResultDates:
    """The sorted dates of every experiment (its ``date``, else the day it was made, as
    ``LeaderboardFilters`` reads them), public and private, kept under the versions they
    were read in."""

    def __init__(self) -> None:
        self.found: tuple[tuple, list[dt.date]] | None = None
        self.lock = threading.Lock()

    def get(self) -> list[dt.date]:
        from webapp.results.models import Experiment

        versions = current_versions(routes.LISTINGS, routes.PRIVATE)
        with self.lock:
            if self.found is not None and self.found[0] == versions:
                return self.found[1]
        dates = set()
        for date, created_at in Experiment.objects.values_list("date", "created_at"):
            dates.add(date or created_at.astimezone(dt.UTC).date())
        found = sorted(dates)
        with self.lock:
            self.found = (versions, found)
        return found


_result_dates = _ResultDates()


def canonical_dates(route: routes.Route, query) -> None:
    """Replace ``query``'s date bounds (``route.dates``) by the one value of each that
    gives the same page: a bound no result lies beyond is dropped (as one the view cannot
    read), and one between two results' dates becomes the nearer of them that the filter
    keeps, so ``?since=`` of every day before the first result is one address."""
    wanted = {name: query[name] for name in route.dates if name in query}
    if not wanted:
        return
    try:
        dates = _result_dates.get()
    except Exception:  # the database away: the bounds as given (the view reads them so)
        log.warning("page cache: could not read the results' dates", exc_info=True)
        return
    query._mutable = True
    for name, text in wanted.items():
        try:
            bound = dt.date.fromisoformat(text)
        except ValueError:
            del query[name]  # not a date: the view reads no bound
            continue
        canonical = _canonical_bound(name, bound, dates)
        if canonical is None:
            del query[name]
        else:
            query[name] = canonical.isoformat()
    query._mutable = False


def _canonical_bound(name: str, bound: dt.date, dates: list[dt.date]) -> dt.date | None:
    """The bound that keeps the same results as ``bound``; None when it keeps them all."""
    if name == "since":  # kept: date >= since
        i = bisect.bisect_left(dates, bound)
        if i == 0:
            return None
        return dates[i] if i < len(dates) else dates[-1] + dt.timedelta(days=1)
    i = bisect.bisect_right(dates, bound)  # until, kept: date <= until
    if i == len(dates):
        return None
    return dates[i - 1] if i > 0 else dates[0] - dt.timedelta(days=1)


def canonicalize(request, found: routes.Match) -> str:
    """Keep only the parameters the route reads (in the request the view sees too, so the
    stored page is the page of its key) and return the key."""
    query = routes.canonical_query(found.route, request.GET)
    if found.route.dates:
        canonical_dates(found.route, query)
    request.GET = query
    request.META["QUERY_STRING"] = query.urlencode()
    parts = [
        request.scheme,
        request.get_host(),
        request.path_info,
        query.urlencode(),
        static_release(),
    ]
    digest = hashlib.blake2b("\n".join(parts).encode(), digest_size=20).hexdigest()
    return f"mleboard:page:{digest}"


def _storable(request, response, *, token_used: bool = False) -> bool:
    """A 200 with no cookie of its own; ``token_used``: the page may have asked for the
    CSRF token (``webapp.edge.viewer_pages`` then checks that no stored part holds it)."""
    return (
        response.status_code == 200
        and not response.streaming
        and not response.cookies
        and (token_used or not request.META.get("CSRF_COOKIE_NEEDS_UPDATE"))
        and not response.has_header("Cache-Control")
        and len(response.content) <= MAX_BODY_BYTES
    )


def _etag(content: bytes) -> str:
    return '"' + hashlib.blake2b(content, digest_size=16).hexdigest() + '"'


def _not_modified(request, etag: str) -> bool:
    header = request.META.get("HTTP_IF_NONE_MATCH")
    if not header:
        return False
    tags = {tag.removeprefix("W/") for tag in parse_etags(header)}  # a weak comparison
    return "*" in tags or etag in tags


def _respond(request, entry: tuple, state: str, started: float):
    """The stored page, gzip-compressed when the client takes it (its own ETag, as a
    different representation); a 304 when the client holds it already."""
    _, etag, headers, content, compressed = entry
    gzipped = compressed is not None and ACCEPTS_GZIP.search(
        request.META.get("HTTP_ACCEPT_ENCODING", "")
    )
    response = HttpResponse(compressed if gzipped else content)
    for name, value in headers:
        response[name] = value
    if gzipped:
        response["Content-Encoding"] = "gzip"
        etag = etag[:-1] + '-gzip"'
    response["Content-Length"] = str(len(response.content))
    response["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
    response["ETag"] = etag
    response["Cache-Control"] = CACHE_CONTROL
    patch_vary_headers(response, ("Cookie", "Authorization", "Accept-Encoding"))
    response["X-Page-Cache"] = state
    return conditional(request, response)


def conditional(request, response):
    """``response``, or a 304 with its validators when the client holds it already."""
    if not _not_modified(request, response["ETag"]):
        return response
    not_modified = HttpResponseNotModified()
    for name in ("ETag", "Cache-Control", "Vary", "X-Page-Cache", "Server-Timing"):
        if response.has_header(name):
            not_modified[name] = response[name]
    return not_modified


class PageCacheMiddleware:
    """Serves and stores the anonymous responses of the public pages (see the module's
    docstring). Placed before the session middleware, so a hit costs a cache read or two
    and no session, user or database work."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            response = self.get_response(request)
            # Admin edits and actions (publishing, known issues, retirements) may change
            # any public page; some use bulk updates no signal sees.
            if request.path_info.startswith("/admin/") and response.status_code < 400:
                changed()
            return response
        found = cacheable_route(request)
        if found is None:
            return self.get_response(request)
        started = time.perf_counter()
        key = canonicalize(request, found)
        try:
            versions, entry = _lookup(key, (found.scope,), request.path_info)
        except Exception:
            log.exception("page cache: unavailable, rendering")
            return self.get_response(request)
        if entry is not None and entry[0] == versions:
            return _respond(request, entry, "hit", started)
        response = self.get_response(request)
        if entry is not None and response.has_header(OUTAGE_HEADER):
            # The database is away: the page as it was beats a 503.
            return _respond(request, entry, "stale", started)
        if not _storable(request, response):
            return response
        content = response.content
        headers = [
            (name, value)
            for name, value in response.items()
            if name.lower() not in _SKIPPED_HEADERS
        ]
        # Compressed once, when stored: most clients take gzip, and a page of figures
        # shrinks about tenfold.
        compressed = (
            gzip.compress(content, compresslevel=6, mtime=0) if len(content) >= 1024 else None
        )
        entry = (versions, _etag(content), headers, content, compressed)
        try:
            _store(key, entry, request.path_info)
        except Exception:
            log.exception("page cache: could not store %s", request.path_info)
        return _respond(request, entry, "miss", started)


# --- What changes the pages ---------------------------------------------------------------


def _using(kwargs) -> str:
    return kwargs.get("using") or DEFAULT_DB_ALIAS


def _catalogue_change(sender, **kwargs) -> None:
    changed(using=_using(kwargs))


def _named_change(sender, instance, created=False, **kwargs) -> None:
    """An agent, scaffold or model: a new one is on no public page yet."""
    if not created:
        changed(using=_using(kwargs))


def _experiment_before_save(sender, instance, raw=False, **kwargs) -> None:
    if instance.pk is None or raw:
        instance._page_cache_was_public = False
        return
    instance._page_cache_was_public = (
        sender.objects.using(_using(kwargs)).filter(pk=instance.pk, is_published=True).exists()
    )


def _experiment_change(sender, instance, **kwargs) -> None:
    """An experiment's own row (its name, its twin, publishing): it shows on the listings
    and, through its twin, on another experiment's page; rare, so every page. A private
    experiment that stays private changes no public page, only its owner's."""
    if instance.is_published or getattr(instance, "_page_cache_was_public", False):
        changed(using=_using(kwargs))
    else:
        private_changed([instance.owner_id], using=_using(kwargs))


def _report_change(sender, instance, **kwargs) -> None:
    experiments_changed([instance.experiment_id], using=_using(kwargs))


def _snapshot_change(sender, instance, **kwargs) -> None:
    from webapp.results.models import Run

    if instance.run_id is not None:
        experiments_changed(
            Run.objects.using(_using(kwargs))
            .filter(pk=instance.run_id)
            .values_list("experiment_id", flat=True),
            using=_using(kwargs),
        )


def connect() -> None:
    """Saved or deleted rows the public pages show mark them changed (after commit), each
    as narrowly as it can: a report, figures or a snapshot only its experiment's pages and
    the listings (nothing when the experiment is private)."""
    from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save

    from webapp.competitions.models import Competition, KnownIssue, PrivateLeaderboard, Split
    from webapp.results.models import (
        Agent,
        Experiment,
        ExperimentAggregate,
        GradeReport,
        LanguageModel,
        Scaffold,
    )
    from webapp.runs.models import SubmissionSnapshot

    handlers = [
        (Experiment, _experiment_change),
        (ExperimentAggregate, _report_change),
        (GradeReport, _report_change),
        # The experiment page's Any Medal % against time.
        (SubmissionSnapshot, _snapshot_change),
        (Agent, _named_change),
        (Scaffold, _named_change),
        (LanguageModel, _named_change),
    ] + [
        (model, _catalogue_change) for model in (Competition, Split, KnownIssue, PrivateLeaderboard)
    ]
    for model, handler in handlers:
        for signal in (post_save, post_delete):
            signal.connect(
                handler,
                sender=model,
                dispatch_uid=f"page-cache-{signal is post_save}-{model._meta.label}",
            )
    pre_save.connect(
        _experiment_before_save, sender=Experiment, dispatch_uid="page-cache-experiment-pre"
    )
    m2m_changed.connect(
        _catalogue_change, sender=Competition.splits.through, dispatch_uid="page-cache-splits"
    )
