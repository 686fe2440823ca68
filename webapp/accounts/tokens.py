"""API tokens: made, listed, revoked and checked in one place.

A token is ``mlb_`` and 64 hex digits, shown once; the database keeps its first 15
characters (to find it) and its SHA-512 digest (django-rest-knox). Tokens made before
(``rest_framework.authtoken``, kept in clear) are moved here by a migration; one made
since with ``drf_create_token`` is moved at its first use. Either way the same string keeps
working and no clear copy stays behind.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re

from django.db import transaction
from django.utils import timezone
from knox.auth import TokenAuthentication
from knox.settings import CONSTANTS
from rest_framework import exceptions

from webapp.accounts.models import ApiToken

LEGACY_NAME = "token from before named tokens (migrated)"
# How stale "last used" may be: one write a minute per token at most, not one per request.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)
# Anything else in the header is not one of ours: refused before it reaches a query.
_TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_]{20,200}$")
INVALID = (
    "Invalid token: it was revoked or never existed. Make a new one on the site's "
    "API tokens page (/accounts/tokens/) and pass it as 'Authorization: Token <token>'."
)


def token_create(user, name: str) -> tuple[ApiToken, str]:
    """A new token for ``user`` named ``name``; returns the row and the token, which is
    never shown again."""
    name = (name or "").strip()[:100] or "API token"
    return ApiToken.objects.create(user=user, expiry=None, name=name)


def token_revoke(user, token_id: str) -> bool:
    """Revoke one of ``user``'s tokens (by its digest); True when it existed."""
    deleted, _ = ApiToken.objects.filter(user=user, digest=token_id).delete()
    return bool(deleted)


def tokens_of(user):
    """The user's tokens, newest first."""
    return ApiToken.objects.filter(user=user).order_by("-created")


def digest_of(token: str) -> str:
    """The digest stored for ``token`` (knox's SHA-512 of its UTF-8 bytes)."""
    return hashlib.sha512(token.encode()).hexdigest()


def legacy_token_migrate(key: str) -> ApiToken | None:
    """Move a clear ``rest_framework.authtoken`` key into a hashed token (the same string
    keeps working); None when there is no such key."""
    from rest_framework.authtoken.models import Token

    with transaction.atomic():
        legacy = Token.objects.select_for_update().filter(key=key).first()
        if legacy is None:
            return None
        token, _ = ApiToken.objects.get_or_create(
            digest=digest_of(key),
            defaults={
                "token_key": key[: CONSTANTS.TOKEN_KEY_LENGTH],
                "user_id": legacy.user_id,
                "name": LEGACY_NAME,
            },
        )
        legacy.delete()
    return token


def token_touch(token: ApiToken) -> None:
    """Record that ``token`` was used (at most once a minute)."""
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(digest=token.digest).update(last_used_at=now)
        token.last_used_at = now


class ApiTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <token>`` against the hashed tokens; a token of the old kind
    is moved into them on first use. Malformed headers fail as an invalid token."""

    def authenticate_credentials(self, token: bytes):
        try:
            text = token.decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(INVALID) from None
        if not _TOKEN_SHAPE.match(text):
            raise exceptions.AuthenticationFailed(INVALID)
        try:
            return super().authenticate_credentials(token)
        except exceptions.AuthenticationFailed:
            migrated = legacy_token_migrate(text)
            if migrated is None:
                raise exceptions.AuthenticationFailed(INVALID) from None
            return self.validate_user(migrated)

    def validate_user(self, auth_token):
        user, auth_token = super().validate_user(auth_token)
        token_touch(auth_token)
        return user, auth_token
