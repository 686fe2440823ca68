"""Django admin is the curation tool: edit facts, mark known issues, retire or version a
competition, see thresholds and every leaderboard version."""

from django.contrib import admin

from webapp.competitions.models import (
    Competition,
    KnownIssue,
    LeaderboardEntry,
    PrivateLeaderboard,
    Split,
)


class KnownIssueInline(admin.TabularInline):
    model = KnownIssue
    extra = 1
    fields = ["kind", "note", "source", "excludes_from_clean_subset"]


class PrivateLeaderboardInline(admin.TabularInline):
    model = PrivateLeaderboard
    extra = 0
    can_delete = False
    show_change_link = True
    fields = [
        "version",
        "is_current",
        "source_format",
        "n_teams",
        "gold_threshold",
        "silver_threshold",
        "bronze_threshold",
        "median_threshold",
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
        "metric",
        "lower_is_better",
        "retired",
        "version",
    ]
    list_filter = ["complexity", "category", "splits", "retired", "is_demo", "awards_medals"]
    search_fields = ["slug", "name", "metric"]
    filter_horizontal = ["splits"]
    inlines = [KnownIssueInline, PrivateLeaderboardInline]
    actions = ["retire", "bump_version"]

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


class LeaderboardEntryInline(admin.TabularInline):
    model = LeaderboardEntry
    extra = 0
    can_delete = False
    fields = ["position", "score", "team_id", "team_name", "submission_date"]
    readonly_fields = fields
    max_num = 0


@admin.register(PrivateLeaderboard)
class PrivateLeaderboardAdmin(admin.ModelAdmin):
    list_display = [
        "competition",
        "version",
        "is_current",
        "n_teams",
        "gold_threshold",
        "silver_threshold",
        "bronze_threshold",
        "median_threshold",
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
        "gold_threshold",
        "silver_threshold",
        "bronze_threshold",
        "median_threshold",
        "sha256",
        "warnings",
        "source_format",
        "is_synthetic",
    ]
    inlines = [LeaderboardEntryInline]

    def has_delete_permission(self, request, obj=None):
        return False


admin.site.register(Split)
