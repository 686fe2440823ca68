"""Submitted-agent API: submit, see, review, reproduce; one view per operation. Bad input
is a 400 whose ``error`` says what is wrong and ``field`` names where."""

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark.splits import UnknownSplit, resolve_split
from runner.spec import parse_size
from webapp.agentsubs import selectors
from webapp.agentsubs.models import AgentSubmission, Reproduction
from webapp.agentsubs.reproductions import reproduction_start
from webapp.agentsubs.services import SubmissionInvalid, submission_create, submission_review
from webapp.core.bad_input import whole_number


def refused(field: str, message: str, code: int = status.HTTP_400_BAD_REQUEST) -> Response:
    return Response({"error": f"{field}: {message}", "field": field}, status=code)


def _first_error(errors: dict) -> Response:
    field, problems = next(iter(errors.items()))
    problem = problems[0] if isinstance(problems, list) and problems else problems
    if isinstance(problem, dict):  # a nested field's error: name its first part
        inner, deeper = next(iter(problem.items()))
        field, problem = f"{field}.{inner}", deeper[0] if isinstance(deeper, list) else deeper
    return refused(str(field), str(problem))


def submission_data(submission: AgentSubmission, request) -> dict:
    return {
        "id": submission.pk,
        "url": request.build_absolute_uri(submission.get_absolute_url()),
        "name": submission.name,
        "version": submission.version,
        "site_name": submission.site_name,
        "sha256": submission.sha256,
        "status": submission.status,
        "status_label": submission.status_label,
        "is_final": submission.is_final,
        "reason": submission.reason,
        "refusal": submission.refusal,
        "files": submission.files,
        "definition": submission.definition,
        "claims": submission.claims_id,
        "image_ref": submission.image_ref,
        "image_bytes": submission.image_bytes,
        "build_log_tail": submission.build_log[-4000:],
        "reproductions": [
            r.pk for r in selectors.reproductions_visible_to(request.user, submission)
        ],
    }


def reproduction_data(reproduction: Reproduction, request) -> dict:
    return {
        "id": reproduction.pk,
        "url": request.build_absolute_uri(reproduction.get_absolute_url()),
        "agent": reproduction.submission_id,
        "launch": reproduction.launch_id,
        "experiment": reproduction.launch.experiment_id,
        "reproduces": reproduction.target_id,
        "split": reproduction.split,
        "seeds": reproduction.seeds,
        "status": reproduction.status,
        "is_final": reproduction.is_final,
        "error": reproduction.error,
        "verdict": reproduction.verdict,
        "verdicts": reproduction.verdicts,
        "cost": reproduction.cost,
    }


class _SubmitFields(serializers.Serializer):
    """The text fields beside the archive (a serializer refuses NUL and bounds length)."""

    experiment = serializers.CharField(required=False, allow_blank=True, max_length=20)


class AgentSubmitApi(APIView):
    permission_classes = [IsAuthenticated]
    error_statuses = (413,)  # a body past what the server reads
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "AgentSubmitInput",
                {
                    "archive": serializers.FileField(
                        help_text="a zip or tar(.gz) of the agent's folder"
                    ),
                    "experiment": serializers.IntegerField(
                        required=False, help_text="the experiment it claims to reproduce"
                    ),
                },
            )
        },
        responses={201: dict, 400: dict, 403: dict},
        summary="Submit an agent (needs “Can submit agents”)",
    )
    def post(self, request):
        archive = request.FILES.get("archive")
        if archive is None:
            return refused("archive", "send the agent's archive as the multipart field archive")
        given = _SubmitFields(data=request.data)
        if not given.is_valid():
            return _first_error(given.errors)
        raw = given.validated_data.get("experiment")
        claims = None
        if raw not in (None, ""):
            claims = whole_number(str(raw))
            if claims is None:
                return refused("experiment", "must be an experiment's id (a whole number)")
        try:
            submission = submission_create(owner=request.user, uploaded_file=archive, claims=claims)
        except PermissionError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_403_FORBIDDEN)
        except SubmissionInvalid as exc:
            return refused(exc.field, str(exc))
        return Response(
            submission_data(submission, request),
            status=status.HTTP_201_CREATED,
            headers={"Location": reverse("api-agent-detail", args=[submission.pk])},
        )


class AgentDetailApi(APIView):
    @extend_schema(responses={200: dict, 404: dict}, summary="A submitted agent")
    def get(self, request, pk: int):
        submission = selectors.submission_visible_to(request.user, pk)
        return Response(submission_data(submission, request))


class ReviewInput(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["approve", "refuse"])
    reason = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")


class AgentReviewApi(APIView):
    permission_classes = [IsAuthenticated]
    error_statuses = (409,)  # reviewed already

    @extend_schema(
        request=ReviewInput,
        responses={200: dict, 400: dict, 403: dict, 409: dict},
        summary="Approve or refuse a submitted agent (needs “Can approve agents”)",
    )
    def post(self, request, pk: int):
        submission = selectors.submission_visible_to(request.user, pk)
        data = ReviewInput(data=request.data)
        if not data.is_valid():
            return _first_error(data.errors)
        try:
            moved = submission_review(
                submission,
                by=request.user,
                approve=data.validated_data["decision"] == "approve",
                reason=data.validated_data["reason"],
            )
        except PermissionError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_403_FORBIDDEN)
        except SubmissionInvalid as exc:
            return refused(exc.field, str(exc))
        if not moved:
            return Response({"error": "it was reviewed already"}, status=status.HTTP_409_CONFLICT)
        submission.refresh_from_db()
        return Response(submission_data(submission, request))


class ReproduceInput(serializers.Serializer):
    experiment = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=2**63 - 1
    )
    split = serializers.CharField(max_length=40, default="demo")
    seeds = serializers.IntegerField(min_value=1, max_value=20, default=3)
    cpus = serializers.FloatField(
        min_value=0.01,
        max_value=4096,
        required=False,
        allow_null=True,
        default=None,
        help_text="CPUs per run (default: the host's)",
    )
    memory = serializers.CharField(
        max_length=20,
        required=False,
        allow_blank=True,
        default="",
        help_text='memory per run, e.g. "8g" (default: no limit)',
    )

    def validate_memory(self, value: str) -> int | None:
        if not value.strip():
            return None
        try:
            return parse_size(value)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None

    def validate_split(self, value: str) -> str:
        try:
            return resolve_split(value)
        except UnknownSplit as error:
            raise serializers.ValidationError(str(error)) from None


class AgentReproduceApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=ReproduceInput,
        responses={201: dict, 400: dict, 403: dict},
        summary="Reproduce an experiment with a built agent (24 h a run, the canonical limits)",
    )
    def post(self, request, pk: int):
        submission = selectors.submission_visible_to(request.user, pk)
        data = ReproduceInput(data=request.data)
        if not data.is_valid():
            return _first_error(data.errors)
        try:
            reproduction = reproduction_start(
                submission,
                by=request.user,
                target_id=data.validated_data["experiment"],
                split=data.validated_data["split"],
                seeds=data.validated_data["seeds"],
                cpus=data.validated_data["cpus"],
                memory_bytes=data.validated_data["memory"],
            )
        except PermissionError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_403_FORBIDDEN)
        except SubmissionInvalid as exc:
            return refused(exc.field, str(exc))
        return Response(reproduction_data(reproduction, request), status=status.HTTP_201_CREATED)


class ReproductionDetailApi(APIView):
    @extend_schema(responses={200: dict, 404: dict}, summary="A reproduction and its verdict")
    def get(self, request, pk: int):
        reproduction = selectors.reproduction_visible_to(request.user, pk)
        if reproduction is None:
            raise Http404
        return Response(reproduction_data(reproduction, request))
