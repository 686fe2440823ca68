"""Read API for experiments and their reports, with the same figures the pages show
(the names are ``mleboard aggregate --format json``'s)."""

import re

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark.reports import EXTRA_KEYS, REPORT_KEYS
from webapp.core.bad_input import IsoDateField, split_asked, split_parameter
from webapp.results import selectors
from webapp.results.grading.aggregates import wants_clean_subset
from webapp.results.models import Experiment, GradeReport
from webapp.results.pages.leaderboard import INTEGRITY_FILTERS, TRI_STATE_FILTERS


class ExperimentOutput(serializers.ModelSerializer):
    scaffold = serializers.CharField(source="agent.scaffold.name")
    model = serializers.CharField(source="agent.model.name")
    agent_version = serializers.CharField(source="agent.version")
    url = serializers.CharField(source="get_absolute_url")

    class Meta:
        model = Experiment
        fields = [
            "id",
            "name",
            "url",
            "scaffold",
            "model",
            "agent_version",
            "source",
            "is_published",
            "hardware",
            "runtime_hours",
            "date",
            "internet_access",
            "test_feedback",
            "source_available",
            "source_url",
            "known_leakage",
            "knowledge_cutoff",
        ]


class ExperimentDetailOutput(ExperimentOutput):
    figures = serializers.SerializerMethodField()

    class Meta(ExperimentOutput.Meta):
        fields = [*ExperimentOutput.Meta.fields, "figures"]

    def get_figures(self, obj) -> dict:
        return selectors.split_figures(obj)


class ReportOutput(serializers.ModelSerializer):
    """One run's current report, with the run's id and the absolute URLs a client follows
    to the run: its page, its files (the run's API, which lists them: ``files`` there,
    each read at ``files/<path>``) and its trajectory. Whoever sees the report sees the
    run; ``files_url`` and ``trajectory_url`` are null for a run with no files here (an
    imported report); the trajectory answers 404 for a run that left none. The
    ``submission_path`` is relative to the run's folder."""

    competition_id = serializers.CharField(source="competition.slug")
    run_url = serializers.SerializerMethodField()
    files_url = serializers.SerializerMethodField()
    trajectory_url = serializers.SerializerMethodField()

    class Meta:
        model = GradeReport
        fields = [
            "competition_id",
            "seed",
            *REPORT_KEYS[1:],
            *EXTRA_KEYS[1:],
            "source",
            "run_id",
            "run_url",
            "files_url",
            "trajectory_url",
        ]

    def _url(self, name: str, report: GradeReport) -> str:
        return self.context["request"].build_absolute_uri(reverse(name, args=[report.run_id]))

    def get_run_url(self, report: GradeReport) -> str:
        return self._url("run-page-result", report)

    def get_files_url(self, report: GradeReport) -> str | None:
        return self._url("api-run-result", report) if self._has_files(report) else None

    def get_trajectory_url(self, report: GradeReport) -> str | None:
        return self._url("api-run-trajectory-result", report) if self._has_files(report) else None

    def _has_files(self, report: GradeReport) -> bool:
        return self.context["runs_have_files"]


class ExperimentListApi(APIView):
    permission_classes = [AllowAny]
    serializer_class = ExperimentOutput

    @extend_schema(responses=ExperimentOutput(many=True))
    def get(self, request):
        return Response(
            ExperimentOutput(selectors.experiments_visible_to(request.user), many=True).data
        )


class ExperimentDetailApi(APIView):
    permission_classes = [AllowAny]
    serializer_class = ExperimentDetailOutput

    def get(self, request, pk: int):
        return Response(
            ExperimentDetailOutput(selectors.experiment_visible_to(request.user, pk)).data
        )


class ExperimentReportsApi(APIView):
    permission_classes = [AllowAny]
    serializer_class = ReportOutput

    @extend_schema(responses=ReportOutput(many=True))
    def get(self, request, pk: int):
        experiment = selectors.experiment_visible_to(request.user, pk)
        reports = selectors.experiment_reports(experiment)
        context = {
            "request": request,
            "runs_have_files": selectors.experiment_runs_have_files(experiment),
        }
        return Response(ReportOutput(reports, many=True, context=context).data)


INTEGRITY_CHOICES = list(INTEGRITY_FILTERS)


class LeaderboardQuery(serializers.Serializer):
    """The leaderboard's filters as query parameters; a value outside them is a 400 (the
    page, for people, ignores it)."""

    scaffold = serializers.CharField(required=False, allow_blank=True)
    model = serializers.CharField(required=False, allow_blank=True)
    source = serializers.CharField(required=False, allow_blank=True)
    since = IsoDateField(required=False)
    until = IsoDateField(required=False)
    clean = serializers.CharField(required=False, allow_blank=True, help_text="1: the clean subset")
    integrity = serializers.ChoiceField(
        INTEGRITY_CHOICES, required=False, help_text="entries by their runs' integrity checks"
    )
    descriptions = serializers.ChoiceField(["original", "obfuscated"], required=False)

    def get_fields(self):
        fields = super().get_fields()
        for name in TRI_STATE_FILTERS:
            fields[name] = serializers.ChoiceField(["yes", "no"], required=False)
        return fields


class LeaderboardOutput(serializers.Serializer):
    clean_subset = serializers.BooleanField()
    entries = serializers.ListField(child=serializers.DictField())


class LeaderboardApi(APIView):
    """The public leaderboard: the same entries as ``/`` (and its JSON export), with the
    same filters as query parameters (scaffold, model, source, since, until,
    internet_access/test_feedback/source_available/known_leakage = yes|no, clean=1,
    integrity=checked|clean|flagged|disqualified|unchecked, descriptions=original|obfuscated)."""

    permission_classes = [AllowAny]

    @extend_schema(parameters=[LeaderboardQuery], responses=LeaderboardOutput)
    def get(self, request):
        from webapp.results.pages.leaderboard import LeaderboardFilters, leaderboard_entries

        # A plain dict: from a QueryDict, DRF reads an empty value as no value.
        LeaderboardQuery(data=request.query_params.dict()).is_valid(raise_exception=True)
        filters = LeaderboardFilters.from_query(request.query_params)
        return Response(
            {
                "clean_subset": filters.clean,
                "entries": leaderboard_entries(user=request.user, filters=filters),
            }
        )


# Ids of at most 18 digits: any such number is a primary key's (below 2**63).
EXPERIMENT_IDS = re.compile(r"^[0-9]{1,18}(,[0-9]{1,18})+$")


class CompareApi(APIView):
    """``?experiments=a,b[,...]&split=all[&clean=1]``: the first experiment against each
    other one, with the paired bootstrap interval and sign-flip test, or per split from
    published figures (the compare page's figures, for the same URL; of the clean subset
    with ``clean=1``). When no split is common to all, each pair that shares one is
    compared on it, and each pair sharing none has the error "no split in common"; every
    comparison names its ``split``."""

    permission_classes = [AllowAny]
    error_statuses = (404,)  # ids that name no experiment the viewer may see

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "experiments",
                str,
                required=True,
                pattern=EXPERIMENT_IDS.pattern,
                description="two or more experiment ids, comma-separated: 3,7",
            ),
            split_parameter(figures=True, default="the first split common to all"),
            OpenApiParameter("clean", str, description="1: the clean subset"),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request):
        raw = request.query_params.get("experiments", "")
        if not EXPERIMENT_IDS.fullmatch(raw):
            return Response(
                {"error": "give two or more experiments by id, comma-separated: ?experiments=3,7"},
                status=400,
            )
        chosen, unseen = selectors.experiments_chosen(request.user, raw)
        if unseen or len(chosen) < len({int(part) for part in raw.split(",")}):
            return Response({"error": "no experiment you can see has some of these ids"}, 404)
        result = selectors.comparison_of(
            chosen,
            split_asked(request.query_params, figures=True),
            clean=wants_clean_subset(request.query_params),
        )
        return Response(
            {
                "clean_subset": result["clean"],
                "split": result["split"],
                "common_splits": result["common_splits"],
                "experiments": [e.pk for e in chosen],
                "any_medal_by_split": {str(pk): v for pk, v in result["by_split"].items()},
                "comparisons": result["comparisons"],
            }
        )
