"""Upload API: one view per operation, small input/output serializers."""

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from webapp.results import selectors
from webapp.results.models import Upload
from webapp.results.uploads import progress
from webapp.results.uploads.input import upload_metadata
from webapp.results.uploads.services import (
    UploadRefused,
    UploadThrottled,
    experiment_regrade,
    upload_create,
)


class UploadProgressOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Upload.Status.choices)
    status_label = serializers.CharField()
    is_final = serializers.BooleanField(help_text="no worker has anything left to do for it")
    waiting_for_worker = serializers.BooleanField()
    message = serializers.CharField(allow_blank=True)
    no_worker = serializers.CharField(
        allow_blank=True,
        help_text='"no grading worker has answered for N s" while this upload waits for one '
        "and none answers; empty otherwise",
    )
    kind = serializers.CharField()
    runs_total = serializers.IntegerField()
    runs_graded = serializers.IntegerField()
    runs_failed = serializers.IntegerField()
    failures = serializers.ListField(
        child=serializers.DictField(), help_text="runs that failed to grade, with the reason"
    )
    runs_invalid = serializers.IntegerField(
        help_text="runs graded with an invalid or missing submission (count as 0)"
    )
    invalid_submissions = serializers.ListField(
        child=serializers.DictField(),
        help_text="those runs, with what was wrong and whether a submission was made "
        "(submission_made: false for a run that made none)",
    )
    error = serializers.CharField(allow_null=True)
    warnings = serializers.ListField(child=serializers.CharField())
    experiment = serializers.IntegerField(allow_null=True)
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    original_name = serializers.CharField()


class UploadCreateApi(APIView):
    permission_classes = [IsAuthenticated]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "uploads"  # shared with the upload page (MLEBOARD_UPLOAD_RATE)
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
                    "resumed": serializers.BooleanField(
                        help_text="a duplicate whose earlier upload failed or stalled, "
                        "processed again"
                    ),
                    "metadata_ignored": serializers.BooleanField(
                        help_text="a duplicate sent with other metadata than its earlier "
                        "upload: that upload's metadata is kept, the new one is not applied"
                    ),
                    "message": serializers.CharField(
                        allow_blank=True, help_text="what happened to a duplicate, in words"
                    ),
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
            metadata = upload_metadata(request.data.get("metadata"))
        except ValueError as exc:
            return Response({"error": str(exc)}, status=400)
        try:
            created = upload_create(owner=request.user, uploaded_file=archive, metadata=metadata)
        except UploadThrottled as exc:
            return Response(
                {"error": str(exc)}, status=429, headers={"Retry-After": str(exc.retry_after)}
            )
        except UploadRefused as exc:
            body = {"error": str(exc)}
            if exc.upload is not None:
                body["id"] = exc.upload.pk
            return Response(body, status=400)
        upload = created.upload
        return Response(
            {
                "id": upload.pk,
                "url": reverse("api-upload-detail", args=[upload.pk]),
                "duplicate": created.duplicate,
                "resumed": created.resumed,
                "metadata_ignored": created.metadata_ignored,
                "message": created.note,
            },
            status=status.HTTP_202_ACCEPTED,
        )


class UploadDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=UploadProgressOutput)
    def get(self, request, pk: int):
        upload = get_object_or_404(selectors.uploads_visible_to(request.user), pk=pk)
        return Response(UploadProgressOutput(progress.upload_progress(upload)).data)


class ExperimentRegradeApi(APIView):
    permission_classes = [IsAuthenticated]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "regrades"  # MLEBOARD_REGRADE_RATE

    @extend_schema(
        request=None,
        responses={
            202: inline_serializer("RegradeAccepted", {"runs_queued": serializers.IntegerField()}),
            400: OpenApiResponse(description="Reported experiments cannot be re-graded"),
            403: OpenApiResponse(description="Not yours, and you may not re-grade others'"),
        },
    )
    def post(self, request, pk: int):
        if not selectors.experiments_visible_to(request.user).filter(pk=pk).exists():
            raise Http404
        experiment = selectors.experiments_regradable_by(request.user).filter(pk=pk).first()
        if experiment is None:
            return Response(
                {"error": "only the experiment's owner and operators may re-grade it"},
                status=403,
            )
        try:
            queued = experiment_regrade(experiment, by=request.user)
        except ValueError as exc:
            return Response({"error": str(exc)}, status=400)
        return Response({"runs_queued": queued}, status=status.HTTP_202_ACCEPTED)
