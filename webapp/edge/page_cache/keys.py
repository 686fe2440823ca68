"""Which requests the cache serves and their canonical keys: the parameters a route
reads, each date bound replaced by the one value that keeps the same results."""

import bisect
import datetime as dt
import functools
import hashlib
import logging
import threading

from django.conf import settings

from webapp.edge.page_cache import routes
from webapp.edge.page_cache.versions import current_versions, enabled

log = logging.getLogger(__name__)


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
