"""Account pages of the site's own: sign-in, API tokens, and opening an invite."""

from allauth.account.adapter import get_adapter
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from webapp.accounts import signup, tokens
from webapp.accounts.forms import SignInForm, TokenCreateForm


class SignInView(auth_views.LoginView):
    authentication_form = SignInForm


@login_required
def token_list(request):
    """The user's API tokens: name, created, last used, revoke; and a form for a new one,
    whose value is shown on this page once."""
    form = TokenCreateForm(request.POST or None)
    new_token = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            _row, new_token = tokens.token_create(request.user, form.cleaned_data["name"])
            form = TokenCreateForm()
        else:
            status = 400
    response = render(
        request,
        "accounts/tokens.html",
        {"tokens": tokens.tokens_of(request.user), "form": form, "new_token": new_token},
        status=status,
    )
    # The token is on this page once: never kept by a browser or a proxy.
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke(request, token_id: str):
    if tokens.token_revoke(request.user, token_id):
        messages.success(request, "Token revoked: it no longer works.")
    else:
        messages.error(request, "No such token (already revoked?).")
    return redirect("token-list")


def invite_accept(request, key: str):
    """An invite link: remember it for the sign-up form and take the invited address as
    verified; a spent or expired one says so."""
    invite = signup.invite_usable(key)
    if invite is None or signup.signup_mode() != "invite":
        return render(request, "accounts/invite_invalid.html", status=404)
    request.session[signup.SESSION_KEY] = invite.key
    get_adapter(request).stash_verified_email(request, invite.email)
    request.session["account_invite_email"] = invite.email
    return redirect("account_signup")
