"""The middleware serving and storing anonymous pages, and how a stored page is answered
(gzip, ETag, 304)."""

import gzip
import hashlib
import logging
import re
import time

from django.http import HttpResponse, HttpResponseNotModified
from django.utils.cache import patch_vary_headers
from django.utils.http import parse_etags

from webapp.edge.page_cache.keys import cacheable_route, canonicalize
from webapp.edge.page_cache.store import keep, lookup
from webapp.edge.page_cache.versions import changed

log = logging.getLogger(__name__)


CACHE_CONTROL = "public, max-age=0, must-revalidate"


MAX_BODY_BYTES = 4 * 1024**2


# Not stored with a response: they describe one rendering, not the content.
SKIPPED_HEADERS = {
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


def storable(request, response, *, token_used: bool = False) -> bool:
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
            versions, entry = lookup(key, (found.scope,), request.path_info)
        except Exception:
            log.exception("page cache: unavailable, rendering")
            return self.get_response(request)
        if entry is not None and entry[0] == versions:
            return _respond(request, entry, "hit", started)
        response = self.get_response(request)
        if entry is not None and response.has_header(OUTAGE_HEADER):
            # The database is away: the page as it was beats a 503.
            return _respond(request, entry, "stale", started)
        if not storable(request, response):
            return response
        content = response.content
        headers = [
            (name, value) for name, value in response.items() if name.lower() not in SKIPPED_HEADERS
        ]
        # Compressed once, when stored: most clients take gzip, and a page of figures
        # shrinks about tenfold.
        compressed = (
            gzip.compress(content, compresslevel=6, mtime=0) if len(content) >= 1024 else None
        )
        entry = (versions, _etag(content), headers, content, compressed)
        try:
            keep(key, entry, request.path_info)
        except Exception:
            log.exception("page cache: could not store %s", request.path_info)
        return _respond(request, entry, "miss", started)
