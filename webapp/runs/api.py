"""Agent-run API: launch, watch (status and log tail), cancel; the run hosts (staff)."""

from django.conf import settings
from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark.splits import UnknownSplit, resolve_split, split_names_text
from runner.spec import MAX_GPUS
from webapp.core.bad_input import IsoDateField
from webapp.results.models import Run
from webapp.runs import hosts, selectors
from webapp.runs.models import AgentRun, RunHost
from webapp.runs.services.catalogue import LaunchRefused
from webapp.runs.services.ending import agent_run_cancel
from webapp.runs.services.launch import launch_create_from_input


class ManagesHosts(BasePermission):
    """Holds ``runs.manage_runhost`` (the operators' group does); the staff flag alone
    does not."""

    message = "you do not have the permission to see the run hosts"

    def has_permission(self, request, view) -> bool:
        return selectors.can_manage_hosts(request.user)


class LaunchInput(serializers.Serializer):
    """Resources default to the paper's protocol: 24 h, 36 vCPU, 440 GB RAM, one GPU,
    hourly snapshots. A worker host that cannot give them fails the run and says why."""

    agent = serializers.CharField(max_length=100)
    competitions = serializers.ListField(
        child=serializers.CharField(), required=False, default=list
    )
    split = serializers.CharField(
        max_length=40,
        required=False,
        allow_blank=True,
        default="",
        help_text=f"every competition of a split: {split_names_text()}",
    )
    seeds = serializers.IntegerField(min_value=1, max_value=20, default=1)
    cpus = serializers.FloatField(min_value=0.01, required=False, allow_null=True, default=None)
    memory = serializers.CharField(
        required=False, allow_blank=True, default="", help_text='e.g. "8g"; empty: no limit'
    )
    shm = serializers.CharField(required=False, allow_blank=True, default="")
    gpus = serializers.IntegerField(min_value=0, max_value=MAX_GPUS, default=0)
    time_limit_s = serializers.FloatField(
        min_value=1, required=False, allow_null=True, default=None
    )
    snapshot_interval_s = serializers.FloatField(
        min_value=1, required=False, allow_null=True, default=None
    )
    obfuscated_descriptions = serializers.BooleanField(
        default=False,
        help_text="run on MLE-bench's obfuscated descriptions (no Kaggle identity)",
    )
    knowledge_cutoff = IsoDateField(
        required=False,
        allow_null=True,
        default=None,
        help_text="the model's knowledge cutoff (YYYY-MM-DD), for the contamination view",
    )
    backend = serializers.ChoiceField(
        choices=["", "docker", "local"],
        required=False,
        default="",
        help_text="the site's backend is the operator's choice: asking for another one is refused",
    )

    def validate_split(self, value: str) -> str:
        if not value.strip():
            return ""
        try:
            return resolve_split(value)
        except UnknownSplit as error:
            raise serializers.ValidationError(str(error)) from None


class AgentRunStatusOutput(serializers.Serializer):
    """One agent run as ``GET /api/launches/{id}/`` and ``GET /api/agent-runs/{id}/`` give it."""

    id = serializers.IntegerField()
    competition_id = serializers.CharField()
    seed = serializers.IntegerField()
    status = serializers.ChoiceField(choices=AgentRun.Status.choices)
    status_label = serializers.CharField(help_text="the status as the pages say it")
    is_final = serializers.BooleanField(help_text="it ran to an end and will not change")
    is_cancellable = serializers.BooleanField(help_text="a cancel would still stop it")
    message = serializers.CharField(help_text="why it is where it is, for people")
    detail = serializers.CharField()
    confinement = serializers.CharField(help_text="what the agent could read of the host")
    exit_code = serializers.IntegerField(allow_null=True)
    duration_s = serializers.FloatField(allow_null=True)
    egress_granted = serializers.BooleanField()
    cancel_requested = serializers.BooleanField()
    overhead = serializers.DictField(
        child=serializers.FloatField(),
        help_text="the harness's own seconds: create_to_start_s, exit_to_collected_s",
    )
    validation_counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="the validation service's answers, by kind"
    )
    llm_usage = serializers.DictField(
        allow_null=True, help_text="what the agent asked of its model endpoint; null without one"
    )
    grading = serializers.ChoiceField(
        choices=Run.Status.choices, allow_null=True, help_text="its outputs' grading"
    )
    grading_is_final = serializers.BooleanField(allow_null=True)
    no_worker = serializers.CharField(
        help_text='"no run worker (runs.cpu) has answered for N s" while it waits for one '
        "and none answers; empty otherwise"
    )
    heartbeat_at = serializers.DateTimeField(allow_null=True)
    log_note = serializers.CharField(help_text="why its log is empty, when it is")


class AgentRunDetailOutput(AgentRunStatusOutput):
    log_tail = serializers.CharField(help_text="the end of its log (at most 20 kB)")


class LaunchStatusOutput(serializers.Serializer):
    id = serializers.IntegerField()
    agent = serializers.CharField()
    backend = serializers.CharField()
    experiment = serializers.IntegerField(
        allow_null=True, help_text="the reproduced experiment its results go to"
    )
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="its runs, by status"
    )
    runs = AgentRunStatusOutput(many=True)


class LaunchCreateApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=LaunchInput,
        responses={
            201: inline_serializer(
                "LaunchCreated",
                {
                    "id": serializers.IntegerField(),
                    "url": serializers.CharField(),
                    "runs": serializers.IntegerField(),
                },
            )
        },
    )
    def post(self, request):
        if not selectors.can_launch(request.user):
            return Response(
                {"error": "you do not have the permission to launch agent runs"}, status=403
            )
        serializer = LaunchInput(data=request.data)
        if not serializer.is_valid():
            return Response({"error": serializer.errors}, status=400)
        try:
            launch = launch_create_from_input(request.user, serializer.validated_data)
        except LaunchRefused as exc:
            return Response({"error": str(exc)}, status=400)
        return Response(
            {
                "id": launch.pk,
                "url": reverse("api-launch-detail", args=[launch.pk]),
                "runs": launch.runs.count(),
            },
            status=status.HTTP_201_CREATED,
        )


class LaunchDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=LaunchStatusOutput)
    def get(self, request, pk: int):
        launch = selectors.launches_visible_to(request.user).filter(pk=pk).first()
        if launch is None:
            raise Http404
        return Response(selectors.launch_status(launch))


class AgentRunDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=AgentRunDetailOutput)
    def get(self, request, pk: int):
        run = (
            selectors.agent_runs_visible_to(request.user)
            .filter(pk=pk)
            .select_related("result_run")
            .first()
        )
        if run is None:
            raise Http404
        return Response(
            {**selectors.agent_run_status(run), "log_tail": selectors.run_log_tail(run)}
        )


class AgentRunCancelApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        responses={
            202: inline_serializer("Cancelled", {"status": serializers.CharField()}),
            403: OpenApiResponse(
                description="The run is not yours and you may not cancel others' runs"
            ),
        },
    )
    def post(self, request, pk: int):
        run = selectors.agent_runs_visible_to(request.user).filter(pk=pk).first()
        if run is None:
            raise Http404
        if not selectors.agent_runs_cancellable_by(request.user).filter(pk=pk).exists():
            return Response(
                {"error": "only the run's owner and operators may cancel it"}, status=403
            )
        return Response({"status": agent_run_cancel(run)}, status=status.HTTP_202_ACCEPTED)


class _HostCapacity(serializers.Serializer):
    cpus = serializers.FloatField()
    memory_bytes = serializers.IntegerField()
    gpu_ids = serializers.ListField(child=serializers.CharField())
    gpu_model = serializers.CharField()


class _HostFree(serializers.Serializer):
    cpus = serializers.FloatField()
    memory_bytes = serializers.IntegerField()
    gpu_ids = serializers.ListField(child=serializers.CharField())


class _HostRun(serializers.Serializer):
    id = serializers.IntegerField()
    label = serializers.CharField()
    status = serializers.ChoiceField(choices=AgentRun.Status.choices)
    cpus = serializers.FloatField()
    memory_bytes = serializers.IntegerField()
    gpu_ids = serializers.ListField(child=serializers.CharField())
    url = serializers.CharField(help_text="the run's page")


class _Host(serializers.Serializer):
    name = serializers.CharField()
    state = serializers.ChoiceField(choices=RunHost.State.choices)
    silent = serializers.BooleanField(help_text="up, but it has missed its heartbeats")
    last_heartbeat = serializers.DateTimeField(allow_null=True)
    seconds_since_heartbeat = serializers.FloatField(allow_null=True)
    down_since = serializers.DateTimeField(allow_null=True)
    note = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)
    engine = serializers.CharField(help_text='its backend and engine: "docker 24.0.7", "local"')
    queues = serializers.ListField(child=serializers.CharField())
    slots = serializers.IntegerField(help_text="at most this many runs at once")
    capacity = _HostCapacity()
    free = _HostFree(help_text="what its claims leave")
    runs = _HostRun(many=True)


class HostListOutput(serializers.Serializer):
    stale_after_s = serializers.IntegerField()
    hosts = _Host(many=True)


class HostListApi(APIView):
    """Every run host the site knows (``runs.manage_runhost``): state (up or down; ``silent`` while
    it has missed beats but is not down yet), last heartbeat, capacity, what is free and
    the runs it holds."""

    permission_classes = [ManagesHosts]

    @extend_schema(responses=HostListOutput)
    def get(self, request):
        return Response({"stale_after_s": settings.MLEBOARD_STALE_AFTER_S, "hosts": hosts.status()})
