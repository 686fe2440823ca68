"""Who sees what, written once: staff see every row; a signed-in person sees their own rows
and the public ones; anyone else sees the public ones only."""

from django.db.models import Q, QuerySet


def visible_to(user, queryset: QuerySet, *, owner: str = "owner", public: Q | None = None):
    """The rows of ``queryset`` that ``user`` may see. ``owner`` is the lookup of the
    owning user; ``public`` the rows everyone may see (None: no row is public)."""
    if getattr(user, "is_staff", False):
        return queryset
    if getattr(user, "is_authenticated", False):
        mine = Q(**{owner: user})
        return queryset.filter(mine | public if public is not None else mine)
    return queryset.filter(public) if public is not None else queryset.none()
