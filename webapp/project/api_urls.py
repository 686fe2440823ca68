from django.urls import include, path

from webapp.agentsubs.urls import api_urlpatterns as agent_api_urls
from webapp.competitions import api as competition_api
from webapp.corrections import api as corrections_api
from webapp.ops import status
from webapp.pages import run_urls
from webapp.results import api as result_api
from webapp.results.uploads import api as upload_api
from webapp.results.uploads import tus as tus_api
from webapp.runs import api as run_api

urlpatterns = [
    *agent_api_urls,
    path(
        "competitions/", competition_api.CompetitionListApi.as_view(), name="api-competition-list"
    ),
    path(
        "competitions/<str:slug>/",
        competition_api.CompetitionDetailApi.as_view(),
        name="api-competition-detail",
    ),
    path("changes/", corrections_api.ChangesApi.as_view(), name="api-changes"),
    path("leaderboard/", result_api.LeaderboardApi.as_view(), name="api-leaderboard"),
    path("compare/", result_api.CompareApi.as_view(), name="api-compare"),
    path("experiments/", result_api.ExperimentListApi.as_view(), name="api-experiment-list"),
    path(
        "experiments/<int:pk>/",
        result_api.ExperimentDetailApi.as_view(),
        name="api-experiment-detail",
    ),
    path(
        "experiments/<int:pk>/reports/",
        result_api.ExperimentReportsApi.as_view(),
        name="api-experiment-reports",
    ),
    path(
        "experiments/<int:pk>/disclosure/",
        result_api.ExperimentDisclosureApi.as_view(),
        name="api-experiment-disclosure",
    ),
    path(
        "experiments/<int:pk>/publish/",
        result_api.ExperimentPublishApi.as_view(),
        name="api-experiment-publish",
    ),
    path(
        "experiments/<int:pk>/regrade/",
        upload_api.ExperimentRegradeApi.as_view(),
        name="api-experiment-regrade",
    ),
    path("launches/", run_api.LaunchCreateApi.as_view(), name="api-launch-create"),
    path("launches/<int:pk>/", run_api.LaunchDetailApi.as_view(), name="api-launch-detail"),
    path("agent-runs/<int:pk>/", run_api.AgentRunDetailApi.as_view(), name="api-agent-run-detail"),
    path(
        "agent-runs/<int:pk>/cancel/",
        run_api.AgentRunCancelApi.as_view(),
        name="api-agent-run-cancel",
    ),
    path("uploads/", upload_api.UploadCreateApi.as_view(), name="api-upload-create"),
    path("uploads/<int:pk>/", upload_api.UploadDetailApi.as_view(), name="api-upload-detail"),
    path("uploads/tus/", tus_api.TusCreateApi.as_view(), name="api-tus-create"),
    path("uploads/tus/<uuid:key>/", tus_api.TusUploadApi.as_view(), name="api-tus-upload"),
    path("runs/", include(run_urls.api_urlpatterns)),
    path("hosts/", run_api.HostListApi.as_view(), name="api-host-list"),
    path("status/", status.StatusApi.as_view(), name="api-status"),
]
