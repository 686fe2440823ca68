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

admin.site.register(Scaffold)
admin.site.register(LanguageModel)


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["scaffold", "model", "version"]
    list_filter = ["scaffold", "model"]


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):
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

    @admin.action(description="Publish to the public leaderboard")
    def publish(self, request, queryset):
        n = queryset.exclude(is_published=True).update(is_published=True)
        self.message_user(request, _published_message(n, "published on", queryset.count() - n))

    @admin.action(description="Re-grade (after a grader fix)")
    def regrade(self, request, queryset):
        from webapp.results.uploads import experiment_regrade

        for experiment in queryset:
            try:
                n = experiment_regrade(experiment)
                self.message_user(request, f"{experiment}: {n} runs queued for grading")
            except ValueError as exc:
                self.message_user(request, f"{experiment}: {exc}", level="error")

    @admin.action(description="Withdraw from the public leaderboard")
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
class RunAdmin(admin.ModelAdmin):
    list_display = ["experiment", "competition", "seed", "status", "attempts", "updated_at"]
    list_filter = ["status"]
    search_fields = ["competition__slug", "experiment__name"]


@admin.register(GradeReport)
class GradeReportAdmin(admin.ModelAdmin):
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


admin.site.register(ExperimentAggregate)


@admin.register(ReviewQueue)
class ReviewQueueAdmin(ExperimentAdmin):
    def get_queryset(self, request):
        return super().get_queryset(request).filter(is_published=False).exclude(owner=None)


@admin.register(Upload)
class UploadAdmin(admin.ModelAdmin):
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
