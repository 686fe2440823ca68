"""Agents (scaffold x model x version), experiments (run groups reported together), runs
(experiment x competition x seed) and their grade reports, plus cached aggregates."""

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse

from benchmark import disclosure, provenance
from webapp.work import Dispatched


class Scaffold(models.Model):
    name = models.CharField(max_length=100, unique=True)
    url = models.URLField(blank=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class LanguageModel(models.Model):
    """The LLM behind an agent (or "none" for non-LLM baselines)."""

    name = models.CharField(max_length=100, unique=True)
    provider = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Agent(models.Model):
    scaffold = models.ForeignKey(Scaffold, on_delete=models.PROTECT, related_name="agents")
    model = models.ForeignKey(LanguageModel, on_delete=models.PROTECT, related_name="agents")
    version = models.CharField(max_length=60, blank=True)

    class Meta:
        ordering = ["scaffold__name", "model__name", "version"]
        constraints = [
            models.UniqueConstraint(fields=["scaffold", "model", "version"], name="agent_unique")
        ]

    def __str__(self) -> str:
        suffix = f" {self.version}" if self.version else ""
        return f"{self.scaffold} × {self.model}{suffix}"


class Experiment(models.Model):
    """A set of run groups (one per seed) of one agent, reported together."""

    class Source(models.TextChoices):
        # Its provenance (benchmark.provenance): the words, labels and aliases are there.
        REPRODUCED = provenance.REPRODUCED, "Reproduced (run by this site)"
        GRADED = provenance.GRADED, "Graded (submissions graded here)"
        REPORTED = provenance.REPORTED, "Reported (imported reports or figures)"
        REFERENCE = provenance.REFERENCE, "Synthetic reference (demo)"

    # Sources whose runs were graded by this site: their grading reports exist here.
    GRADED_HERE = provenance.GRADED_HERE

    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="experiments")
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="experiments",
    )
    # Its provenance: reproduced, graded, reported or reference.
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.GRADED)
    is_published = models.BooleanField(default=False, help_text="Shown on the public leaderboard.")
    hardware = models.CharField(max_length=200, blank=True)
    runtime_hours = models.FloatField(null=True, blank=True)
    date = models.DateField(null=True, blank=True)
    internet_access = models.BooleanField(null=True, blank=True)
    test_feedback = models.BooleanField(
        null=True, blank=True, help_text="Used any feedback from the test set."
    )
    source_available = models.BooleanField(default=False)
    source_url = models.URLField(blank=True)
    # None: not disclosed (never guessed). Disclosure's "test_labels".
    known_leakage = models.BooleanField(null=True, blank=True, default=None)
    known_leakage_url = models.URLField(blank=True, help_text="Where the leakage is described.")
    known_leakage_note = models.TextField(
        blank=True, help_text="The published leaderboard's note on its leakage column."
    )
    grading_reports_available = models.BooleanField(
        null=True, blank=True, help_text="The authors published their grading reports."
    )
    published_notes = models.JSONField(
        default=list,
        blank=True,
        help_text="Footnotes of the published leaderboard on this entry (e.g. the LLMs used).",
    )
    published_figures = models.JSONField(
        default=dict,
        blank=True,
        help_text='Figures as published, for reported entries without reports: {"low": {"mean": 34.3, '
        '"standard_error": 2.4, "footnotes": [...]}, "medium": ..., "high": ..., "all": ...} '
        "(Any Medal %).",
    )
    notes = models.TextField(blank=True)
    knowledge_cutoff = models.DateField(
        null=True,
        blank=True,
        help_text="The model's knowledge cutoff (the newest data it was trained on), as its "
        "makers state it: competitions that ended before it may be in what it read.",
    )
    obfuscated_descriptions = models.BooleanField(
        default=False,
        help_text="Run on MLE-bench's obfuscated descriptions (no Kaggle identity), as the "
        "paper's test of whether scores come from recognising the competition.",
    )
    # The rest of its disclosure (benchmark.disclosure.FIELDS; DISCLOSURE_ATTRIBUTES maps
    # each field to its column): None or empty where it was not disclosed.
    gpus = models.PositiveSmallIntegerField(null=True, blank=True, help_text="GPUs per run.")
    gpu_model = models.CharField(max_length=100, blank=True, help_text="e.g. A10 24GB")
    vcpus = models.PositiveIntegerField(null=True, blank=True, help_text="vCPUs per run.")
    ram_gib = models.FloatField(null=True, blank=True, help_text="RAM per run, in GiB.")
    models_used = models.JSONField(
        null=True, blank=True, help_text='Every model the agent used: ["gpt-4o", ...].'
    )
    seeds = models.PositiveIntegerField(
        null=True, blank=True, help_text="Seeds (runs per competition) the figures average."
    )
    selection = models.CharField(max_length=20, blank=True, help_text="pass@1 or best-of-K")
    # Its comparability class (benchmark.disclosure.comparability over the disclosure),
    # kept by save(): {"class", "reasons", "undisclosed"}.
    comparability_class = models.CharField(
        max_length=12,
        choices=[(c, disclosure.CLASS_LABELS[c]) for c in disclosure.CLASSES],
        default=disclosure.UNDISCLOSED,
        db_index=True,
        editable=False,
    )
    comparability = models.JSONField(default=dict, blank=True, editable=False)
    # Tokens an upload declared for the experiment as a whole (``{"prompt_tokens",
    # "completion_tokens"}``), when its runs declare none of their own.
    llm_usage = models.JSONField(null=True, blank=True)
    # Set when the figures no longer match the reports or the curation (a run ended, a
    # known issue changed); cleared by the refresh that caught up. The sweeper re-sends
    # refreshes that stay due.
    figures_due_since = models.DateTimeField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        # Who may act (webapp.core.visibility; the groups of webapp.core.roles hold them). Seeing
        # every experiment, published or not, is Django's own view_experiment.
        permissions = [
            ("publish_experiment", "Can publish experiments and withdraw them"),
            ("regrade_experiment", "Can re-grade anyone's experiment"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("experiment-detail", args=[self.pk])

    def disclosed(self) -> dict:
        """Its disclosure as ``benchmark.disclosure`` reads it: field -> value, the fields
        not disclosed left out."""
        values = {}
        for name, attribute in DISCLOSURE_ATTRIBUTES.items():
            value = getattr(self, attribute)
            if value not in (None, "", []):
                values[name] = value
        return values

    def disclose(self, values: dict) -> None:
        """Set the disclosure fields in ``values`` (already parsed); the others stay."""
        for name, value in values.items():
            setattr(self, DISCLOSURE_ATTRIBUTES[name], value)
        if values.get("source_url"):
            self.source_available = True

    def save(self, *args, **kwargs):
        # The class follows the disclosure on every save, so it is stored (and filtered
        # on) without being computed per request.
        found = disclosure.comparability(self.disclosed())
        self.comparability_class = found.cls
        self.comparability = found.as_dict()
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], *COMPARABILITY_FIELDS}
        super().save(*args, **kwargs)


# benchmark.disclosure's fields -> Experiment's columns (some predate the disclosure).
DISCLOSURE_ATTRIBUTES = {
    "gpus": "gpus",
    "gpu_model": "gpu_model",
    "vcpus": "vcpus",
    "ram_gib": "ram_gib",
    "hours": "runtime_hours",
    "models": "models_used",
    "internet": "internet_access",
    "test_labels": "known_leakage",
    "leakage_url": "known_leakage_url",
    "seeds": "seeds",
    "selection": "selection",
    "source_url": "source_url",
}
assert set(DISCLOSURE_ATTRIBUTES) == set(disclosure.BY_NAME)
COMPARABILITY_FIELDS = ("comparability_class", "comparability")


class ReviewQueue(Experiment):
    """Uploaded experiments waiting for an admin to publish them (an admin view)."""

    class Meta:
        proxy = True
        verbose_name = "experiment awaiting review"
        verbose_name_plural = "experiments awaiting review"


class Run(Dispatched):
    """One (competition, seed) of an experiment: what was submitted and where grading is.
    Its grading is work the database owns (``webapp.work``)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Grading"
        GRADED = "graded", "Graded"
        FAILED = "failed", "Failed"

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="runs")
    competition = models.ForeignKey(
        "competitions.Competition", on_delete=models.PROTECT, related_name="runs"
    )
    seed = models.IntegerField()
    run_group = models.CharField(max_length=200, blank=True)
    submission_path = models.CharField(max_length=500, blank=True)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    error = models.TextField(blank=True)
    # What the run asked of its model (``benchmark.cost``): the bridge's meter for a run
    # of the site's (``"source": "metered"``), or what an upload declared for it
    # (``"declared"``). None: not known.
    llm_usage = models.JSONField(null=True, blank=True)
    # How the run went, as far as its record says (``benchmark.failures.RunFacts``:
    # outcome, duration_s, time_limit_s, validation_calls). None: nothing known.
    facts = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["experiment", "competition__slug", "seed"]
        constraints = [
            models.UniqueConstraint(fields=["experiment", "competition", "seed"], name="run_unique")
        ]

    def __str__(self) -> str:
        return f"{self.experiment_id}:{self.competition_id}:seed{self.seed}"


class GradeReport(models.Model):
    """MLE-bench's competition report for one run, exactly its fields, plus what mleboard
    adds (seed, percentile, grader version, the reason when invalid). A re-grade adds a
    report and moves ``is_current``; the old one stays for the record."""

    class Source(models.TextChoices):
        GRADED = "graded", "Graded here"
        REPORTED = "reported", "Reported (imported as is)"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="reports")
    # Denormalised so that aggregation reads one table.
    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="reports")
    competition = models.ForeignKey(
        "competitions.Competition", on_delete=models.PROTECT, related_name="reports"
    )
    seed = models.IntegerField()
    is_current = models.BooleanField(default=True)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.GRADED)

    score = models.FloatField(null=True, blank=True)
    gold_threshold = models.FloatField(null=True, blank=True)
    silver_threshold = models.FloatField(null=True, blank=True)
    bronze_threshold = models.FloatField(null=True, blank=True)
    median_threshold = models.FloatField(null=True, blank=True)
    any_medal = models.BooleanField(default=False)
    gold_medal = models.BooleanField(default=False)
    silver_medal = models.BooleanField(default=False)
    bronze_medal = models.BooleanField(default=False)
    above_median = models.BooleanField(default=False)
    submission_exists = models.BooleanField(default=False)
    valid_submission = models.BooleanField(default=False)
    is_lower_better = models.BooleanField(default=False)
    created_at = models.DateTimeField()
    submission_path = models.CharField(max_length=500, blank=True)

    percentile = models.FloatField(null=True, blank=True)
    grader_version = models.CharField(max_length=60, blank=True)
    error = models.TextField(blank=True)
    # Why the submission is missing or invalid, as a class (``graders.ErrorClass``); blank
    # for a valid one and for reports imported without it.
    error_class = models.CharField(max_length=20, blank=True)
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["competition__slug", "seed"]
        constraints = [
            models.UniqueConstraint(
                fields=["run"], condition=models.Q(is_current=True), name="one_current_report"
            )
        ]
        indexes = [models.Index(fields=["experiment", "is_current"])]


class ExperimentAggregate(models.Model):
    """Figures computed once by ``benchmark.aggregate`` when reports arrive, so pages
    read a row instead of recomputing thousands of reports per request."""

    experiment = models.OneToOneField(
        Experiment, on_delete=models.CASCADE, related_name="aggregate"
    )
    figures = models.JSONField(default=dict)
    clean_figures = models.JSONField(default=dict)
    # The leaderboard's few numbers per split, kept apart so that ranking 200 agents
    # reads 200 small rows instead of 200 full sets of figures.
    summary = models.JSONField(default=dict)
    clean_summary = models.JSONField(default=dict)
    # What its runs cost (``grading.tokens.cost_summary``): tokens per run, for the
    # leaderboard's medals-against-cost chart.
    cost = models.JSONField(default=dict)
    n_reports = models.PositiveIntegerField(default=0)
    # Integrity checks of the experiment's runs (``webapp.integrity``): checked (any
    # outcome), flagged and not decided yet, disqualified.
    runs_checked = models.PositiveIntegerField(default=0)
    runs_flagged = models.PositiveIntegerField(default=0)
    runs_disqualified = models.PositiveIntegerField(default=0)
    computed_at = models.DateTimeField(auto_now=True)


class FigureReplicates(models.Model):
    """One figure's bootstrap replicates (``benchmark.intervals``) for an experiment on a
    split, stored with its figures so that a request only ranks stored vectors: every
    experiment of a split is resampled on the same competition draws, so the vectors of
    two experiments are paired."""

    experiment = models.ForeignKey(
        Experiment, on_delete=models.CASCADE, related_name="figure_replicates"
    )
    split = models.CharField(max_length=20)
    # Of the clean subset (the curation's competitions left out) rather than of all.
    clean = models.BooleanField(default=False)
    # MLE-bench's name of the figure: any_medal_percentage, above_median_percentage, ...
    metric = models.CharField(max_length=40)
    # REPLICATES float32 values, little-endian (``benchmark.intervals.to_bytes``).
    values = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["experiment", "split", "clean", "metric"], name="replicates_unique"
            )
        ]
        indexes = [models.Index(fields=["split", "clean", "metric"])]

    def __str__(self) -> str:
        return f"{self.experiment_id}:{self.split}:{self.metric}{' (clean)' if self.clean else ''}"


def upload_archive_path(instance: "Upload", filename: str) -> str:
    return f"uploads/{instance.sha256[:2]}/{instance.sha256}/{filename}"


class Upload(Dispatched):
    """An uploaded archive, stored untouched with its checksum before anything else
    happens; it becomes an Experiment once unpacked and read (work the database owns,
    ``webapp.work``: queued -> processing until its experiment exists, then its runs)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        PROCESSING = "processing", "Processing"
        GRADED = "graded", "Graded"
        FAILED = "failed", "Failed"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="uploads"
    )
    archive = models.FileField(upload_to=upload_archive_path, max_length=400)
    original_name = models.CharField(max_length=255)
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64, db_index=True)
    metadata = models.JSONField(default=dict)
    kind = models.CharField(max_length=20, blank=True)  # run_groups | jsonl | reports
    status = models.CharField(
        max_length=12, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    error = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    experiment = models.OneToOneField(
        Experiment, null=True, blank=True, on_delete=models.SET_NULL, related_name="upload"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "sha256"], name="upload_once_per_owner")
        ]

    def __str__(self) -> str:
        return f"upload {self.pk} ({self.original_name})"

    def get_absolute_url(self) -> str:
        return reverse("upload-detail", args=[self.pk])


class PartialUpload(models.Model):
    """An archive arriving in pieces over tus 1.0 (``webapp.results.uploads.resumable``): bytes go
    to a part file and the SHA-256 state is saved with the offset, so a dropped connection
    continues where it stopped. Complete, it becomes an ``Upload`` through the same path as
    a one-request upload. Its lifecycle is declared in ``webapp.work.declarations``; nothing
    else writes ``state``."""

    class State(models.TextChoices):
        RECEIVING = "receiving", "Receiving"  # deadline: expires_at (extended by each piece)
        ASSEMBLING = "assembling", "Assembling"  # deadline: updated_at + MLEBOARD_STALE_AFTER_S
        COMPLETE = "complete", "Complete"
        EXPIRED = "expired", "Expired"
        TERMINATED = "terminated", "Terminated"

    key = models.UUIDField(unique=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="partial_uploads"
    )
    length = models.BigIntegerField()
    offset = models.BigIntegerField(default=0)
    sha256_state = models.BinaryField(default=b"")
    filename = models.CharField(max_length=255)
    metadata = models.JSONField(default=dict)
    state = models.CharField(
        max_length=12, choices=State.choices, default=State.RECEIVING, db_index=True
    )
    error = models.TextField(blank=True)
    expires_at = models.DateTimeField(db_index=True)
    upload = models.ForeignKey(
        Upload, null=True, blank=True, on_delete=models.SET_NULL, related_name="partials"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"partial upload {self.key} ({self.filename}, {self.offset}/{self.length})"
