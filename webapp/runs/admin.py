from django.contrib import admin

from webapp.runs.models import AgentRun, Launch, SubmissionSnapshot


class AgentRunInline(admin.TabularInline):
    model = AgentRun
    extra = 0
    fields = ["competition", "seed", "status", "exit_code", "duration_s", "message"]
    readonly_fields = fields
    can_delete = False


@admin.register(Launch)
class LaunchAdmin(admin.ModelAdmin):
    list_display = ["pk", "agent_name", "owner", "backend", "seeds", "experiment", "created_at"]
    inlines = [AgentRunInline]


@admin.register(AgentRun)
class AgentRunAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "launch",
        "competition",
        "seed",
        "status",
        "exit_code",
        "duration_s",
        "heartbeat_at",
    ]
    list_filter = ["status"]


admin.site.register(SubmissionSnapshot)
