from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.urls import reverse

from webapp.accounts.signup import email_unverified
from webapp.core.bad_input import LengthBoundForm


class SignInForm(LengthBoundForm, AuthenticationForm):
    """The site's sign-in (username and password, behind django-axes): an account that
    signed up here signs in once its email address is confirmed."""

    def confirm_login_allowed(self, user):
        super().confirm_login_allowed(user)
        if email_unverified(user):
            raise forms.ValidationError(
                "Confirm your email address first: open the link we sent you. No message? "
                f"Ask for a new one at {reverse('account_email')} once signed in, or use "
                f"'Forgot your password?' ({reverse('account_reset_password')}), which also "
                "confirms the address.",
                code="unverified",
            )


class AdminSignInForm(LengthBoundForm, AdminAuthenticationForm):
    """The admin's sign-in, with its user name's length enforced (as the site's)."""


class TokenCreateForm(forms.Form):
    name = forms.CharField(
        max_length=100,
        help_text="Where it will be used, e.g. “laptop” or “cluster submit job”.",
    )
