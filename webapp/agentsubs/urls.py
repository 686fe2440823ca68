from django.urls import path

from webapp.agentsubs import api, views

urlpatterns = [
    path("", views.agent_list, name="agent-submission-list"),
    path("new/", views.agent_new, name="agent-submission-new"),
    path("<int:pk>/", views.agent_detail, name="agent-submission-detail"),
    path("<int:pk>/review/", views.agent_review, name="agent-submission-review"),
    path("<int:pk>/reproduce/", views.agent_reproduce, name="agent-submission-reproduce"),
    path("reproductions/<int:pk>/", views.reproduction_detail, name="reproduction-detail"),
]

api_urlpatterns = [
    path("agents/", api.AgentSubmitApi.as_view(), name="api-agent-submit"),
    path("agents/<int:pk>/", api.AgentDetailApi.as_view(), name="api-agent-detail"),
    path("agents/<int:pk>/review/", api.AgentReviewApi.as_view(), name="api-agent-review"),
    path(
        "agents/<int:pk>/reproductions/",
        api.AgentReproduceApi.as_view(),
        name="api-agent-reproduce",
    ),
    path(
        "reproductions/<int:pk>/",
        api.ReproductionDetailApi.as_view(),
        name="api-reproduction-detail",
    ),
]
