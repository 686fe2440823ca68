"""People of the site's groups for tests (``webapp.core.roles``)."""


def member_of(django_user_model, group: str, username: str, password: str = "", **fields):
    """A user in one of the site's groups (``webapp.core.roles``), with nothing else."""
    from django.contrib.auth.models import Group

    password = password or f"pw-{username}-123"
    user = django_user_model.objects.create_user(username, password=password, **fields)
    user.groups.add(Group.objects.get(name=group))
    return user
