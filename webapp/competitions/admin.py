"""Django admin is the curation tool: edit facts, mark known issues, retire or version a
competition, see thresholds and every leaderboard version."""

from django.contrib import admin, messages

from webapp.competitions.models import (
    Competition,
    Familiarity,
    FamiliarityText,
    KnownIssue,
    LeaderboardEntry,
    PrivateLeaderboard,
    Split,
)
from webapp.core.formatting import format_score


def _shown_score(field: str, label: str):
    """A score or medal line as every page prints it (``webapp.core.formatting.format_score``)."""

    @admin.display(description=label, ordering=field)
    def shown(self, obj) -> str:
        return format_score(getattr(obj, field))

    shown.__name__ = f"{field}_shown"
    return shown


class ScoresShown:
    """Medal lines to the metric's precision, never 0.13755499999999998."""

    gold_threshold_shown = _shown_score("gold_threshold", "gold")
    silver_threshold_shown = _shown_score("silver_threshold", "silver")
    bronze_threshold_shown = _shown_score("bronze_threshold", "bronze")
    median_threshold_shown = _shown_score("median_threshold", "median")
    score_shown = _shown_score("score", "score")


THRESHOLDS_SHOWN = [
    "gold_threshold_shown",
    "silver_threshold_shown",
    "bronze_threshold_shown",
    "median_threshold_shown",
]


class KnownIssueInline(admin.TabularInline):
    model = KnownIssue
    extra = 1
    fields = ["kind", "note", "source", "excludes_from_clean_subset"]


class FamiliarityTextInline(admin.StackedInline):
    """Texts besides the description that the familiarity is measured on (e.g. the
    competition's most-read discussion posts); saved through the service, which checks
    them."""

    model = FamiliarityText
    extra = 0
    fields = ["name", "text", "sha256", "added_at"]
    readonly_fields = ["sha256", "added_at"]


class PrivateLeaderboardInline(ScoresShown, admin.TabularInline):
    model = PrivateLeaderboard
    extra = 0
    can_delete = False
    show_change_link = True
    fields = [
        "version",
        "is_current",
        "source_format",
        "n_teams",
        *THRESHOLDS_SHOWN,
        "is_synthetic",
        "created_at",
    ]
    readonly_fields = fields


@admin.register(Competition)
class CompetitionAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "name",
        "category",
        "complexity",
        "metric_shown",
        "lower_is_better",
        "retired",
        "version",
    ]
    list_filter = ["complexity", "category", "splits", "retired", "is_demo", "awards_medals"]
    search_fields = ["slug", "name", "metric"]
    filter_horizontal = ["splits"]
    inlines = [KnownIssueInline, FamiliarityTextInline, PrivateLeaderboardInline]
    actions = ["retire", "bump_version", "measure_familiarity"]

    @admin.display(description="metric", ordering="metric")
    def metric_shown(self, obj) -> str:
        """The metric's name, free to break after each underscore: one word of up to 31
        letters (normalized_sequence_levenshtein) widened the list past the window."""
        from django.utils.html import format_html, format_html_join

        *words, last = obj.metric.split("_")
        return format_html("{}{}", format_html_join("", "{}_<wbr>", ((w,) for w in words)), last)

    def save_formset(self, request, form, formset, change):
        if formset.model is not FamiliarityText:
            return super().save_formset(request, form, formset, change)
        from webapp.competitions.familiarity import FamiliarityRefused, familiarity_text_add

        instances = formset.save(commit=False)
        for gone in formset.deleted_objects:
            gone.delete()
        for text in instances:
            try:
                familiarity_text_add(form.instance, text.name, text.text.encode("utf-8"))
            except FamiliarityRefused as exc:
                messages.error(request, f"Text not saved: {exc}")

    @admin.action(description="Measure the base model's familiarity (on the workers)")
    def measure_familiarity(self, request, queryset):
        from webapp.competitions.familiarity import FamiliarityRefused, familiarity_request

        try:
            requested = familiarity_request(list(queryset.values_list("slug", flat=True)))
        except FamiliarityRefused as exc:
            self.message_user(request, str(exc), level=messages.ERROR)
            return
        queued = sum(1 for r in requested if r.row and r.row.status == Familiarity.Status.QUEUED)
        skipped = [f"{r.competition_id} ({r.reason})" for r in requested if r.row is None]
        self.message_user(
            request, f"{queued} measurement(s) queued; the others are measured already."
        )
        if skipped:
            self.message_user(request, "Skipped: " + "; ".join(skipped), level=messages.WARNING)

    @admin.action(description="Retire the selected competitions")
    def retire(self, request, queryset):
        queryset.update(retired=True)

    @admin.action(description="Start a new version of the selected competitions")
    def bump_version(self, request, queryset):
        for competition in queryset:
            competition.version += 1
            competition.save(update_fields=["version", "updated_at"])


@admin.register(KnownIssue)
class KnownIssueAdmin(admin.ModelAdmin):
    list_display = ["competition", "kind", "source", "excludes_from_clean_subset", "note"]
    list_filter = ["kind", "source", "excludes_from_clean_subset"]
    search_fields = ["competition__slug", "note"]


class LeaderboardEntryInline(ScoresShown, admin.TabularInline):
    model = LeaderboardEntry
    extra = 0
    can_delete = False
    fields = ["position", "score_shown", "team_id", "team_name", "submission_date"]
    readonly_fields = fields
    max_num = 0


@admin.register(PrivateLeaderboard)
class PrivateLeaderboardAdmin(ScoresShown, admin.ModelAdmin):
    list_display = [
        "competition",
        "version",
        "is_current",
        "n_teams",
        *THRESHOLDS_SHOWN,
        "source_format",
        "is_synthetic",
    ]
    list_filter = ["is_current", "source_format", "is_synthetic"]
    search_fields = ["competition__slug"]
    # Thresholds are computed from the entries on import: editing them by hand would make
    # the stored medals disagree with the leaderboard, so they are read-only here.
    readonly_fields = [
        "competition",
        "version",
        "n_teams",
        "lower_is_better",
        *THRESHOLDS_SHOWN,
        "sha256",
        "warnings",
        "source_format",
        "is_synthetic",
    ]
    # The raw medal lines are shown formatted, read-only (``THRESHOLDS_SHOWN``).
    exclude = ["gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold"]
    inlines = [LeaderboardEntryInline]

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Split)
class SplitAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "order"]


@admin.register(Familiarity)
class FamiliarityAdmin(admin.ModelAdmin):
    list_display = ["competition", "model", "status", "value", "tokens", "computed_at", "error"]
    list_filter = ["status", "model"]
    search_fields = ["competition__slug", "model", "error"]
    readonly_fields = [f.name for f in Familiarity._meta.fields]

    def has_add_permission(self, request):
        return False  # asked for with the competitions' action or compute_familiarity
