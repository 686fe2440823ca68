"""Agent runs launched from the site: a launch (agent x competitions x seeds x
resources) fans out into one AgentRun per (competition, seed), each a container run
through the ``runs`` queue whose outputs are graded like an upload."""

from django.conf import settings
from django.db import models
from django.urls import reverse

from webapp.work import Dispatched


class Launch(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="launches"
    )
    agent_name = models.CharField(max_length=100)
    backend = models.CharField(max_length=10, default="local")  # docker | local
    competitions = models.JSONField(default=list)
    seeds = models.PositiveIntegerField(default=1)
    cpus = models.FloatField(null=True, blank=True)
    memory_bytes = models.BigIntegerField(null=True, blank=True)
    shm_bytes = models.BigIntegerField(null=True, blank=True)
    gpus = models.PositiveSmallIntegerField(default=0)
    time_limit_s = models.FloatField(null=True, blank=True)
    snapshot_interval_s = models.FloatField(null=True, blank=True)
    experiment = models.OneToOneField(
        "results.Experiment",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="launch",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "launches"
        permissions = [("launch_agent_runs", "Can launch agent runs")]

    def __str__(self) -> str:
        return f"launch {self.pk}: {self.agent_name}"

    def get_absolute_url(self) -> str:
        return reverse("launch-detail", args=[self.pk])


class AgentRun(Dispatched):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        TIMED_OUT = "timed_out", "Timed out"
        OUT_OF_MEMORY = "out_of_memory", "Out of memory"
        FAILED = "failed", "Failed (non-zero exit)"
        HARNESS_ERROR = "harness_error", "Harness error"
        CANCELLED = "cancelled", "Cancelled"

    launch = models.ForeignKey(Launch, on_delete=models.CASCADE, related_name="runs")
    competition = models.ForeignKey(
        "competitions.Competition", on_delete=models.PROTECT, related_name="agent_runs"
    )
    seed = models.IntegerField()
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    cancel_requested = models.BooleanField(default=False)
    message = models.TextField(blank=True)
    detail = models.TextField(blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    egress_granted = models.BooleanField(default=False)
    output_dir = models.CharField(max_length=500, blank=True)
    # The container (docker) or process id (local) running the agent, for the reaper.
    container = models.CharField(max_length=100, blank=True)
    overhead = models.JSONField(default=dict, blank=True)
    validation_counts = models.JSONField(default=dict, blank=True)
    # What the agent asked of its model endpoint, counted at the bridge
    # (``runner.llm_meter``); None for an agent without one.
    llm_usage = models.JSONField(null=True, blank=True)
    gpu_ids = models.JSONField(default=list, blank=True)
    # What the agent could read of its host (``runner.local_confinement``), for people;
    # empty for a container run.
    confinement = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    result_run = models.OneToOneField(
        "results.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="agent_run"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["launch", "competition__slug", "seed"]
        permissions = [("cancel_agentrun", "Can cancel anyone's agent run")]
        constraints = [
            models.UniqueConstraint(
                fields=["launch", "competition", "seed"], name="agent_run_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.launch.agent_name} on {self.competition.slug} seed {self.seed}"


class SubmissionSnapshot(models.Model):
    """``submission.csv`` as it was ``elapsed_s`` into a run, graded like the final one:
    the data of the score-against-hours curve. Taken by the harness during an agent run
    (``agent_run`` set), or carried by an upload's run folder; either way it belongs to
    the graded run (``run``) of its experiment."""

    agent_run = models.ForeignKey(
        AgentRun, on_delete=models.CASCADE, related_name="snapshots", null=True, blank=True
    )
    run = models.ForeignKey(
        "results.Run", on_delete=models.CASCADE, related_name="snapshots", null=True, blank=True
    )
    elapsed_s = models.FloatField()
    path = models.CharField(max_length=500)
    score = models.FloatField(null=True, blank=True)
    valid_submission = models.BooleanField(default=False)
    above_median = models.BooleanField(default=False)
    any_medal = models.BooleanField(default=False)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["agent_run", "elapsed_s"]


class RunHost(models.Model):
    """A worker host that runs agent runs, as it registered itself: what it may hand out
    (CPUs, memory, GPU ids) and when it last said it is alive. Its runs' resources are
    claimed in ``HostClaim`` rows under a lock on this row (``webapp.runs.capacity``)."""

    class State(models.TextChoices):
        UP = "up", "Up"
        DOWN = "down", "Down"

    name = models.CharField(max_length=200, unique=True)
    state = models.CharField(max_length=8, choices=State.choices, default=State.UP, db_index=True)
    cpus = models.FloatField()
    memory_bytes = models.BigIntegerField()
    gpu_ids = models.JSONField(default=list, blank=True)
    gpu_model = models.CharField(max_length=200, blank=True)
    # The run backend and its engine's version ("docker 24.0.7", "local").
    engine = models.CharField(max_length=200, blank=True)
    # The run queues (resource classes) its worker consumes, and at most how many runs at once.
    queues = models.JSONField(default=list, blank=True)
    slots = models.PositiveIntegerField(default=1)
    # A new value each time its worker starts: claims of an earlier boot are stale.
    boot = models.CharField(max_length=32, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, db_index=True)
    down_since = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]
        permissions = [("manage_runhost", "Can see and manage the run hosts")]

    def __str__(self) -> str:
        return self.name


class HostClaim(models.Model):
    """The resources one agent run holds on one host: a run holds at most one claim, and a
    GPU id of a host is in at most one of its claims."""

    host = models.ForeignKey(RunHost, on_delete=models.CASCADE, related_name="claims")
    agent_run = models.OneToOneField(AgentRun, on_delete=models.CASCADE, related_name="host_claim")
    # The task that claimed it (a re-delivery of the same task keeps it) and the host's boot.
    token = models.CharField(max_length=64)
    boot = models.CharField(max_length=32, blank=True)
    cpus = models.FloatField()
    memory_bytes = models.BigIntegerField()
    gpu_ids = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["host", "created_at"]

    def __str__(self) -> str:
        return f"run {self.agent_run_id} on {self.host_id}"
