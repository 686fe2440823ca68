"""MLE-bench's integrity checks as the site keeps them: reference code per competition
(versioned like its leaderboards) and, per graded run, what the checks found and what a
reviewer decided."""

from django.conf import settings
from django.db import models

from webapp.competitions.models import Competition
from webapp.results.models import Run


class ReferenceCorpus(models.Model):
    """One version of a competition's reference code (e.g. its top public notebooks).
    A new import adds a version and makes it current; versions are never edited, so a
    check records exactly which one it compared against."""

    competition = models.ForeignKey(
        Competition, on_delete=models.CASCADE, related_name="reference_corpora"
    )
    version = models.PositiveIntegerField()
    is_current = models.BooleanField(default=True)
    source_name = models.CharField(max_length=300, blank=True)
    note = models.TextField(blank=True, help_text="Where this code comes from, as a whole.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "reference corpus"
        verbose_name_plural = "reference corpora"
        ordering = ["competition__slug", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["competition", "version"], name="one_reference_corpus_per_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.competition.slug} references v{self.version}"


class ReferenceFile(models.Model):
    """One reference file: its code (a notebook's code cells only) and its source."""

    corpus = models.ForeignKey(ReferenceCorpus, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=500)
    source = models.CharField(max_length=500, blank=True)
    language = models.CharField(max_length=10)  # python | r
    text = models.TextField()
    lines = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["path"]
        constraints = [
            models.UniqueConstraint(fields=["corpus", "path"], name="one_reference_file_per_path"),
        ]

    def __str__(self) -> str:
        return self.path


class RunCheck(models.Model):
    """The integrity checks of one graded run and the review of their outcome.

    ``not checked`` (no row, or the check has not run yet) → ``clean`` / ``flagged`` →
    ``reviewed: ok`` / ``disqualified`` (a person decided, with a reason). A disqualified
    run counts as no medal in its experiment's figures."""

    class Status(models.TextChoices):
        NOT_CHECKED = "not_checked", "not checked"
        CLEAN = "clean", "clean"
        FLAGGED = "flagged", "flagged"
        REVIEWED_OK = "reviewed_ok", "reviewed: ok"
        DISQUALIFIED = "disqualified", "disqualified"

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="integrity")
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.NOT_CHECKED, db_index=True
    )
    # A check was asked for and has not ended yet (the sweeper sends it again when late).
    due_since = models.DateTimeField(null=True, blank=True, db_index=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    checked_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True)
    # Why it was flagged, as facts (webapp.integrity.reasons), told to each viewer as
    # they may read them: never sentences naming others' work.
    reasons = models.JSONField(default=list, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    corpus = models.ForeignKey(
        ReferenceCorpus, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Highest similarity of the run's code to a reference file, and where they match.
    similarity = models.FloatField(null=True, blank=True)
    similarity_file = models.CharField(max_length=500, blank=True)
    reference = models.ForeignKey(
        ReferenceFile, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    fragments = models.JSONField(default=list, blank=True)
    # Highest similarity to another owner's run on the same competition.
    peer_similarity = models.FloatField(null=True, blank=True)
    peer_file = models.CharField(max_length=500, blank=True)
    peer_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    peer_run_file = models.CharField(max_length=500, blank=True)
    peer_fragments = models.JSONField(default=list, blank=True)
    # What the peer comparison set aside as shared code (benchmark.integrity.common_code's
    # SharedCodeFilter.as_dict(), with "owners" and "runs" compared).
    peer_filter = models.JSONField(default=dict, blank=True)
    findings = models.JSONField(default=list, blank=True)
    files_checked = models.PositiveIntegerField(default=0)
    llm_review = models.JSONField(default=dict, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True)

    class Meta:
        verbose_name = "run check"
        permissions = [
            ("review_runcheck", "Can review run checks: disqualify, reopen, check again")
        ]

    def __str__(self) -> str:
        return f"run {self.run_id}: {self.get_status_display()}"

    @property
    def decided(self) -> bool:
        return self.status in (self.Status.REVIEWED_OK, self.Status.DISQUALIFIED)


class ScaffoldTemplate(models.Model):
    """Code every run of a scaffold starts from (its prompt's example script, its
    skeleton): when runs are compared with other owners' runs, fingerprints of the
    templates of both runs' scaffolds are set aside (Dolos' ignored file), so sharing it
    says nothing. Reference comparisons do not use it."""

    scaffold = models.ForeignKey(
        "results.Scaffold", on_delete=models.CASCADE, related_name="templates"
    )
    path = models.CharField(
        max_length=300, help_text="A file name ending in .py, .ipynb or .R: it gives the language."
    )
    text = models.TextField()
    note = models.TextField(blank=True, help_text="Where this template comes from.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "scaffold template code"
        verbose_name_plural = "scaffold template code"
        ordering = ["scaffold__name", "path"]
        constraints = [
            models.UniqueConstraint(fields=["scaffold", "path"], name="one_template_per_path"),
        ]

    def __str__(self) -> str:
        return f"{self.scaffold} template {self.path}"


class ReviewItem(RunCheck):
    """Flagged runs waiting for a person (the admin's review queue)."""

    class Meta:
        proxy = True
        verbose_name = "flagged run to review"
        verbose_name_plural = "integrity review queue"
