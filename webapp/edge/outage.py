"""The database away: a 503 with ``Retry-After``, never a 500.

While PostgreSQL restarts, fails over or is unreachable, every query raises
``OperationalError`` (or ``InterfaceError``): the infrastructure's fault, and it passes, so
the answer is 503 with ``Retry-After``, and the page cache serves the public pages it holds
when the response carries ``OUTAGE_HEADER``. Two ways in, so that no request escapes:
``DatabaseOutageMiddleware.process_exception`` for a view's queries, and ``server_error``
(``handler500``) for a middleware's. Nothing here touches the database or renders a
template (its context processors would). Workers need none of it (docs/operate.md).
"""

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.views import defaults

from webapp.edge.page_cache import OUTAGE_HEADER

RETRY_AFTER_S = 10
MESSAGE = (
    f"The database is unavailable for a moment; nothing you sent was lost or half-saved. "
    f"Try again in {RETRY_AFTER_S} seconds."
)


def is_outage(exception: BaseException | None) -> bool:
    return isinstance(exception, (OperationalError, InterfaceError))


def unavailable(request) -> HttpResponse:
    """The 503 for ``request``: JSON for the API, a short page for the rest."""
    # (django.request logs every 5xx: "Service Unavailable: <path>".)
    if request.path.startswith("/api/"):
        response = JsonResponse({"error": MESSAGE}, status=503)
    else:
        response = HttpResponse(
            "<!doctype html><title>Unavailable for a moment</title>"
            f"<h1>Unavailable for a moment</h1><p>{MESSAGE}</p>",
            status=503,
            content_type="text/html; charset=utf-8",
        )
    response["Retry-After"] = str(RETRY_AFTER_S)
    response["Cache-Control"] = "no-store"
    response[OUTAGE_HEADER] = "1"
    return response


class DatabaseOutageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if is_outage(exception):
            return unavailable(request)
        return None


def server_error(request, *args, **kwargs) -> HttpResponse:
    """Django's 500 page, unless the error being handled is the database's absence."""
    if is_outage(sys.exc_info()[1]):
        return unavailable(request)
    return defaults.server_error(request, *args, **kwargs)
