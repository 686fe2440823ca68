"""Upload API: one view per operation, small input/output serializers."""

import json

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.results import selectors
from webapp.results.models import Upload
from webapp.results.uploads import UploadRefused, experiment_regrade, upload_create, upload_progress


class UploadMetadataInput(serializers.Serializer):
    scaffold = serializers.CharField(max_length=100)
    model = serializers.CharField(max_length=100)
    agent_version = serializers.CharField(max_length=60, required=False, allow_blank=True)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    hardware = serializers.CharField(max_length=200, required=False, allow_blank=True)
    runtime_hours = serializers.FloatField(required=False, allow_null=True, min_value=0)
    internet_access = serializers.BooleanField(required=False, allow_null=True, default=None)
    test_feedback = serializers.BooleanField(required=False, allow_null=True, default=None)
    source_url = serializers.URLField(required=False, allow_blank=True)
    seeds = serializers.DictField(child=serializers.IntegerField(min_value=0), required=False)


def metadata_from(raw) -> dict:
    """Parse and validate the ``metadata`` field; raises ValueError with a readable reason."""
    if raw in (None, ""):
        raise ValueError(
            'the "metadata" field is required: JSON with at least "scaffold" and "model"'
        )
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f'"metadata" is not valid JSON: {exc}') from None
    if not isinstance(raw, dict):
        raise ValueError('"metadata" must be a JSON object')
    serializer = UploadMetadataInput(data=raw)
    if not serializer.is_valid():
        problems = "; ".join(
            f"{field}: {' '.join(str(e) for e in errors)}"
            for field, errors in serializer.errors.items()
        )
        raise ValueError(f"metadata is not valid: {problems}")
    return {k: v for k, v in serializer.validated_data.items() if v is not None}


class UploadProgressOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Upload.Status.choices)
    kind = serializers.CharField()
    runs_total = serializers.IntegerField()
    runs_graded = serializers.IntegerField()
    runs_failed = serializers.IntegerField()
    failures = serializers.ListField(child=serializers.DictField())
    error = serializers.CharField(allow_null=True)
    warnings = serializers.ListField(child=serializers.CharField())
    experiment = serializers.IntegerField(allow_null=True)
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    original_name = serializers.CharField()


class UploadCreateApi(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "UploadCreateInput",
                {
                    "archive": serializers.FileField(),
                    "metadata": serializers.CharField(help_text="JSON object"),
                },
            )
        },
        responses={
            202: inline_serializer(
                "UploadAccepted",
                {
                    "id": serializers.IntegerField(),
                    "url": serializers.CharField(),
                    "duplicate": serializers.BooleanField(),
                },
            ),
            400: inline_serializer("UploadError", {"error": serializers.CharField()}),
        },
    )
    def post(self, request):
        archive = request.FILES.get("archive")
        if archive is None:
            return Response(
                {"error": 'attach the archive as the multipart file field "archive"'}, status=400
            )
        try:
            metadata = metadata_from(request.data.get("metadata"))
        except ValueError as exc:
            return Response({"error": str(exc)}, status=400)
        try:
            created = upload_create(owner=request.user, uploaded_file=archive, metadata=metadata)
        except UploadRefused as exc:
            body = {"error": str(exc)}
            if exc.upload is not None:
                body["id"] = exc.upload.pk
            return Response(body, status=400)
        upload = created.upload
        return Response(
            {"id": upload.pk, "url": f"/api/uploads/{upload.pk}/", "duplicate": created.duplicate},
            status=status.HTTP_202_ACCEPTED,
        )


def own_upload(request, pk: int) -> Upload:
    qs = Upload.objects.all()
    if not request.user.is_staff:
        qs = qs.filter(owner=request.user)
    upload = qs.filter(pk=pk).first()
    if upload is None:
        raise Http404
    return upload


class UploadDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=UploadProgressOutput)
    def get(self, request, pk: int):
        return Response(UploadProgressOutput(upload_progress(own_upload(request, pk))).data)


class ExperimentRegradeApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        responses={
            202: inline_serializer("RegradeAccepted", {"runs_queued": serializers.IntegerField()}),
            400: OpenApiResponse(description="Reported experiments cannot be re-graded"),
        },
    )
    def post(self, request, pk: int):
        experiment = selectors.experiments_editable_by(request.user).filter(pk=pk).first()
        if experiment is None:
            raise Http404
        try:
            queued = experiment_regrade(experiment)
        except ValueError as exc:
            return Response({"error": str(exc)}, status=400)
        return Response({"runs_queued": queued}, status=status.HTTP_202_ACCEPTED)
