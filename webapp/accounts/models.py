"""API tokens a user manages, and the invites staff send when sign-up is by invitation."""

import secrets

from django.conf import settings
from django.db import models
from knox.models import AbstractAuthToken


class ApiToken(AbstractAuthToken):
    """A named API token. Only its SHA-512 digest is stored (django-rest-knox): the token
    itself is shown once, when it is made. Revoking deletes the row, so it fails at once."""

    name = models.CharField(max_length=100)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"


def _invite_key() -> str:
    return secrets.token_urlsafe(24)


class Invite(models.Model):
    """An invitation to make an account (``MLEBOARD_SIGNUP=invite``): one use, until
    ``expires_at``."""

    email = models.EmailField()
    key = models.CharField(max_length=64, unique=True, default=_invite_key, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_by = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="invite",
    )
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"invite for {self.email}"
