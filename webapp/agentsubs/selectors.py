"""Reads of submitted agents and reproductions, as the viewer may see them
(``webapp.core.visibility``)."""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from webapp.agentsubs.models import AgentSubmission, Reproduction
from webapp.core.visibility import can_see, visible_to


def submissions_visible_to(user) -> QuerySet:
    """A person's own submissions; with "Can approve agents", everyone's."""
    return visible_to(user, AgentSubmission.objects.select_related("owner", "claims"))


def submission_visible_to(user, pk) -> AgentSubmission:
    return get_object_or_404(submissions_visible_to(user), pk=pk)


def reproductions_visible_to(user, submission: AgentSubmission | None = None) -> QuerySet:
    """Reproductions ``user`` may see (public when both experiments are published)."""
    qs = visible_to(user, Reproduction.objects.all()).select_related(
        "launch__experiment", "target", "submission"
    )
    return qs.filter(submission=submission) if submission is not None else qs


def reproduction_visible_to(user, pk) -> Reproduction | None:
    return reproductions_visible_to(user).filter(pk=pk).first()


def shown_to(user, reproductions: list[Reproduction]) -> list[Reproduction]:
    """Of ``reproductions``, those ``user`` may see."""
    return [r for r in reproductions if can_see(user, r)]
