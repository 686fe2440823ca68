"""Agents people submit to be run here, and the reproductions run with them.

An ``AgentSubmission`` is one version of an agent (its archive, the sha256 of its files,
its definition) going through review, then an offline build on a run host. A
``Reproduction`` is a launch of a built submission over a split × seeds whose reproduced
experiment is set against the experiment it reproduces, with a verdict per split.
"""

from django.conf import settings
from django.db import models
from django.urls import reverse

from webapp.work import Dispatched
from webapp.work.lifecycle import LifecycleFields


def archive_path(instance: "AgentSubmission", filename: str) -> str:
    return f"agent-submissions/{instance.name}-v{instance.version}/{instance.sha256[:12]}.archive"


class AgentSubmission(Dispatched):
    class Status(models.TextChoices):
        SUBMITTED = "submitted", "Submitted: waiting for review"
        APPROVED = "approved", "Approved: waiting for its build"
        BUILDING = "building", "Building"
        BUILT = "built", "Built"
        REFUSED = "refused", "Refused"
        FAILED = "failed", "Failed"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_submissions"
    )
    name = models.CharField(max_length=100)  # agent.yaml's
    version = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64)  # of its files, names and contents
    archive = models.FileField(upload_to=archive_path, max_length=400)
    original_name = models.CharField(max_length=255)
    files = models.JSONField(default=list)  # [{"name", "size"}]
    definition = models.JSONField(default=dict)  # agent.yaml as read
    requirements = models.TextField(blank=True)
    claims = models.ForeignKey(
        "results.Experiment",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="claimed_by_agents",
        help_text="the experiment it claims to reproduce",
    )
    status = models.CharField(
        max_length=12, choices=Status.choices, default=Status.SUBMITTED, db_index=True
    )
    # The reviewer's reason, or why the build refused it or failed: the submitter sees it.
    reason = models.TextField(blank=True)
    refusal = models.CharField(max_length=20, blank=True)  # a short code for programs
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="agents_reviewed",
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    build_log = models.TextField(blank=True)
    image_ref = models.CharField(max_length=200, blank=True)
    image_bytes = models.BigIntegerField(null=True, blank=True)
    build_seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When it entered its current state: the state's deadline counts from here.
    status_since = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        permissions = [
            ("submit_agents", "Can submit agents"),
            ("approve_agents", "Can approve agents"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="agent_submission_version")
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    @property
    def site_name(self) -> str:
        """The name it runs under on this site: one per version."""
        return f"{self.name}-v{self.version}"

    def get_absolute_url(self) -> str:
        return reverse("agent-submission-detail", args=[self.pk])


class Reproduction(LifecycleFields, models.Model):
    class Status(models.TextChoices):
        REPRODUCING = "reproducing", "Reproducing"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    submission = models.ForeignKey(
        AgentSubmission, on_delete=models.CASCADE, related_name="reproductions"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reproductions"
    )
    launch = models.OneToOneField(
        "runs.Launch", on_delete=models.PROTECT, related_name="reproduction"
    )
    target = models.ForeignKey(
        "results.Experiment", on_delete=models.CASCADE, related_name="reproductions"
    )
    split = models.CharField(max_length=40)
    seeds = models.PositiveIntegerField()
    status = models.CharField(
        max_length=12, choices=Status.choices, default=Status.REPRODUCING, db_index=True
    )
    error = models.TextField(blank=True)
    # Per split: benchmark.reproduction.SplitVerdict.to_dict(); ``verdict`` the headline.
    verdicts = models.JSONField(default=list, blank=True)
    verdict = models.CharField(max_length=100, blank=True)
    # Tokens metered at the bridge and run hours, summed over its runs.
    cost = models.JSONField(default=dict, blank=True)
    deadline_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"reproduction {self.pk} of experiment {self.target_id}"

    @property
    def experiment_id(self) -> int | None:
        return self.launch.experiment_id

    def get_absolute_url(self) -> str:
        return reverse("reproduction-detail", args=[self.pk])
