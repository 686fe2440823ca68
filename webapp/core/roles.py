"""The groups the site ships, declared once: reviewers and operators, and the permissions
each holds (``webapp.core.visibility.Perm`` says what each permission lets a person do).

Every ``migrate`` brings the groups up to this declaration (a ``post_migrate`` handler,
as Django makes its permissions), so ``make run``'s setup, compose's web, a new test
database and a flushed one all have them. A permission an admin added to a group by hand
stays; one declared here and missing is added back. Put a person in a group in the admin
(Users › groups)."""

from __future__ import annotations

from webapp.core.visibility import Perm

REVIEWERS = "reviewers"
OPERATORS = "operators"

GROUPS: dict[str, tuple[str, ...]] = {
    # Decide on flagged runs: every run and its code, the reference corpora, the queue.
    REVIEWERS: (
        Perm.REVIEW,
        Perm.SEE_ALL_EXPERIMENTS,
        Perm.SEE_REFERENCES,
        "integrity.add_referencecorpus",
        "integrity.view_runcheck",
        "integrity.view_reviewitem",
        "results.view_run",
        "results.view_gradereport",
    ),
    # Run the site: publish, re-grade and cancel anyone's work, the run hosts, and the
    # scaffolds' template code that peer comparisons ignore.
    OPERATORS: (
        Perm.PUBLISH,
        Perm.REGRADE_ANY,
        Perm.CANCEL_ANY,
        Perm.MANAGE_HOSTS,
        Perm.SEE_STATUS,
        Perm.LAUNCH,
        Perm.APPROVE_AGENTS,
        Perm.SUBMIT_AGENTS,
        Perm.SEE_ALL_EXPERIMENTS,
        Perm.SEE_ALL_UPLOADS,
        Perm.SEE_ALL_LAUNCHES,
        "results.change_experiment",
        "results.view_reviewqueue",
        "results.change_reviewqueue",
        "runs.view_agentrun",
        "integrity.add_scaffoldtemplate",
        "integrity.change_scaffoldtemplate",
        "integrity.delete_scaffoldtemplate",
        "integrity.view_scaffoldtemplate",
    ),
}


def sync_groups(using: str = "default") -> list[str]:
    """Make each declared group exist and hold its declared permissions. Returns the
    permissions not found: those of models not migrated yet (a partial ``migrate``; the
    next one adds them). tests/webapp/accounts/test_permissions.py checks that none is missing
    once everything is migrated, so a misspelt one does not pass unnoticed."""
    from django.contrib.auth.models import Group, Permission

    missing = []
    for name, perms in GROUPS.items():
        group, _ = Group.objects.using(using).get_or_create(name=name)
        wanted = set()
        for perm in perms:
            app_label, codename = perm.split(".")
            found = list(
                Permission.objects.using(using)
                .filter(content_type__app_label=app_label, codename=codename)
                .values_list("pk", flat=True)
            )
            wanted.update(found)
            if not found:
                missing.append(perm)
        group.permissions.add(*wanted)
    return missing


def _after_migrate(sender, app_config=None, using="default", apps=None, **kwargs) -> None:
    # After the last app's permissions exist (post_migrate goes app by app, in order).
    from django.apps import apps as installed

    with_models = [a for a in installed.get_app_configs() if a.models_module is not None]
    if with_models and app_config is with_models[-1]:
        sync_groups(using)


def connect() -> None:
    from django.db.models.signals import post_migrate

    post_migrate.connect(_after_migrate, dispatch_uid="webapp.core.roles.sync_groups")
