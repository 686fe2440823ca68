"""Read API for experiments and their reports, with the same figures the pages show
(the names are ``mleboard aggregate --format json``'s)."""

import re

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmark import disclosure, provenance
from benchmark.reports import EXTRA_KEYS, REPORT_KEYS
from webapp.core.bad_input import IsoDateField, JSONParser, split_asked, split_parameter
from webapp.core.visibility import may
from webapp.results import selectors
from webapp.results.disclosure import (
    PublishRefused,
    disclosure_update,
    experiment_publish,
    experiment_withdraw,
)
from webapp.results.grading.aggregates import wants_clean_subset
from webapp.results.models import Experiment, GradeReport
from webapp.results.pages.compare import class_warning
from webapp.results.pages.leaderboard import INTEGRITY_FILTERS, TRI_STATE_FILTERS


class ComparabilityOutput(serializers.Serializer):
    # "class" is a keyword: the field is named in get_fields.
    reasons = serializers.ListField(child=serializers.CharField())
    undisclosed = serializers.ListField(child=serializers.CharField())

    def get_fields(self):
        return {"class": serializers.ChoiceField(disclosure.CLASSES), **super().get_fields()}


class ExperimentOutput(serializers.ModelSerializer):
    scaffold = serializers.CharField(source="agent.scaffold.name")
    model = serializers.CharField(source="agent.model.name")
    agent_version = serializers.CharField(source="agent.version")
    url = serializers.CharField(source="get_absolute_url")
    provenance = serializers.ChoiceField(
        provenance.SLUGS,
        source="source",
        help_text="reproduced (run by the site), graded (uploaded submissions graded here), "
        "reported (imported), reference (synthetic demo); `source` is its older name",
    )
    comparability = serializers.SerializerMethodField()
    disclosure = serializers.SerializerMethodField()

    class Meta:
        model = Experiment
        fields = [
            "id",
            "name",
            "url",
            "scaffold",
            "model",
            "agent_version",
            "provenance",
            "source",
            "comparability",
            "disclosure",
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

    @extend_schema_field(ComparabilityOutput)
    def get_comparability(self, obj) -> dict:
        return obj.comparability or disclosure.comparability(obj.disclosed()).as_dict()

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_disclosure(self, obj) -> dict:
        return obj.disclosed()


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


def _disclosure_input() -> type[serializers.Serializer]:
    """The disclosure's fields as the schema documents them (``benchmark.disclosure``
    reads them; this says their types and bounds)."""
    numbers = {
        "gpus": serializers.IntegerField(min_value=0, max_value=64),
        "vcpus": serializers.IntegerField(min_value=1, max_value=4096),
        "seeds": serializers.IntegerField(min_value=1, max_value=1000),
        "ram_gib": serializers.FloatField(min_value=0, max_value=65536),
        "hours": serializers.FloatField(min_value=0, max_value=1000),
        "internet": serializers.BooleanField(),
        "test_labels": serializers.BooleanField(),
        "models": serializers.ListField(
            child=serializers.CharField(max_length=100), max_length=disclosure.MAX_MODELS
        ),
    }
    declared = {}
    for f in disclosure.FIELDS:
        field = numbers.get(f.name) or serializers.CharField(max_length=500, allow_blank=True)
        field.required, field.allow_null, field.help_text = False, True, f.help
        declared[f.name] = field
    return type("DisclosureInput", (serializers.Serializer,), declared)


DisclosureInput = _disclosure_input()


class ExperimentDisclosureApi(APIView):
    """``PATCH``: state the conditions the experiment ran under (any of
    ``benchmark.disclosure.FIELDS``; null clears one). Its owner, or whoever may publish it.
    Answers the experiment, with its comparability class."""

    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]
    error_statuses = (403, 404)

    @extend_schema(request=DisclosureInput, responses=ExperimentOutput)
    def patch(self, request, pk: int):
        experiment = selectors.experiment_visible_to(request.user, pk)
        if not may(request.user, "disclose", experiment):
            return Response({"error": "only its owner or a publisher may say this"}, 403)
        data = request.data
        if not isinstance(data, dict):
            return Response({"error": "send an object of field: value"}, 400)
        cleared = [name for name, value in data.items() if value is None]
        try:
            values = disclosure.parse(data)
        except disclosure.DisclosureError as error:
            return Response({"error": str(error), "errors": error.errors}, 400)
        values.update({name: _EMPTY.get(name) for name in cleared})
        experiment = disclosure_update(experiment, values)
        return Response(ExperimentOutput(experiment).data)


# What a cleared field is stored as (a text column keeps "", the rest None).
_EMPTY = {"gpu_model": "", "leakage_url": "", "selection": "", "source_url": ""}


class PublishInput(serializers.Serializer):
    publish = serializers.BooleanField(
        default=True, help_text="true publishes (the default), false withdraws"
    )


class ExperimentPublishApi(APIView):
    """``POST``: put the experiment on the public leaderboard (``{"publish": false}``
    withdraws it). Refused with 400 and ``missing`` (the disclosure's fields it lacks)
    while its conditions are not all stated."""

    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]
    error_statuses = (403, 404)

    @extend_schema(request=PublishInput, responses=ExperimentOutput)
    def post(self, request, pk: int):
        experiment = selectors.experiment_visible_to(request.user, pk)
        if not may(request.user, "publish", experiment):
            return Response({"error": "publishing needs the permission to publish"}, 403)
        body = PublishInput(data=request.data)
        if not isinstance(request.data, dict) or not body.is_valid():
            return Response({"error": '"publish" must be true or false'}, 400)
        wanted = body.validated_data["publish"]
        try:
            if wanted:
                experiment_publish(experiment)
            else:
                experiment_withdraw(experiment)
        except PublishRefused as refused:
            return Response(
                {
                    "error": str(refused),
                    "missing": refused.missing,
                    "missing_labels": disclosure.labels(refused.missing),
                },
                400,
            )
        experiment.refresh_from_db()
        return Response(ExperimentOutput(experiment).data)


INTEGRITY_CHOICES = list(INTEGRITY_FILTERS)
# Today's words and the older ones (``verified``).
PROVENANCE_CHOICES = [*provenance.SLUGS, *provenance.ALIASES]


class LeaderboardQuery(serializers.Serializer):
    """The leaderboard's filters as query parameters; a value outside them is a 400 (the
    page, for people, ignores it)."""

    scaffold = serializers.CharField(required=False, allow_blank=True)
    model = serializers.CharField(required=False, allow_blank=True)
    provenance = serializers.ChoiceField(
        PROVENANCE_CHOICES,
        required=False,
        help_text="reproduced, graded, reported or reference (verified = graded)",
    )
    source = serializers.ChoiceField(
        PROVENANCE_CHOICES,
        required=False,
        help_text="the older name of `provenance`",
    )
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
        fields["class"] = serializers.ChoiceField(
            disclosure.CLASSES, required=False, help_text="entries by comparability class"
        )
        return fields


class LeaderboardOutput(serializers.Serializer):
    clean_subset = serializers.BooleanField()
    entries = serializers.ListField(child=serializers.DictField())


class LeaderboardApi(APIView):
    """The public leaderboard: the same entries as ``/`` (and its JSON export), with the
    same filters as query parameters (scaffold, model, source, since, until,
    internet_access/test_feedback/source_available/known_leakage = yes|no, clean=1,
    integrity=checked|clean|flagged|disqualified|unchecked, descriptions=original|obfuscated),
    and ``split``, the split ranked on. Each ranked entry has ``rank_low`` and ``rank_high``
    (the 95% range of its rank over the bootstrap's resamples), ``tied`` (its range
    overlaps another's) and ``interval`` (the 95% interval of its Any Medal % there)."""

    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[
            LeaderboardQuery,
            split_parameter(default="all, else the first split some entry has figures on"),
        ],
        responses=LeaderboardOutput,
    )
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
                "comparability": {
                    str(e.pk): e.comparability or {"class": e.comparability_class} for e in chosen
                },
                # A sentence when the experiments are not in one class; "" when they are.
                "comparability_warning": class_warning(chosen),
            }
        )
