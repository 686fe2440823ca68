from django.urls import path

from webapp.accounts import views

urlpatterns = [
    path("login/", views.SignInView.as_view(), name="login"),
    path("tokens/", views.token_list, name="token-list"),
    path("tokens/<str:token_id>/revoke/", views.token_revoke, name="token-revoke"),
    path("invite/<str:key>/", views.invite_accept, name="invite-accept"),
]
