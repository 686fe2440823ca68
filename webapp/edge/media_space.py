"""Uploads on a nearly full disk: refused (507) before Django spools their body, by
``MediaSpaceMiddleware``; the margin is ``webapp.core.media_space``'s."""

from __future__ import annotations

from webapp.core.media_space import FULL_MESSAGE, is_disk_full, room_for

# The views whose request body is an archive Django spools to disk before they run: the
# upload page and the one-request API upload. The resumable (tus) upload checks the margin
# itself before it reads a piece (webapp.results.uploads.resumable), answering in its protocol.
SPOOLED_UPLOAD_VIEWS = frozenset({"upload-new", "api-upload-create"})
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def _declared_length(request) -> int:
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0


def _is_upload(request) -> bool:
    from django.urls import Resolver404, resolve

    if request.method not in _BODY_METHODS:
        return False
    try:
        return resolve(request.path_info).url_name in SPOOLED_UPLOAD_VIEWS
    except Resolver404:
        return False


def discard_spooled(request) -> None:
    """Remove at once the file a request's upload was being spooled to (Django's
    temporary upload file deletes itself when closed)."""
    for handler in getattr(request, "_upload_handlers", None) or ():
        spooled = getattr(handler, "file", None)
        if spooled is not None:
            try:
                spooled.close()
            except OSError:
                pass


def refused(request):
    """507 with a message: JSON for the API, a page for the upload form."""
    from django.http import JsonResponse
    from django.shortcuts import render

    if request.path.startswith("/api/"):
        return JsonResponse({"error": FULL_MESSAGE}, status=507)
    return render(request, "507.html", {"message": FULL_MESSAGE}, status=507)


class MediaSpaceMiddleware:
    """Uploads meet a full disk with 507, never a 500 and never a partial file left
    behind: refused before any byte is read when the media folder would fall below
    ``MLEBOARD_MEDIA_MIN_FREE_BYTES`` with the request's declared length; a form upload
    is spooled here (before the CSRF check reads it), so a disk that fills during it is
    answered too, and its spool file removed at once. A view that hits a full disk
    (storing the archive) gets the same answer. Its ``__call__`` runs before any
    ``process_view`` (the CSRF check reads the body there), wherever it is placed."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if _is_upload(request):
            # The body is spooled, then copied while hashed (webapp.results.uploads.services): at
            # its peak the upload takes twice its size.
            if not room_for(2 * _declared_length(request)):
                return refused(request)
            if request.content_type == "multipart/form-data":
                try:
                    request.FILES  # noqa: B018 - spool the body now, where a full disk is answered
                except OSError as exc:
                    if not is_disk_full(exc):
                        raise
                    discard_spooled(request)
                    return refused(request)
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not (is_disk_full(exception) and _is_upload(request)):
            return None
        discard_spooled(request)
        return refused(request)
