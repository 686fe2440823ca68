"""tus 1.0 over HTTP (core, creation, expiration, termination) for ``resumable``: the
command line (tuspy) and the upload page (tus-js-client) send archives in pieces here.

``/api/uploads/tus/``: OPTIONS (what the server supports, no sign-in), POST (open an
upload: Upload-Length, Upload-Metadata ``filename`` and ``metadata``), GET (the caller's
unfinished uploads). ``/api/uploads/tus/<key>/``: HEAD (Upload-Offset: where to continue),
PATCH (the next bytes), DELETE (give up), GET (its state). When the last byte arrives the
archive is stored as an upload, and that response and any later HEAD carry
``Mleboard-Upload`` (its API address) and ``Mleboard-Upload-Page`` (its page). Errors
carry ``{"error": ...}`` saying what to do.
"""

from __future__ import annotations

import base64
import binascii
import re

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from webapp.core import bad_input
from webapp.results.models import PartialUpload
from webapp.results.uploads import resumable
from webapp.results.uploads.input import upload_metadata

TUS_VERSION = "1.0.0"
EXTENSIONS = "creation,expiration,termination"
CONTENT_TYPE = "application/offset+octet-stream"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _tus(response: HttpResponse, partial: PartialUpload | None = None) -> HttpResponse:
    response["Tus-Resumable"] = TUS_VERSION
    response["Cache-Control"] = "no-store"
    if partial is not None:
        response["Upload-Offset"] = str(partial.offset)
        response["Upload-Length"] = str(partial.length)
        if partial.state == PartialUpload.State.RECEIVING:
            response["Upload-Expires"] = partial.expires_at.strftime("%a, %d %b %Y %H:%M:%S GMT")
        if partial.upload_id:
            response["Mleboard-Upload"] = reverse("api-upload-detail", args=[partial.upload_id])
            response["Mleboard-Upload-Page"] = reverse("upload-detail", args=[partial.upload_id])
    return response


def _error(message: str, status: int, *, head: bool = False, retry_after=None) -> HttpResponse:
    response = (
        HttpResponse(status=status) if head else JsonResponse({"error": message}, status=status)
    )
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    if status == 412:
        response["Tus-Version"] = TUS_VERSION
    return _tus(response)


def _version_refused(request) -> HttpResponse | None:
    if request.method in ("OPTIONS", "GET"):
        return None
    if request.headers.get("Tus-Resumable") != TUS_VERSION:
        return _error(
            f"send the header Tus-Resumable: {TUS_VERSION} (this server speaks tus {TUS_VERSION})",
            412,
            head=request.method == "HEAD",
        )
    return None


def _whole_number(text: str | None, name: str) -> int:
    number = bad_input.whole_number(text)
    if number is None:
        raise resumable.ResumableError(f"{name} must be a whole number of bytes, got {text!r}")
    return number


def _upload_metadata_header(text: str) -> dict[str, str]:
    """tus' Upload-Metadata: comma-separated ``key base64(value)`` pairs."""
    pairs: dict[str, str] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        key, _, value = item.partition(" ")
        try:
            pairs[key] = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise resumable.ResumableError(
                f"Upload-Metadata: the value of {key!r} is not base64 of UTF-8 text"
            ) from None
    return pairs


def _summary(partial: PartialUpload) -> dict:
    return {
        "key": str(partial.key),
        "url": reverse("api-tus-upload", args=[partial.key]),
        "filename": partial.filename,
        "offset": partial.offset,
        "length": partial.length,
        "state": partial.state,
        "expires_at": partial.expires_at.isoformat(),
        "scaffold": (partial.metadata or {}).get("scaffold", ""),
        "model": (partial.metadata or {}).get("model", ""),
        "error": partial.error,
        "upload": partial.upload_id,
        "upload_page": (
            reverse("upload-detail", args=[partial.upload_id]) if partial.upload_id else None
        ),
    }


class _TusView(APIView):
    permission_classes = [IsAuthenticated]

    def get_permissions(self):
        # A client asks what the server supports before it has credentials.
        return [] if self.request.method == "OPTIONS" else super().get_permissions()

    def options(self, request, *args, **kwargs):
        response = _tus(HttpResponse(status=204))
        response["Tus-Version"] = TUS_VERSION
        response["Tus-Extension"] = EXTENSIONS
        response["Tus-Max-Size"] = str(settings.UPLOAD_MAX_BYTES)
        return response

    def dispatch(self, request, *args, **kwargs):
        refused = _version_refused(request)
        return refused if refused is not None else super().dispatch(request, *args, **kwargs)

    def handle_exception(self, exc):
        if isinstance(exc, resumable.ResumableError):
            return _error(
                str(exc),
                exc.http_status,
                head=self.request.method == "HEAD",
                retry_after=exc.retry_after,
            )
        return _tus(super().handle_exception(exc))


@extend_schema(exclude=True)  # tus is described by its own protocol, not by OpenAPI
class TusCreateApi(_TusView):
    throttle_scope = "uploads"  # MLEBOARD_UPLOAD_RATE, shared with the one-request upload

    def get_throttles(self):
        return [ScopedRateThrottle()] if self.request.method == "POST" else []

    def post(self, request):
        if "Upload-Defer-Length" in request.headers:
            raise resumable.ResumableError(
                "Upload-Defer-Length is not supported: send Upload-Length"
            )
        length = _whole_number(request.headers.get("Upload-Length"), "Upload-Length")
        pairs = _upload_metadata_header(request.headers.get("Upload-Metadata", ""))
        try:
            metadata = upload_metadata(pairs.get("metadata"))
        except ValueError as exc:
            raise resumable.ResumableError(str(exc)) from None
        filename = _CONTROL.sub("", pairs.get("filename", "")) or "archive"
        partial = resumable.partial_create(
            owner=request.user, length=length, filename=filename, metadata=metadata
        )
        response = _tus(HttpResponse(status=201), partial)
        response["Location"] = reverse("api-tus-upload", args=[partial.key])
        return response

    def get(self, request):
        unfinished = PartialUpload.objects.filter(
            owner=request.user, state=PartialUpload.State.RECEIVING
        ).order_by("-created_at")[:50]
        return _tus(JsonResponse({"uploads": [_summary(p) for p in unfinished]}))


@extend_schema(exclude=True)
class TusUploadApi(_TusView):
    def _partial(self, request, key) -> PartialUpload:
        return get_object_or_404(PartialUpload, key=key, owner=request.user)

    def head(self, request, key):
        partial = self._partial(request, key)
        if partial.state in (PartialUpload.State.EXPIRED, PartialUpload.State.TERMINATED):
            return _error("", 410, head=True)
        return _tus(HttpResponse(status=200), partial)

    def get(self, request, key):
        return _tus(JsonResponse(_summary(self._partial(request, key))))

    def patch(self, request, key):
        partial = self._partial(request, key)
        if request.content_type != CONTENT_TYPE:
            raise resumable.ResumableError(
                f"send the bytes with Content-Type: {CONTENT_TYPE}", status=415
            )
        offset = _whole_number(request.headers.get("Upload-Offset"), "Upload-Offset")
        declared = request.META.get("CONTENT_LENGTH") or None
        declared = _whole_number(declared, "Content-Length") if declared else None
        # The Django request itself: read in blocks as they arrive, never whole.
        received = resumable.partial_receive(partial, offset, request._request.read, declared)
        return _tus(HttpResponse(status=204), received.partial)

    def delete(self, request, key):
        partial = self._partial(request, key)
        if not resumable.partial_terminate(partial):
            raise resumable.ResumableError(resumable.not_receiving(partial), status=410)
        return _tus(HttpResponse(status=204))
