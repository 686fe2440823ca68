"""A refusal for want of a permission: a 403 that names the permission, so the person
knows what to ask for (a 404 "not found" sent people looking for a moved page)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied


def permission_refused(perm: str, doing: str) -> PermissionDenied:
    """``PermissionDenied`` saying that ``doing`` takes ``perm`` ("app_label.codename"),
    named as the admin lists it."""
    from django.contrib.auth.models import Permission

    app_label, codename = perm.split(".", 1)
    name = (
        Permission.objects.filter(content_type__app_label=app_label, codename=codename)
        .values_list("name", flat=True)
        .first()
    ) or perm
    return PermissionDenied(
        f"{doing} takes the permission “{name}” ({perm}), which your account does not "
        "have. The site's operators grant it."
    )
