from django.contrib import admin

from webapp.results.models import (
    Agent,
    Experiment,
    ExperimentAggregate,
    GradeReport,
    LanguageModel,
    ReviewQueue,
    Run,
    Scaffold,
    Upload,
)
from webapp.visibility import Perm, VisibleInAdmin, actionable, has_perm

admin.site.register(Scaffold)
admin.site.register(LanguageModel)


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["scaffold", "model", "version"]
    list_filter = ["scaffold", "model"]


@admin.register(Experiment)
class ExperimentAdmin(VisibleInAdmin, admin.ModelAdmin):
    list_display = [
        "name",
        "agent",
        "source",
        "is_published",
        "owner",
        "date",
        "knowledge_cutoff",
        "created_at",
    ]
    list_filter = [
        "is_published",
        "source",
        "agent__scaffold",
        "agent__model",
        "internet_access",
        "known_leakage",
    ]
    search_fields = ["name", "agent__scaffold__name", "agent__model__name"]
    actions = ["publish", "unpublish", "regrade"]

    def has_publish_permission(self, request) -> bool:
        return has_perm(request.user, Perm.PUBLISH)

    def has_regrade_permission(self, request) -> bool:
        return has_perm(request.user, Perm.REGRADE_ANY)

    def get_readonly_fields(self, request, obj=None):
        # Publishing is its own permission, not a field anyone who may edit can tick.
        fields = list(super().get_readonly_fields(request, obj))
        if not self.has_publish_permission(request):
            fields.append("is_published")
        return fields

    @admin.action(description="Publish to the public leaderboard", permissions=["publish"])
    def publish(self, request, queryset):
        n = queryset.exclude(is_published=True).update(is_published=True)
        self.message_user(request, _published_message(n, "published on", queryset.count() - n))

    @admin.action(description="Re-grade (after a grader fix)", permissions=["regrade"])
    def regrade(self, request, queryset):
        from webapp.results.uploads import experiment_regrade

        for experiment in actionable(request.user, "regrade", queryset):
            try:
                n = experiment_regrade(experiment)
                self.message_user(request, f"{experiment}: {n} runs queued for grading")
            except ValueError as exc:
                self.message_user(request, f"{experiment}: {exc}", level="error")

    @admin.action(description="Withdraw from the public leaderboard", permissions=["publish"])
    def unpublish(self, request, queryset):
        n = queryset.exclude(is_published=False).update(is_published=False)
        self.message_user(request, _published_message(n, "withdrawn from", queryset.count() - n))


def _published_message(changed: int, verb: str, unchanged: int) -> str:
    """E.g. "2 experiments published on the public leaderboard (1 already was)."."""
    text = f"{changed} experiment{'s' if changed != 1 else ''} {verb} the public leaderboard"
    if unchanged:
        text += f" ({unchanged} already {'was' if unchanged == 1 else 'were'})"
    return text + "."


@admin.register(Run)
class RunAdmin(VisibleInAdmin, admin.ModelAdmin):
    list_display = ["experiment", "competition", "seed", "status", "attempts", "updated_at"]
    list_filter = ["status"]
    search_fields = ["competition__slug", "experiment__name"]


@admin.register(GradeReport)
class GradeReportAdmin(VisibleInAdmin, admin.ModelAdmin):
    list_display = [
        "experiment",
        "competition",
        "seed",
        "score",
        "any_medal",
        "valid_submission",
        "is_current",
        "source",
        "grader_version",
    ]
    list_filter = ["is_current", "source", "valid_submission", "any_medal"]
    search_fields = ["competition__slug", "experiment__name"]


@admin.register(ExperimentAggregate)
class ExperimentAggregateAdmin(VisibleInAdmin, admin.ModelAdmin):
    pass


@admin.register(ReviewQueue)
class ReviewQueueAdmin(ExperimentAdmin):
    def get_queryset(self, request):
        return super().get_queryset(request).filter(is_published=False).exclude(owner=None)


@admin.register(Upload)
class UploadAdmin(VisibleInAdmin, admin.ModelAdmin):
    list_display = [
        "pk",
        "owner",
        "original_name",
        "status",
        "kind",
        "experiment",
        "size",
        "created_at",
    ]
    list_filter = ["status", "kind"]
    search_fields = ["original_name", "sha256", "owner__username"]
    readonly_fields = [
        "sha256",
        "size",
        "archive",
        "original_name",
        "metadata",
        "error",
        "warnings",
        "kind",
    ]
