from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path

from webapp.competitions import views as competition_views
from webapp.ops import status
from webapp.pages import admin_links, api_docs, my_work, run_urls
from webapp.pages import competition as competition_page
from webapp.pages import docs as docs_site
from webapp.results.pages import analysis as analysis_pages
from webapp.results.pages import disclosure as disclosure_pages
from webapp.results.pages import views as result_views
from webapp.results.uploads import views as upload_views
from webapp.runs import views as run_views

# The admin says whose it is (Django's default is "Django administration").
admin.site.site_header = "mleboard administration"
admin.site.site_title = "mleboard admin"
admin.site.index_title = "Curation, review and the site's people"
# No navigation column beside every admin page: it repeats the index (one click away in the
# breadcrumbs) and took 300 px of a 1,280 px window, which cut off the competition list.
admin.site.enable_nav_sidebar = False

urlpatterns = [
    path("", result_views.home, name="home"),
    path("competitions/", competition_views.competition_list, name="competition-list"),
    path(
        "competitions/<str:slug>/", competition_page.competition_detail, name="competition-detail"
    ),
    path("experiments/<int:pk>/", result_views.experiment_detail, name="experiment-detail"),
    path(
        "experiments/<int:pk>/conditions/",
        disclosure_pages.experiment_disclosure,
        name="experiment-disclosure",
    ),
    path(
        "experiments/<int:pk>/publish/",
        disclosure_pages.experiment_publish_page,
        name="experiment-publish",
    ),
    path(
        "experiments/<int:pk>/reports.<str:fmt>",
        result_views.experiment_reports_download,
        name="experiment-reports-download",
    ),
    path(
        "experiments/<int:pk>/failures/<str:key>/",
        analysis_pages.experiment_failure_runs,
        name="experiment-failure-runs",
    ),
    path("compare/", result_views.compare, name="compare"),
    path("changes/", include("webapp.corrections.urls")),
    path("me/", my_work.my_work_page, name="my-work"),
    path("uploads/", upload_views.upload_list, name="upload-list"),
    path("uploads/new/", upload_views.upload_new, name="upload-new"),
    path("uploads/<int:pk>/", upload_views.upload_detail, name="upload-detail"),
    path("runs/", run_views.launch_list, name="launch-list"),
    path("runs/new/", run_views.launch_new, name="launch-new"),
    path("runs/<int:pk>/", run_views.launch_detail, name="launch-detail"),
    path("runs/", include(run_urls.page_urlpatterns)),
    path("agent-runs/<int:pk>/cancel/", run_views.agent_run_cancel_view, name="agent-run-cancel"),
    path("hosts/", run_views.host_list, name="host-list"),
    path("agents/", include("webapp.agentsubs.urls")),
    path("status/", status.status_page, name="status"),
    path("integrity/", include("webapp.integrity.urls")),
    # The site's own account pages first (sign-in behind django-axes, API tokens, invites),
    # then allauth's: sign-up, email verification, password reset, email addresses.
    path("accounts/", include("webapp.accounts.urls")),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Before the admin's own: its "view on site" redirect obeys the visibility rule.
    path(
        "admin/r/<int:content_type_id>/<path:object_id>/",
        admin.site.admin_view(admin_links.view_on_site),
        name="admin-view-on-site",
    ),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("webapp.project.api_urls")),
    path("api/schema/", api_docs.SchemaView.as_view(), name="api-schema"),
    path("api/docs/", api_docs.swagger_view, name="api-docs"),
    path("api/redoc/", api_docs.redoc_view, name="api-redoc"),
    path("docs/", docs_site.docs_page, name="docs"),
    path("docs/<path:path>", docs_site.docs_page, name="docs-page"),
    path("api/redoc/redoc.standalone.js", api_docs.redoc_bundle, name="api-redoc-bundle"),
    # Browsers (and the admin's pages, which name no icon) ask for /favicon.ico: sent to the
    # icon's hashed name, which changes with the icon, so not a permanent redirect.
    path("favicon.ico", lambda request: HttpResponseRedirect(static("img/favicon.svg"))),
]

# Under /api/, an address no route takes is a JSON 404 like the API's own.
handler404 = "webapp.core.bad_input.not_found"
# The database away is a 503 with Retry-After, wherever the query was made (webapp/edge/outage.py).
handler500 = "webapp.edge.outage.server_error"
