from django.urls import path

from webapp.integrity import views

urlpatterns = [
    path("", views.review_queue, name="integrity-queue"),
    path("runs/<int:run_id>/", views.run_check_page, name="integrity-run"),
]
