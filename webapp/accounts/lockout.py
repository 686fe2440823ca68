"""The name django-axes counts failed sign-ins under.

Sign-in matches a user name without regard to case (allauth's backend compares
``stored.lower() == given.lower()``), so the lockout must count every spelling of a name
as one: otherwise ``Frank`` and ``fRANK`` each get their own allowance against the
account ``frank``, and a right password under a new spelling clears the lock."""

from __future__ import annotations

import unicodedata


def lockout_username(request, credentials: dict | None = None) -> str | None:
    """The user name of a sign-in attempt as the lockout counts it: NFKC-normalized (as
    Django's sign-in form reads it) and lower-cased (as the backends match it)."""
    if credentials:
        name = credentials.get("username")
    else:
        name = getattr(request, "data", request.POST).get("username")
    if not isinstance(name, str):
        return None
    return unicodedata.normalize("NFKC", name).strip().lower()
