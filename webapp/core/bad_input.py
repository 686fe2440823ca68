"""Bad input answered as such, never as a server error.

Middleware refusing a NUL in the address and a chunked body, ASCII header numbers
(``whole_number``), JSON too deep refused (``parse_json``, ``JSONParser``), ISO dates
(``IsoDateField``), non-finite floats as null (``JSONRenderer``), the 404 as JSON under
``/api/`` (``not_found``), a split by any of its names (``split_asked``, else a 400 listing
them) and every text field's ``max_length`` (``LengthBoundForm``): each says why itself.

Text a person posts is stored only through a form or a serializer field: both refuse NUL
(Django's and DRF's ``CharField`` carry ``ProhibitNullCharactersValidator``), which
PostgreSQL refuses too; a test bans reading ``request.POST``/``request.data`` directly.
"""

import json
import math
import re

from django.core.validators import MaxLengthValidator
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.defaults import page_not_found
from drf_spectacular.utils import OpenApiParameter
from rest_framework import parsers, renderers, serializers
from rest_framework.exceptions import ParseError

from benchmark.splits import (
    RAN,
    VALID_FIGURE_SPLIT_NAMES,
    VALID_SPLIT_NAMES,
    UnknownSplit,
    resolve_split,
    split_names_text,
)

NUL_MESSAGE = (
    "The address contains a NUL character (%00), which no page, filter or search accepts: "
    "remove it and try again."
)
TOO_DEEP = "it is nested too deeply (more levels of [ ] or { } than can be read)"


class RejectNulMiddleware:
    """A NUL character in the address (path or query string) is answered 400. No page or
    filter takes one, and PostgreSQL refuses NUL in text, so any query it reached would fail."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path or any(
            "\x00" in key or any("\x00" in v for v in values) for key, values in request.GET.lists()
        ):
            if request.path.startswith("/api/"):
                return JsonResponse({"error": NUL_MESSAGE}, status=400)
            return HttpResponse(NUL_MESSAGE, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


CHUNKED_MESSAGE = (
    "The body was sent with Transfer-Encoding ({encoding}), which this site does not read: "
    "send it with a Content-Length header (every HTTP client can; for curl, give the "
    "data with --data-binary @FILE rather than from a pipe)."
)


class RejectChunkedBodyMiddleware:
    """A body sent with ``Transfer-Encoding`` (chunked) is answered 400 asking for a
    ``Content-Length``. Django reads a body up to its ``Content-Length`` only, so without one
    every view would see an empty body and, for a tus ``PATCH``, answer 204 having stored
    nothing."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        encoding = request.META.get("HTTP_TRANSFER_ENCODING")
        if encoding is None:
            return self.get_response(request)
        message = CHUNKED_MESSAGE.format(encoding=encoding[:40])
        if request.path.startswith("/api/"):
            response = JsonResponse({"error": message}, status=400)
            if request.path.startswith("/api/uploads/tus/"):
                response["Tus-Resumable"] = "1.0.0"
            return response
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")


_WHOLE_NUMBER = re.compile(r"[0-9]{1,19}")


def whole_number(text: str | None) -> int | None:
    """``text`` (spaces around it aside) as a whole number written in 1 to 19 ASCII
    digits, else None (``str.isdigit`` takes superscripts such as ``²``, which ``int``
    refuses)."""
    if text is None:
        return None
    text = text.strip()
    return int(text) if _WHOLE_NUMBER.fullmatch(text) else None


def parse_json(text: str):
    """``json.loads``, raising ValueError (JSONDecodeError for malformed JSON) for any
    text it cannot read, nesting too deep for the parser included (the parser itself
    raises ``RecursionError``)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


class JSONParser(parsers.JSONParser):
    """DRF's, with JSON nested too deeply refused as a 400 ``ParseError``."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - {TOO_DEEP}") from None


ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
DATE_MESSAGE = "must be a date written YYYY-MM-DD, e.g. 2023-10-01"


class IsoDateField(serializers.DateField):
    """A date as ISO text (YYYY-MM-DD) in ASCII digits; anything else is refused with
    DATE_MESSAGE (``parse_date`` alone takes other digits, such as fullwidth ones)."""

    default_error_messages = {"invalid": DATE_MESSAGE, "datetime": DATE_MESSAGE}

    def to_internal_value(self, value):
        if not isinstance(value, str) or not ISO_DATE.fullmatch(value):
            self.fail("invalid")
        return super().to_internal_value(value)


def _finite(data):
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: _finite(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_finite(value) for value in data]
    return data


class JSONRenderer(renderers.JSONRenderer):
    """DRF's, with non-finite floats (a stored NaN or infinite score or threshold) written as
    null: JSON has no literal for them."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except ValueError:  # "Out of range float values are not JSON compliant"
            return super().render(_finite(data), accepted_media_type, renderer_context)


class LengthBoundForm:
    """Mixed into a form (before the form class): every field with a ``max_length``
    refuses longer values, whether or not the field was built with it (Django's login
    forms set it afterwards, and a 256-character user name would reach django-axes'
    255-character column: a 500)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            limit = getattr(field, "max_length", None)
            if limit is not None and not any(
                isinstance(v, MaxLengthValidator) and v.limit_value == limit
                for v in field.validators
            ):
                field.validators.append(MaxLengthValidator(limit))


def not_found(request, exception):
    """The site's 404: JSON under ``/api/`` (an address no API route takes, such as
    ``/api/runs/abc/``), the page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)


class BadQuery(Exception):
    """A query parameter's value no page takes: ``message`` says why, ``valid`` lists the
    values it takes. Raised by a view, answered 400 by ``BadQueryMiddleware``."""

    def __init__(self, parameter: str, message: str, valid: tuple[str, ...] = ()):
        super().__init__(message)
        self.parameter = parameter
        self.message = message
        self.valid = valid


def split_parameter(*, figures: bool = False, default: str = "") -> OpenApiParameter:
    """``?split=`` as the API documents it: the names ``split_asked`` takes (in any case,
    MLE-bench's file names also ending in .txt), any other a 400."""
    return OpenApiParameter(
        "split",
        str,
        enum=list(VALID_FIGURE_SPLIT_NAMES if figures else VALID_SPLIT_NAMES),
        description=f"a split: {split_names_text()}"
        + (f", or {RAN.slug} (figures over exactly the competitions run)" if figures else "")
        + "; MLE-bench's file names may also end in .txt. Another name is a 400 "
        '{"detail", "valid"}.' + (f" Default: {default}." if default else ""),
    )


def split_asked(query, *, figures: bool = False, parameter: str = "split") -> str:
    """The split slug ``?split=`` names ("" when it names none): a slug, an alias or
    MLE-bench's file name (``benchmark.splits.resolve_split``; with ``figures``, also the
    split of an experiment's figures over the competitions it ran). Raises BadQuery."""
    name = query.get(parameter, "").strip()
    if not name:
        return ""
    try:
        return resolve_split(name, figures=figures)
    except UnknownSplit as error:
        raise BadQuery(parameter, str(error), error.valid) from None


class BadQueryMiddleware:
    """``BadQuery`` raised by a view (pages and the API alike) answered 400."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, BadQuery):
            return None
        if request.path.startswith("/api/"):
            return JsonResponse(
                {"detail": exception.message, "valid": list(exception.valid)}, status=400
            )
        return render(
            request,
            "400.html",
            {
                "message": exception.message,
                "parameter": exception.parameter,
                "valid": exception.valid,
            },
            status=400,
        )
