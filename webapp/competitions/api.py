"""Read API for competitions: facts, current thresholds and known issues."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.competitions import selectors
from webapp.competitions.models import Competition, KnownIssue, PrivateLeaderboard
from webapp.core.bad_input import split_asked, split_parameter


class ThresholdsOutput(serializers.ModelSerializer):
    class Meta:
        model = PrivateLeaderboard
        fields = [
            "version",
            "n_teams",
            "lower_is_better",
            "gold_threshold",
            "silver_threshold",
            "bronze_threshold",
            "median_threshold",
            "source_format",
            "is_synthetic",
            "warnings",
        ]


class KnownIssueOutput(serializers.ModelSerializer):
    class Meta:
        model = KnownIssue
        fields = ["kind", "note", "source", "excludes_from_clean_subset"]


class CompetitionOutput(serializers.ModelSerializer):
    id = serializers.CharField(source="slug")
    splits = serializers.SlugRelatedField(many=True, read_only=True, slug_field="slug")

    class Meta:
        model = Competition
        fields = [
            "id",
            "name",
            "category",
            "complexity",
            "metric",
            "lower_is_better",
            "awards_medals",
            "splits",
            "id_column",
            "target_columns",
            "is_demo",
            "retired",
            "version",
            "deadline",
            "deadline_source",
        ]


class FamiliarityTextOutput(serializers.Serializer):
    name = serializers.CharField()
    value = serializers.FloatField(allow_null=True)
    tokens = serializers.IntegerField()
    chunks = serializers.IntegerField()


class FamiliarityOutput(serializers.Serializer):
    """A base model's familiarity with the competition's texts: ``value`` the mean token
    probability (0-1) over ``tokens`` tokens; null while it is measured or when it failed
    (``status``, ``error``); ``current`` false when the texts changed since."""

    model = serializers.CharField()
    value = serializers.FloatField(allow_null=True)
    tokens = serializers.IntegerField(allow_null=True)
    status = serializers.CharField()
    error = serializers.CharField()
    current = serializers.BooleanField()
    texts = FamiliarityTextOutput(many=True)
    computed_at = serializers.DateTimeField(allow_null=True)


class CompetitionDetailOutput(CompetitionOutput):
    leaderboard = serializers.SerializerMethodField()
    known_issues = KnownIssueOutput(many=True, read_only=True)
    familiarity = serializers.SerializerMethodField()

    class Meta(CompetitionOutput.Meta):
        fields = [*CompetitionOutput.Meta.fields, "leaderboard", "known_issues", "familiarity"]

    @extend_schema_field(FamiliarityOutput(many=True))
    def get_familiarity(self, obj) -> list[dict]:
        from webapp.competitions.familiarity import competition_familiarity_rows

        return FamiliarityOutput(competition_familiarity_rows(obj), many=True).data

    def get_leaderboard(self, obj) -> dict | None:
        board = obj.current_leaderboard
        return ThresholdsOutput(board).data if board else None


class CompetitionListApi(APIView):
    permission_classes = [AllowAny]
    serializer_class = CompetitionOutput

    @extend_schema(
        parameters=[
            *(OpenApiParameter(n, str) for n in ("category", "complexity", "q")),
            split_parameter(),
        ],
        responses=CompetitionOutput(many=True),
    )
    def get(self, request):
        params = {k: request.query_params.get(k, "") for k in ("category", "complexity", "q")}
        params["split"] = split_asked(request.query_params)
        return Response(CompetitionOutput(selectors.competition_list(**params), many=True).data)


class CompetitionDetailApi(APIView):
    permission_classes = [AllowAny]
    serializer_class = CompetitionDetailOutput

    def get(self, request, slug: str):
        competition = get_object_or_404(Competition, slug=slug)
        return Response(CompetitionDetailOutput(competition).data)
