from django.urls import path

from webapp.corrections import views

urlpatterns = [
    path("", views.changes_page, name="changes"),
    path("feed.atom", views.ChangesFeed(), name="changes-feed"),
]
