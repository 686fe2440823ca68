"""Read API for experiments and their reports, with the same figures the pages show
(the names are ``mleboard aggregate --format json``'s)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark.reports import EXTRA_KEYS, REPORT_KEYS
from webapp.results import selectors
from webapp.results.aggregates import wants_clean_subset
from webapp.results.leaderboard import TRI_STATE_FILTERS
from webapp.results.models import Experiment, GradeReport


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
    competition_id = serializers.CharField(source="competition.slug")

    class Meta:
        model = GradeReport
        fields = ["competition_id", "seed", *REPORT_KEYS[1:], *EXTRA_KEYS[1:], "source"]


class ExperimentListApi(APIView):
    permission_classes = [AllowAny]
    serializer_class = ExperimentOutput

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

    def get(self, request, pk: int):
        experiment = selectors.experiment_visible_to(request.user, pk)
        return Response(ReportOutput(selectors.experiment_reports(experiment), many=True).data)


class LeaderboardApi(APIView):
    """The public leaderboard: the same entries as ``/`` (and its JSON export), with the
    same filters as query parameters (scaffold, model, source, since, until,
    internet_access/test_feedback/source_available/known_leakage = yes|no, clean=1,
    integrity=checked|clean|flagged|disqualified|unchecked, descriptions=original|obfuscated)."""

    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[
            *(OpenApiParameter(name, str) for name in ("scaffold", "model", "source")),
            *(OpenApiParameter(name, OpenApiTypes.DATE) for name in ("since", "until")),
            *(OpenApiParameter(name, str, enum=["yes", "no"]) for name in TRI_STATE_FILTERS),
            OpenApiParameter("clean", str, description="1: the clean subset"),
            OpenApiParameter(
                "integrity",
                str,
                enum=["checked", "clean", "flagged", "disqualified", "unchecked"],
                description="entries by their runs' integrity checks",
            ),
            OpenApiParameter("descriptions", str, enum=["original", "obfuscated"]),
        ],
        responses=inline_serializer(
            "Leaderboard",
            {
                "clean_subset": serializers.BooleanField(),
                "entries": serializers.ListField(child=serializers.DictField()),
            },
        ),
    )
    def get(self, request):
        from webapp.results.leaderboard import LeaderboardFilters, leaderboard_entries

        filters = LeaderboardFilters.from_query(request.query_params)
        return Response(
            {
                "clean_subset": filters.clean,
                "entries": leaderboard_entries(user=request.user, filters=filters),
            }
        )


class CompareApi(APIView):
    """``?experiments=a,b[,...]&split=all[&clean=1]``: the first experiment against each
    other one, with the paired bootstrap interval and sign-flip test, or per split from
    published figures (the compare page's figures, for the same URL; of the clean subset
    with ``clean=1``)."""

    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("experiments", str, required=True, description="ids: 3,7"),
            OpenApiParameter("split", str),
            OpenApiParameter("clean", str, description="1: the clean subset"),
        ],
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
    )
    def get(self, request):
        chosen, _ = selectors.experiments_chosen(
            request.user, request.query_params.get("experiments", "")
        )
        if len(chosen) < 2:
            return Response(
                {"error": "give two or more experiments you can see: ?experiments=3,7"}, status=400
            )
        result = selectors.comparison_of(
            chosen,
            request.query_params.get("split", ""),
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
