"""The documentation site (``mkdocs.yml``, ``docs/``), served at ``/docs/`` as ``make docs``
built it into ``var/docs/`` (``DOCS_ROOT``). Plain files, read-only; a site whose docs were
not built says so and points at the same pages in the source."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.http import Http404
from django.shortcuts import render
from django.views.static import serve


def docs_page(request, path: str = ""):
    root = settings.DOCS_ROOT
    if not (root / "index.html").is_file():
        return render(request, "docs_not_built.html", status=404)
    try:
        return serve(request, path or "index.html", document_root=root)
    except SuspiciousFileOperation:  # a path out of the folder: nothing there
        raise Http404 from None
    except OSError:  # a name the file system refuses (over 255 bytes): no such page either
        raise Http404 from None
