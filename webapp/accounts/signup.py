"""Who may make an account (``MLEBOARD_SIGNUP``), and invites.

``closed``: only an operator makes accounts. ``invite``: a person who opened a valid invite
link may sign up (once; the invited address counts as verified). ``open``: anyone may, and
must verify their email before signing in. Every account made here may upload; launching
agent runs stays a permission an operator grants.
"""

from __future__ import annotations

import datetime as dt

from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.models import EmailAddress
from allauth.core.exceptions import ImmediateHttpResponse
from django.conf import settings
from django.contrib import messages
from django.core.mail import send_mail
from django.db import transaction
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone

from webapp.accounts.models import Invite

SESSION_KEY = "mleboard_invite"


def signup_mode() -> str:
    return settings.MLEBOARD_SIGNUP


def how_to_get_an_account() -> str:
    """What the sign-in page tells a person without an account."""
    return {
        "open": "No account yet? Sign up: it takes an email address you can confirm.",
        "invite": "Accounts are by invitation: ask the site's staff for an invite link.",
        "closed": "Accounts are made by the site's operator: ask them for one.",
    }[signup_mode()]


def invite_create(email: str, *, by, request=None) -> Invite:
    """A new invite for ``email``, mailed to it with its link."""
    invite = Invite.objects.create(
        email=email,
        created_by=by,
        expires_at=timezone.now() + dt.timedelta(days=settings.MLEBOARD_INVITE_DAYS),
    )
    link = invite_link(invite, request)
    send_mail(
        f"{settings.ACCOUNT_EMAIL_SUBJECT_PREFIX}You are invited to mleboard",
        f"You are invited to make an account on mleboard, to submit MLE-bench runs.\n\n"
        f"Open this link to sign up (it works once, until "
        f"{invite.expires_at:%Y-%m-%d}):\n\n{link}\n",
        None,
        [email],
    )
    return invite


def invite_link(invite: Invite, request=None) -> str:
    path = reverse("invite-accept", args=[invite.key])
    return request.build_absolute_uri(path) if request is not None else path


def invite_usable(key: str | None) -> Invite | None:
    """The invite with ``key`` if it is unused and not expired."""
    if not key or len(key) > 64:
        return None
    return Invite.objects.filter(
        key=key, used_by__isnull=True, expires_at__gt=timezone.now()
    ).first()


def invite_accept(key: str, user) -> bool:
    """Spend the invite on ``user`` (once); True when it was still usable."""
    return bool(
        Invite.objects.filter(key=key, used_by__isnull=True, expires_at__gt=timezone.now()).update(
            used_by=user, used_at=timezone.now()
        )
    )


def email_unverified(user) -> bool:
    """True for an account that signed up here and has not confirmed its email yet
    (accounts an operator made have no email record and are not held back)."""
    addresses = EmailAddress.objects.filter(user=user)
    return addresses.exists() and not addresses.filter(verified=True).exists()


def reset_confirms_address(user) -> bool:
    """A password reset through its mailed link proves the person reads the address it
    was mailed to; confirm that address. Only an account with one address can say which
    it was (the reset link names the account, not the address), and the link is void once
    the account's addresses change (allauth's token covers them): an account holding
    someone else's address beside its own confirms nothing this way. True when an address
    was confirmed."""
    addresses = {
        address.lower()
        for address in EmailAddress.objects.filter(user=user).values_list("email", flat=True)
    }
    if user.email:
        addresses.add(user.email.lower())
    if len(addresses) != 1:
        return False
    (address,) = addresses
    return bool(EmailAddress.objects.filter(user=user, email__iexact=address).update(verified=True))


class AccountAdapter(DefaultAccountAdapter):
    def set_password(self, user, password) -> None:
        super().set_password(user, password)
        match = getattr(getattr(self, "request", None), "resolver_match", None)
        if match is not None and match.url_name == "account_reset_password_from_key":
            reset_confirms_address(user)

    def is_open_for_signup(self, request) -> bool:
        mode = signup_mode()
        if mode == "open":
            return True
        if mode == "invite":
            return invite_usable(request.session.get(SESSION_KEY)) is not None
        return False

    def save_user(self, request, user, form, commit=True):
        if signup_mode() != "invite":
            return super().save_user(request, user, form, commit)
        with transaction.atomic():
            user = super().save_user(request, user, form, commit=True)
            if not invite_accept(request.session.get(SESSION_KEY, ""), user):
                # Spent or expired meanwhile (two sign-ups raced): no account without one.
                transaction.set_rollback(True)
                messages.error(
                    request, "This invite was used or has expired: ask staff for a new one."
                )
                raise ImmediateHttpResponse(redirect("login"))
        request.session.pop(SESSION_KEY, None)
        return user
