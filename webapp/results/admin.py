from django.contrib import admin
from django.db.models import Count
from django.template.loader import render_to_string

from benchmark import disclosure
from webapp.core.visibility import Perm, VisibleInAdmin, actionable, has_perm
from webapp.core.wording import counted
from webapp.results.disclosure import PublishRefused, experiment_publish, experiment_withdraw
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
from webapp.results.pages.experiment import any_medal_texts


@admin.register(Scaffold)
class ScaffoldAdmin(admin.ModelAdmin):
    list_display = ["name", "url", "agents_count"]
    search_fields = ["name"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_agents=Count("agents"))

    @admin.display(description="agents", ordering="n_agents")
    def agents_count(self, obj):
        return obj.n_agents


@admin.register(LanguageModel)
class LanguageModelAdmin(admin.ModelAdmin):
    list_display = ["name", "provider", "agents_count"]
    search_fields = ["name", "provider"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_agents=Count("agents"))

    @admin.display(description="agents", ordering="n_agents")
    def agents_count(self, obj):
        return obj.n_agents


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
        "comparability_class",
        "is_published",
        "owner",
        "date",
        "knowledge_cutoff",
        "created_at",
    ]
    list_filter = [
        "is_published",
        "source",
        "comparability_class",
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
        # Publishing is an action (its own permission, and refused while the conditions
        # are not all stated), not a field to tick.
        return [*super().get_readonly_fields(request, obj), "is_published"]

    @admin.action(description="Publish to the public leaderboard", permissions=["publish"])
    def publish(self, request, queryset):
        # Counted before the update: the review queue's rows are the unpublished ones, so
        # the same queryset counted after it no longer holds what was just published.
        chosen = list(queryset)
        n, refused = 0, []
        for experiment in chosen:
            try:
                n += experiment_publish(experiment)
            except PublishRefused as exc:
                refused.append(f"{experiment}: {', '.join(disclosure.labels(exc.missing))}")
        self.message_user(
            request, _published_message(n, "published on", len(chosen) - n - len(refused))
        )
        if refused:
            self.message_user(
                request,
                "Not published, their conditions are not all stated (missing): "
                + "; ".join(refused),
                level="error",
            )

    @admin.action(description="Re-grade (after a grader fix)", permissions=["regrade"])
    def regrade(self, request, queryset):
        from webapp.results.uploads.services import experiment_regrade

        for experiment in actionable(request.user, "regrade", queryset):
            try:
                n = experiment_regrade(experiment, by=request.user)
                self.message_user(request, f"{experiment}: {n} runs queued for grading")
            except ValueError as exc:
                self.message_user(request, f"{experiment}: {exc}", level="error")

    @admin.action(description="Withdraw from the public leaderboard", permissions=["publish"])
    def unpublish(self, request, queryset):
        chosen = list(queryset)
        n = sum(experiment_withdraw(experiment) for experiment in chosen)
        self.message_user(request, _published_message(n, "withdrawn from", len(chosen) - n))


def _published_message(changed: int, verb: str, unchanged: int) -> str:
    """E.g. "2 experiments published on the public leaderboard (1 already was)."."""
    text = f"{counted(changed, 'experiment')} {verb} the public leaderboard"
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


def _integrity_text(aggregate) -> str:
    """The runs' integrity checks: "12 checked · 2 flagged · 1 disqualified", or "not
    checked"."""
    if aggregate is None or not aggregate.runs_checked:
        return "not checked"
    text = f"{aggregate.runs_checked} checked"
    if aggregate.runs_flagged:
        text += f" · {aggregate.runs_flagged} flagged"
    if aggregate.runs_disqualified:
        text += f" · {aggregate.runs_disqualified} disqualified"
    return text


@admin.register(ExperimentAggregate)
class ExperimentAggregateAdmin(VisibleInAdmin, admin.ModelAdmin):
    list_display = [
        "experiment",
        "n_reports",
        "runs_checked",
        "runs_flagged",
        "runs_disqualified",
        "computed_at",
    ]
    list_select_related = ["experiment"]
    search_fields = ["experiment__name"]


@admin.register(ReviewQueue)
class ReviewQueueAdmin(ExperimentAdmin):
    """Unpublished experiments with what a curator decides on: the figures, how many runs
    were graded, and the integrity checks' state."""

    # What decides, and no more: the admin's sidebar and filters leave some 600 px at 1,280.
    list_display = ["name", "owner", "any_medal", "reports", "integrity", "uploaded"]
    list_filter = ["source", "agent__scaffold", "agent__model", "internet_access", "known_leakage"]
    list_select_related = ["agent__scaffold", "agent__model", "owner", "aggregate"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(is_published=False).exclude(owner=None)

    @admin.display(description="Any Medal % (mean ± SEM)")
    def any_medal(self, obj):
        return render_to_string(
            "admin/lines.html", {"lines": any_medal_texts(obj)}
        )  # a split a line

    @admin.display(description="uploaded", ordering="created_at")
    def uploaded(self, obj):
        return obj.created_at.date().isoformat()

    @admin.display(description="reports", ordering="aggregate__n_reports")
    def reports(self, obj):
        aggregate = getattr(obj, "aggregate", None)
        return aggregate.n_reports if aggregate else 0

    @admin.display(description="integrity")
    def integrity(self, obj):
        return _integrity_text(getattr(obj, "aggregate", None))


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
