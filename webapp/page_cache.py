"""Whole responses of the public pages and read API, cached for anonymous visitors.

A response is stored when the request is a GET or HEAD of a public address (the
leaderboard, competitions, experiments, compare, and their ``/api/`` twins) from a visitor
without a session, a messages cookie or an ``Authorization`` header, and the response is a
200 that sets no cookie (a page that used the CSRF token sets one, so a token never lands
in the cache). Everyone else gets the page rendered for them, as before.

Entries are keyed by host, path, sorted query and (for the API) the ``Accept`` header, and
each one remembers the *content version* it was rendered under. ``changed()`` replaces the
version with a new random token after the current transaction commits, so the next
request renders again: grading, imports, figure refreshes, publishing and curation call it
(directly or through the model signals ``connect()`` wires), and so does any successful
write through the admin. A token never comes back, so an entry rendered before a change is
never served after it.

Pages are compressed once when stored and served gzip-compressed to clients that take
it. Responses carry an ``ETag`` (a hash of the body) and ``Cache-Control: public,
max-age=0, must-revalidate``: browsers and proxies ask every time and get a 304 while nothing
changed, and the exact figures the moment something did.

Where: the ``pages`` cache (Redis with ``MLEBOARD_CACHE_URL`` or a redis ``CACHE_URL``,
else each process's memory); the version lives in Redis too, or in the ``default`` cache
(a folder every process of the host shares) when pages are in memory. In front of Redis,
each process keeps copies of the pages it served lately (``RECENT_MAX_BYTES``), valid
only under the current version: a hit reads the version from Redis, not the page. Off
with ``MLEBOARD_PAGE_CACHE=0``.
"""

import gzip
import hashlib
import logging
import re
import secrets
import threading
import time
from collections import OrderedDict
from urllib.parse import parse_qsl, urlencode

from django.conf import settings
from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.http import HttpResponse, HttpResponseNotModified
from django.utils.cache import patch_vary_headers
from django.utils.http import parse_etags

log = logging.getLogger(__name__)

PAGES_ALIAS = "pages"
VERSION_KEY = "mleboard:pages:version"
# The addresses whose anonymous responses are the same for every anonymous visitor.
PUBLIC_PATHS = re.compile(
    r"^/(?:"
    r"|competitions/(?:[^/]+/)?"
    r"|experiments/\d+/(?:reports\.(?:json|csv))?"
    r"|compare/"
    r"|api/leaderboard/"
    r"|api/compare/"
    r"|api/competitions/(?:[^/]+/)?"
    r"|api/experiments/(?:\d+/(?:reports/)?)?"
    r")$"
)
CACHE_CONTROL = "public, max-age=0, must-revalidate"
MAX_BODY_BYTES = 4 * 1024**2
# Each process's copies of recent pages in front of Redis (see _Recent).
RECENT_MAX_BYTES = 64 * 1024**2
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


def enabled() -> bool:
    return bool(getattr(settings, "MLEBOARD_PAGE_CACHE", False))


def _pages():
    return caches[PAGES_ALIAS]


def _version_cache():
    """Where the version lives: with the pages when they are shared (Redis), else in the
    ``default`` cache, which every process of the host shares (so a grading worker's
    change reaches every web process)."""
    pages = _pages()
    if pages.__class__.__name__ == "LocMemCache":
        return caches["default"]
    return pages


def _new_version() -> str:
    return f"{time.time_ns():x}-{secrets.token_hex(4)}"


def _bump() -> None:
    try:
        _version_cache().set(VERSION_KEY, _new_version(), timeout=None)
    except Exception:  # the cache is down: nothing is served from it either
        log.exception("page cache: could not record a change")


def changed(using: str = DEFAULT_DB_ALIAS) -> None:
    """Something public changed (reports, figures, publishing, curation): cached pages are
    stale once the current transaction commits (at once outside one). Call it from
    anywhere; many calls in one transaction make one change."""
    # Recorded even where this process serves no cached page: a worker's change must
    # reach the web processes whatever the worker's own setting.
    connection = connections[using]
    if not connection.in_atomic_block:
        _bump()
        return
    if not any(func is _bump for _, func, _ in connection.run_on_commit):
        transaction.on_commit(_bump, using=using)


def current_version() -> str:
    cache = _version_cache()
    version = cache.get(VERSION_KEY)
    if version is None:  # first use, or the cache was emptied: any new token will do
        cache.add(VERSION_KEY, _new_version(), timeout=None)
        version = cache.get(VERSION_KEY)
    return version


class _Recent:
    """This process's copies of the pages it served lately, in front of a shared (Redis)
    cache: a hit then costs one small read (the version) instead of moving the whole
    page out of Redis. A copy counts only under the current version, so it is never
    staler than Redis. Bounded in bytes, least recently used out first."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.entries: OrderedDict[str, tuple] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def get(self, key: str, version: str) -> tuple | None:
        with self.lock:
            entry = self.entries.get(key)
            if entry is None or entry[0] != version:
                return None
            self.entries.move_to_end(key)
            return entry

    def put(self, key: str, entry: tuple) -> None:
        size = _size(entry)
        if size > self.max_bytes // 8:
            return
        with self.lock:
            old = self.entries.pop(key, None)
            if old is not None:
                self.size -= _size(old)
            self.entries[key] = entry
            self.size += size
            while self.size > self.max_bytes:
                _, dropped = self.entries.popitem(last=False)
                self.size -= _size(dropped)


def _size(entry: tuple) -> int:
    return len(entry[3]) + len(entry[4] or b"")


_recent = _Recent(RECENT_MAX_BYTES)


def _shared() -> bool:
    return _version_cache() is _pages()


def _lookup(key: str) -> tuple[str, tuple | None]:
    """The content version and the stored entry for ``key``."""
    version = current_version()
    if not _shared():
        return version, _pages().get(key)
    entry = _recent.get(key, version)
    if entry is None:
        entry = _pages().get(key)
        if entry is not None and entry[0] == version:
            _recent.put(key, entry)
    return version, entry


def _store(key: str, entry: tuple) -> None:
    _pages().set(key, entry)
    if _shared():
        _recent.put(key, entry)


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


def cacheable_request(request) -> bool:
    return (
        enabled()
        and request.method in ("GET", "HEAD")
        and PUBLIC_PATHS.match(request.path_info) is not None
        and _anonymous(request)
    )


def cache_key(request) -> str:
    query = sorted(parse_qsl(request.META.get("QUERY_STRING", ""), keep_blank_values=True))
    parts = [request.scheme, request.get_host(), request.path_info, urlencode(query)]
    if request.path_info.startswith("/api/"):
        parts.append(request.META.get("HTTP_ACCEPT", ""))
    digest = hashlib.blake2b("\n".join(parts).encode(), digest_size=20).hexdigest()
    return f"mleboard:page:{digest}"


def _storable(request, response) -> bool:
    return (
        response.status_code == 200
        and not response.streaming
        and not response.cookies
        and not request.META.get("CSRF_COOKIE_NEEDS_UPDATE")
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
    if _not_modified(request, etag):
        not_modified = HttpResponseNotModified()
        for name in ("ETag", "Cache-Control", "Vary", "X-Page-Cache", "Server-Timing"):
            if response.has_header(name):
                not_modified[name] = response[name]
        return not_modified
    return response


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
        if not cacheable_request(request):
            return self.get_response(request)
        started = time.perf_counter()
        key = cache_key(request)
        try:
            version, entry = _lookup(key)
        except Exception:
            log.exception("page cache: unavailable, rendering")
            return self.get_response(request)
        # (An entry of another shape was stored by an earlier release: rendered again.)
        if entry is not None and len(entry) == 5 and entry[0] == version:
            return _respond(request, entry, "hit", started)
        response = self.get_response(request)
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
        entry = (version, _etag(content), headers, content, compressed)
        try:
            _store(key, entry)
        except Exception:
            log.exception("page cache: could not store %s", request.path_info)
        return _respond(request, entry, "miss", started)


# --- What changes the pages ---------------------------------------------------------------


def _on_model_change(sender, **kwargs) -> None:
    changed(using=kwargs.get("using") or DEFAULT_DB_ALIAS)


def connect() -> None:
    """Any saved or deleted row the public pages show marks them changed (after commit)."""
    from django.db.models.signals import m2m_changed, post_delete, post_save

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

    for model in (
        Experiment,
        ExperimentAggregate,
        GradeReport,
        Agent,
        Scaffold,
        LanguageModel,
        Competition,
        Split,
        KnownIssue,
        PrivateLeaderboard,
        SubmissionSnapshot,  # the experiment page's Any Medal % against time
    ):
        for signal in (post_save, post_delete):
            signal.connect(
                _on_model_change,
                sender=model,
                dispatch_uid=f"page-cache-{signal is post_save}-{model._meta.label}",
            )
    m2m_changed.connect(
        _on_model_change, sender=Competition.splits.through, dispatch_uid="page-cache-splits"
    )
