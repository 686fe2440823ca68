"""The corrections log's entries: append-only. An entry is never changed or deleted; the
only writes after its insertion are the figures "after" filled in once (when the refresh
stores them) and a link set to null when what it names is deleted. The model refuses the
rest (``save`` of a stored row, a queryset's ``update`` and ``delete``), and on PostgreSQL
a trigger refuses it too (migration 0001)."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class AppendOnly(Exception):
    """A write the corrections log refuses."""


REFUSED = "the corrections log is append-only: entries are never changed or deleted"


class AppendOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnly(REFUSED)

    def delete(self):
        raise AppendOnly(REFUSED)

    update.queryset_only = True
    delete.queryset_only = True


class AppendOnlyModel(models.Model):
    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnly(REFUSED)
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly(REFUSED)


class Kind(models.TextChoices):
    REGRADE = "regrade", "Re-grade"
    DISQUALIFIED = "disqualified", "Disqualification"
    REINSTATED = "reinstated", "Disqualification reversed"
    ISSUE_ADDED = "known_issue_added", "Known issue added"
    ISSUE_REMOVED = "known_issue_removed", "Known issue removed"
    LEADERBOARD = "leaderboard_version", "New leaderboard version"
    PUBLISHED = "published_figures", "Published figures replaced"
    CATALOGUE = "catalogue", "Catalogue change"


class Role(models.TextChoices):
    OPERATOR = "operator", "operator"
    REVIEWER = "reviewer", "reviewer"
    SUBMITTER = "submitter", "submitter"
    SYSTEM = "system", "system"


class Subject(models.TextChoices):
    EXPERIMENT = "experiment", "experiment"
    COMPETITION = "competition", "competition"
    CATALOGUE = "catalogue", "catalogue"


class Correction(AppendOnlyModel):
    """One event that moved a published figure or a competition."""

    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    kind = models.CharField(max_length=30, choices=Kind.choices, db_index=True)
    subject_type = models.CharField(max_length=20, choices=Subject.choices)
    experiment = models.ForeignKey(
        "results.Experiment", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    competition = models.ForeignKey(
        "competitions.Competition",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # The subject's name when the event happened (kept if the subject is deleted).
    subject_name = models.CharField(max_length=300)
    reason = models.TextField()
    role = models.CharField(max_length=20, choices=Role.choices)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # An entry about an experiment deleted by the event itself (published figures
    # withdrawn from the list): public when the experiment was.
    public_when_gone = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["-created_at", "-id"], name="corrections_newest")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.subject_name}"


class CorrectionFigures(AppendOnlyModel):
    """One experiment's published Any Medal % per split before an event and after it
    (null until the refresh that follows the event stores the new figures)."""

    correction = models.ForeignKey(Correction, on_delete=models.PROTECT, related_name="figures")
    experiment = models.ForeignKey(
        "results.Experiment", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    experiment_name = models.CharField(max_length=300)
    # Of the clean subset (a known issue moves those), else of all competitions.
    clean = models.BooleanField(default=False)
    # split -> {"mean": ..., "standard_error": ...}
    before = models.JSONField(default=dict)
    after = models.JSONField(null=True, blank=True)
    filled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["correction", "experiment_name", "id"]
        verbose_name_plural = "correction figures"

    def __str__(self) -> str:
        return f"{self.experiment_name}: {self.correction}"

    @property
    def pending(self) -> bool:
        return self.filled_at is None
