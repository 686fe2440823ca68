from django.contrib import admin

from webapp.core.visibility import Perm, VisibleInAdmin, has_perm
from webapp.runs.models import AgentRun, HostClaim, Launch, RunHost, SubmissionSnapshot


class AgentRunInline(admin.TabularInline):
    model = AgentRun
    extra = 0
    fields = ["competition", "seed", "status", "exit_code", "duration_s", "message"]
    readonly_fields = fields
    can_delete = False


@admin.register(Launch)
class LaunchAdmin(VisibleInAdmin, admin.ModelAdmin):
    list_display = ["pk", "agent_name", "owner", "backend", "seeds", "experiment", "created_at"]
    inlines = [AgentRunInline]


@admin.register(AgentRun)
class AgentRunAdmin(VisibleInAdmin, admin.ModelAdmin):
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


@admin.register(SubmissionSnapshot)
class SubmissionSnapshotAdmin(VisibleInAdmin, admin.ModelAdmin):
    list_display = ["agent_run", "elapsed_s", "score", "valid_submission", "any_medal", "error"]
    list_select_related = ["agent_run__launch", "agent_run__competition"]
    list_filter = ["valid_submission", "any_medal"]


class HostClaimInline(admin.TabularInline):
    model = HostClaim
    extra = 0
    fields = ["agent_run", "cpus", "memory_bytes", "gpu_ids", "boot", "created_at"]
    readonly_fields = fields
    can_delete = False

    def has_view_permission(self, request, obj=None):
        return has_perm(request.user, Perm.MANAGE_HOSTS)


@admin.register(RunHost)
class RunHostAdmin(admin.ModelAdmin):
    """Hosts register themselves and beat; the sweeper marks them down. The live view with
    what is free is the staff page /hosts/."""

    list_display = [
        "name",
        "state",
        "heartbeat_at",
        "cpus",
        "memory_bytes",
        "gpu_ids",
        "gpu_model",
        "engine",
        "queues",
        "slots",
    ]
    list_filter = ["state"]
    readonly_fields = [
        "name",
        "state",
        "cpus",
        "memory_bytes",
        "gpu_ids",
        "gpu_model",
        "engine",
        "queues",
        "slots",
        "boot",
        "started_at",
        "heartbeat_at",
        "down_since",
        "note",
    ]
    inlines = [HostClaimInline]

    # Managing the hosts is one permission (runs.manage_runhost), here as on /hosts/.
    def has_view_permission(self, request, obj=None):
        return self._manages(request)

    def has_change_permission(self, request, obj=None):
        return self._manages(request)

    def has_delete_permission(self, request, obj=None):
        return self._manages(request)

    def has_add_permission(self, request):
        return False

    @staticmethod
    def _manages(request) -> bool:
        return has_perm(request.user, Perm.MANAGE_HOSTS)
