"""Competitions, their human private leaderboards (versioned) and the known issues admins
mark on them."""

from django.db import models
from django.urls import reverse

from benchmark.catalogue import COMPLEXITIES
from webapp.work import Dispatched


class Split(models.Model):
    """A named set of competitions (``benchmark.splits.SPLITS``): low (= Lite), medium, high,
    all, systemcard, dev, demo."""

    slug = models.SlugField(primary_key=True, max_length=20)
    name = models.CharField(max_length=60)
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["order", "slug"]

    def __str__(self) -> str:
        return self.name


class Competition(models.Model):
    # MLE-bench's complexities, as the catalogue declares them.
    Complexity = models.TextChoices(
        "Complexity", [(name.upper(), (name, name.title())) for name in COMPLEXITIES]
    )

    # MLE-bench's competition id, case kept (e.g. "AI4Code"): it is what reports carry.
    slug = models.CharField(max_length=120, unique=True)
    name = models.CharField(max_length=200)
    category = models.CharField(max_length=60, db_index=True)
    complexity = models.CharField(max_length=10, choices=Complexity.choices, db_index=True)
    metric = models.CharField(max_length=60)
    lower_is_better = models.BooleanField()
    awards_medals = models.BooleanField(default=True)
    competition_type = models.CharField(max_length=20, blank=True)
    id_column = models.CharField(max_length=100, blank=True)
    target_columns = models.JSONField(default=list, blank=True)
    splits = models.ManyToManyField(Split, related_name="competitions", blank=True)
    is_demo = models.BooleanField(
        default=False, help_text="Built by mleboard from scikit-learn data; not an MLE-bench task."
    )
    # Kaggle's final submission deadline (the catalogue's fact); None for the demos.
    deadline = models.DateField(null=True, blank=True)
    deadline_source = models.TextField(
        blank=True, help_text='"description", or where the deadline comes from when not from it.'
    )
    description = models.TextField(blank=True)
    description_obfuscated = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=1)
    retired = models.BooleanField(default=False)
    retired_note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    def get_absolute_url(self) -> str:
        return reverse("competition-detail", args=[self.slug])

    @property
    def current_leaderboard(self) -> "PrivateLeaderboard | None":
        return self.leaderboards.filter(is_current=True).first()


class KnownIssue(models.Model):
    class Kind(models.TextChoices):
        CROWDED = "crowded_leaderboard", "Crowded leaderboard"
        LEAKAGE = "leakage", "Leakage"
        BROKEN_SPLIT = "broken_split", "Broken split"
        GRADER_QUIRK = "grader_quirk", "Grader quirk (reproduced from MLE-bench)"
        DATA = "data", "Data problem"
        OTHER = "other", "Other"

    class Source(models.TextChoices):
        CATALOGUE = "catalogue", "Catalogue"
        GRADER = "grader", "Grader"
        ADMIN = "admin", "Admin"

    competition = models.ForeignKey(
        Competition, on_delete=models.CASCADE, related_name="known_issues"
    )
    kind = models.CharField(max_length=30, choices=Kind.choices)
    note = models.TextField()
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.ADMIN)
    excludes_from_clean_subset = models.BooleanField(
        default=True,
        help_text="Leave this competition out of the leaderboard's clean-subset figures.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["competition", "kind", "id"]

    def __str__(self) -> str:
        return f"{self.competition}: {self.get_kind_display()}"


class PrivateLeaderboard(models.Model):
    """One imported version of a competition's human private leaderboard. Imports add a
    version and move ``is_current``; old versions stay, so nothing is lost silently."""

    competition = models.ForeignKey(
        Competition, on_delete=models.CASCADE, related_name="leaderboards"
    )
    version = models.PositiveIntegerField()
    is_current = models.BooleanField(default=True)
    source_format = models.CharField(max_length=20)  # "mlebench" | "kaggle" | "synthetic"
    source_name = models.CharField(max_length=300, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    is_synthetic = models.BooleanField(
        default=False, help_text="A synthetic reference population (demo), never human teams."
    )
    n_teams = models.PositiveIntegerField()
    lower_is_better = models.BooleanField()
    gold_threshold = models.FloatField(null=True, blank=True)
    silver_threshold = models.FloatField(null=True, blank=True)
    bronze_threshold = models.FloatField(null=True, blank=True)
    median_threshold = models.FloatField(null=True, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["competition", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["competition", "version"], name="leaderboard_version_unique"
            ),
            models.UniqueConstraint(
                fields=["competition"],
                condition=models.Q(is_current=True),
                name="one_current_leaderboard",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.competition} v{self.version} ({self.n_teams} teams)"


class LeaderboardEntry(models.Model):
    leaderboard = models.ForeignKey(
        PrivateLeaderboard, on_delete=models.CASCADE, related_name="entries"
    )
    position = models.PositiveIntegerField()  # 1-based, best first
    score = models.FloatField(null=True, blank=True)  # None: a row without a score (counts in N)
    team_id = models.CharField(max_length=64, blank=True)
    team_name = models.CharField(max_length=200, blank=True)
    submission_date = models.CharField(max_length=40, blank=True)

    class Meta:
        ordering = ["leaderboard", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["leaderboard", "position"], name="entry_position_unique"
            )
        ]


class FamiliarityText(models.Model):
    """A further text an operator adds to a competition's familiarity, besides its
    description: for example one of its most-read discussion posts."""

    competition = models.ForeignKey(
        Competition, on_delete=models.CASCADE, related_name="familiarity_texts"
    )
    name = models.CharField(max_length=200, help_text="e.g. the file's name: discussion-1.txt")
    text = models.TextField()
    sha256 = models.CharField(max_length=64, editable=False)
    added_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["competition", "name"]
        constraints = [
            models.UniqueConstraint(fields=["competition", "name"], name="familiarity_text_name")
        ]

    def __str__(self) -> str:
        return f"{self.competition}: {self.name}"


class Familiarity(Dispatched):
    """A base model's familiarity with a competition's texts (the description and the
    further texts, at one version): the mean probability it gives their tokens. Work the
    database owns (``webapp.work``): queued -> running -> done | failed."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Measuring"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    competition = models.ForeignKey(
        Competition, on_delete=models.CASCADE, related_name="familiarity"
    )
    model = models.CharField(max_length=200, help_text="The base model, as its endpoint names it.")
    # A digest of the texts measured (names and contents): a new text, or a changed one,
    # is a new version, measured anew; earlier measurements stay.
    texts_version = models.CharField(max_length=64)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    value = models.FloatField(null=True, blank=True, help_text="Mean token probability, 0-1.")
    tokens = models.PositiveIntegerField(null=True, blank=True, help_text="Tokens scored.")
    texts = models.JSONField(default=list, blank=True)  # per text: name, value, tokens, chunks
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["competition", "model", "-created_at"]
        verbose_name_plural = "familiarity"
        constraints = [
            models.UniqueConstraint(
                fields=["competition", "model", "texts_version"], name="familiarity_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.competition} × {self.model}: {self.get_status_display()}"
