"""Who may see what and who may act on it, declared once (django-rules style).

Seeing: each kind of object has an owner, perhaps a public subset, and the Django
permission that sees every row; a person sees the public rows, their own, and every row
with that permission (the staff flag plays no part). ``visible_to`` applies the rule to a
queryset and ``can_see`` to one object (through the same queryset), so a page, the API,
the admin and every text that names another object give the same answer. Acting (re-grade,
cancel, review, publish) is allowed to whom may see the object and either owns it (where
owners may) or holds the action's permission. The permissions are Django's, granted to the
groups ``webapp.core.roles`` declares.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Model, Q, QuerySet


class Perm:
    """The permissions the site asks, as ``app_label.codename``."""

    SEE_ALL_EXPERIMENTS = "results.view_experiment"  # every experiment, its runs and files
    SEE_ALL_UPLOADS = "results.view_upload"
    SEE_ALL_LAUNCHES = "runs.view_launch"  # every launch and agent run
    SEE_REFERENCES = "integrity.view_referencecorpus"  # reference code: reviewers' material
    REVIEW = "integrity.review_runcheck"  # disqualify, reopen, re-check
    REGRADE_ANY = "results.regrade_experiment"
    PUBLISH = "results.publish_experiment"
    CANCEL_ANY = "runs.cancel_agentrun"
    MANAGE_HOSTS = "runs.manage_runhost"
    LAUNCH = "runs.launch_agent_runs"
    SUBMIT_AGENTS = "agentsubs.submit_agents"
    APPROVE_AGENTS = "agentsubs.approve_agents"  # review submitted agents, see them all
    SEE_STATUS = "liveness.view_processbeat"  # the status page: workers, queues, disk
    # People's names where the site otherwise gives a role (the corrections log): those who
    # may list the accounts in the admin.
    SEE_NAMES = "auth.view_user"


@dataclass(frozen=True)
class SeeRule:
    see_all: str  # the permission that sees every row
    owner: str | None = None  # lookup of the owning user (None: nobody owns the rows)
    public: Q | None = None  # the rows everyone sees (None: none)


_PUBLISHED = Q(is_published=True)
_EXPERIMENT_PUBLISHED = Q(experiment__is_published=True)

# Keyed by model label. A model not here is not governed by this module (the catalogue,
# human leaderboards: public by nature) and ``visible_to`` refuses it.
SEE: dict[str, SeeRule] = {
    "results.Experiment": SeeRule(Perm.SEE_ALL_EXPERIMENTS, "owner", _PUBLISHED),
    "results.ReviewQueue": SeeRule(Perm.SEE_ALL_EXPERIMENTS, "owner", _PUBLISHED),
    "results.Run": SeeRule(Perm.SEE_ALL_EXPERIMENTS, "experiment__owner", _EXPERIMENT_PUBLISHED),
    "results.GradeReport": SeeRule(
        Perm.SEE_ALL_EXPERIMENTS, "experiment__owner", _EXPERIMENT_PUBLISHED
    ),
    "results.ExperimentAggregate": SeeRule(
        Perm.SEE_ALL_EXPERIMENTS, "experiment__owner", _EXPERIMENT_PUBLISHED
    ),
    "results.Upload": SeeRule(Perm.SEE_ALL_UPLOADS, "owner"),
    "runs.Launch": SeeRule(Perm.SEE_ALL_LAUNCHES, "owner"),
    "runs.AgentRun": SeeRule(Perm.SEE_ALL_LAUNCHES, "launch__owner"),
    "runs.SubmissionSnapshot": SeeRule(Perm.SEE_ALL_LAUNCHES, "agent_run__launch__owner"),
    "integrity.RunCheck": SeeRule(
        Perm.SEE_ALL_EXPERIMENTS, "run__experiment__owner", Q(run__experiment__is_published=True)
    ),
    "integrity.ReviewItem": SeeRule(
        Perm.SEE_ALL_EXPERIMENTS, "run__experiment__owner", Q(run__experiment__is_published=True)
    ),
    # The corrections log: an entry about a competition or the catalogue is public; one
    # about an experiment follows the experiment (once the experiment is deleted, it stays
    # public only if it was public then), and so does each experiment's before → after.
    "corrections.Correction": SeeRule(
        Perm.SEE_ALL_EXPERIMENTS,
        "experiment__owner",
        Q(subject_type__in=("competition", "catalogue"))
        | _EXPERIMENT_PUBLISHED
        | Q(subject_type="experiment", experiment__isnull=True, public_when_gone=True),
    ),
    "corrections.CorrectionFigures": SeeRule(
        Perm.SEE_ALL_EXPERIMENTS,
        "experiment__owner",
        _EXPERIMENT_PUBLISHED | Q(experiment__isnull=True, correction__public_when_gone=True),
    ),
    "agentsubs.AgentSubmission": SeeRule(Perm.APPROVE_AGENTS, "owner"),
    # A reproduction is the site's check of a claim: public with the experiment it
    # reproduces (the reproduced experiment's own page keeps its own rule).
    "agentsubs.Reproduction": SeeRule(
        Perm.SEE_ALL_EXPERIMENTS, "owner", Q(target__is_published=True)
    ),
    "integrity.ReferenceCorpus": SeeRule(Perm.SEE_REFERENCES),
    "integrity.ReferenceFile": SeeRule(Perm.SEE_REFERENCES),
}


@dataclass(frozen=True)
class ActRule:
    perm: str  # the permission that may act on anyone's (or, without owner, on any) object
    owner: str | None = None  # lookup of the owner, who may act on their own


ACT: dict[tuple[str, str], ActRule] = {
    ("regrade", "results.Experiment"): ActRule(Perm.REGRADE_ANY, "owner"),
    ("publish", "results.Experiment"): ActRule(Perm.PUBLISH),
    # State the conditions it ran under: its owner, or whoever may publish it.
    ("disclose", "results.Experiment"): ActRule(Perm.PUBLISH, "owner"),
    ("cancel", "runs.AgentRun"): ActRule(Perm.CANCEL_ANY, "launch__owner"),
    ("review", "results.Run"): ActRule(Perm.REVIEW),  # decide on its check
}


def _label(model) -> str:
    return model._meta.label


def _signed_in(user) -> bool:
    return bool(getattr(user, "is_authenticated", False) and getattr(user, "is_active", False))


def has_perm(user, perm: str) -> bool:
    """``user`` holds ``perm`` (directly, through a group, or as a superuser)."""
    return _signed_in(user) and user.has_perm(perm)


def may_see_names(user) -> bool:
    """Whether ``user`` is shown who acted by name; everyone else, by role."""
    return has_perm(user, Perm.SEE_NAMES)


def visible_to(user, queryset: QuerySet) -> QuerySet:
    """The rows of ``queryset`` that ``user`` may see."""
    rule = SEE[_label(queryset.model)]
    if has_perm(user, rule.see_all):
        return queryset
    allowed = rule.public
    if rule.owner is not None and _signed_in(user):
        mine = Q(**{rule.owner: user})
        allowed = mine if allowed is None else allowed | mine
    return queryset.filter(allowed) if allowed is not None else queryset.none()


def can_see(user, obj: Model | None) -> bool:
    """Whether ``user`` may see ``obj`` (None, a deleted object: no): the queryset rule
    asked of this one row."""
    if obj is None or obj.pk is None:
        return False
    model = type(obj)
    if model._meta.proxy:
        model = model._meta.concrete_model
    return visible_to(user, model._default_manager.filter(pk=obj.pk)).exists()


def actionable(user, action: str, queryset: QuerySet) -> QuerySet:
    """The rows of ``queryset`` that ``user`` may see and may ``action``."""
    rule = ACT[(action, _label(queryset.model))]
    seen = visible_to(user, queryset) if _label(queryset.model) in SEE else queryset
    if has_perm(user, rule.perm):
        return seen
    if rule.owner is not None and _signed_in(user):
        return seen.filter(**{rule.owner: user})
    return seen.none()


def may(user, action: str, obj: Model) -> bool:
    """Whether ``user`` may ``action`` ``obj`` (the rule of ``actionable``, for one row)."""
    if obj is None or obj.pk is None:
        return False
    return actionable(user, action, type(obj)._default_manager.filter(pk=obj.pk)).exists()


def template_context(request) -> dict:
    """``can``: what the person may do, for templates (``{% if can.review %}``), one flag
    per ``Perm`` (lower case), asked only when a template reads it."""
    from django.utils.functional import SimpleLazyObject

    user = request.user
    return {
        "can": SimpleLazyObject(
            lambda: {
                name.lower(): has_perm(user, perm)
                for name, perm in vars(Perm).items()
                if not name.startswith("_")
            }
        )
    }


class VisibleInAdmin:
    """A ``ModelAdmin`` mixin: its lists, pages and actions hold only the rows the person
    may see by the rule above, so the admin's model permissions never show more."""

    def get_queryset(self, request):
        return visible_to(request.user, super().get_queryset(request))
