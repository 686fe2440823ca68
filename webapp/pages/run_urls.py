"""URLs of the run pages (``/runs/result/<id>/``, ``/runs/agent/<id>/``) and their API
(``/api/runs/<id>/...`` for graded runs, ``/api/runs/agent/<id>/...`` for agent runs)."""

from django.urls import path

from webapp.pages import runs as run_pages

PAGES = (
    ("", run_pages.run_page, "run-page"),
    ("download.zip", run_pages.run_download, "run-page-download"),
)
API = (
    ("", run_pages.RunDetailApi, "api-run"),
    ("files/<path:path>", run_pages.RunFileApi, "api-run-file"),
    ("search", run_pages.RunSearchApi, "api-run-search"),
    ("trajectory/", run_pages.RunTrajectoryApi, "api-run-trajectory"),
    ("timeline", run_pages.RunTimelineApi, "api-run-timeline"),
)

page_urlpatterns = [
    path(f"{kind}/<int:pk>/{tail}", view, {"kind": kind}, name=f"{name}-{kind}")
    for kind in run_pages.KINDS
    for tail, view, name in PAGES
]
api_urlpatterns = [
    path(f"{prefix}<int:pk>/{tail}", api.as_view(), {"kind": kind}, name=f"{name}-{kind}")
    for kind, prefix in (("result", ""), ("agent", "agent/"))
    for tail, api, name in API
]
