"""``GET /api/changes/``: the corrections log, paged, as the page shows it."""

from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.corrections import selectors
from webapp.corrections.models import Kind


class SubjectOutput(serializers.Serializer):
    type = serializers.ChoiceField(["experiment", "competition", "catalogue"])
    id = serializers.CharField(allow_null=True, help_text="experiment id or competition slug")
    name = serializers.CharField()
    url = serializers.CharField(allow_null=True)


class ChangeOutput(serializers.Serializer):
    id = serializers.IntegerField()
    time = serializers.DateTimeField()
    kind = serializers.ChoiceField(Kind.values)
    subject = SubjectOutput()
    reason = serializers.CharField()
    who = serializers.CharField(help_text="a role; with the name for those who may see names")
    before = serializers.DictField(
        allow_null=True,
        help_text="the subject experiment's Any Medal % per split before the event "
        "({split: {mean, standard_error}}); null for an event about a competition",
    )
    after = serializers.DictField(
        allow_null=True, help_text="as before, after the event; null while pending"
    )
    pending = serializers.BooleanField(help_text="figures after the event not stored yet")
    figures = serializers.ListField(
        child=serializers.DictField(),
        help_text="each experiment whose figures the event moved and you may see: "
        "{experiment: {id, name, url}, clean, before, after}",
    )


def _figures(item, request) -> dict:
    experiment = item.experiment
    return {
        "experiment": {
            "id": experiment.pk if experiment else None,
            "name": experiment.name if experiment else item.experiment_name,
            "url": request.build_absolute_uri(experiment.get_absolute_url())
            if experiment
            else None,
        },
        "clean": item.clean,
        "before": item.before,
        "after": None if item.pending else item.after,
    }


def change(entry, request) -> dict:
    subject = selectors.subject(entry)
    if subject["url"]:
        subject["url"] = request.build_absolute_uri(subject["url"])
    subject["id"] = None if subject["id"] is None else str(subject["id"])
    figures = [_figures(item, request) for item in entry.visible_figures]
    own = (
        next((f for f in figures if f["experiment"]["id"] == entry.experiment_id), None)
        if entry.experiment_id
        else (figures[0] if entry.subject_type == "experiment" and figures else None)
    )
    return {
        "id": entry.pk,
        "time": entry.created_at,
        "kind": entry.kind,
        "subject": subject,
        "reason": entry.reason,
        "who": selectors.who(entry, request.user),
        "before": own["before"] if own else None,
        "after": own["after"] if own else None,
        "pending": any(f["after"] is None for f in figures),
        "figures": figures,
    }


class ChangesQuery(serializers.Serializer):
    """The query as the schema states it (``selectors.parse_query`` reads it)."""

    page = serializers.IntegerField(
        required=False, min_value=1, max_value=10**9, help_text="from 1; 50 entries a page"
    )
    kind = serializers.ChoiceField(
        Kind.values,
        required=False,
        allow_blank=True,
        help_text="entries of one kind (empty: every kind)",
    )


class ChangesApi(APIView):
    permission_classes = [AllowAny]
    serializer_class = ChangeOutput

    @extend_schema(
        parameters=[ChangesQuery],
        responses={
            200: inline_serializer(
                "ChangesPage",
                {
                    "count": serializers.IntegerField(),
                    "page": serializers.IntegerField(),
                    "pages": serializers.IntegerField(),
                    "next": serializers.CharField(allow_null=True),
                    "previous": serializers.CharField(allow_null=True),
                    "results": ChangeOutput(many=True),
                },
            ),
            400: OpenApiResponse(description="a page or kind the log cannot read"),
            404: OpenApiResponse(description="a page past the last"),
        },
    )
    def get(self, request):
        try:
            query = selectors.parse_query(request.query_params)
            page = selectors.page_of(request.user, query)
        except selectors.BadQuery as exc:
            return Response({"error": str(exc)}, status=400)
        except selectors.PastTheEnd as exc:
            return Response({"error": str(exc)}, status=404)

        def link(number: int) -> str:
            params = {"page": number, **({"kind": query.kind} if query.kind else {})}
            return request.build_absolute_uri("?" + "&".join(f"{k}={v}" for k, v in params.items()))

        return Response(
            {
                "count": page.count,
                "page": page.number,
                "pages": page.pages,
                "next": link(page.number + 1) if page.has_next else None,
                "previous": link(page.number - 1) if page.has_previous else None,
                "results": [change(entry, request) for entry in page.entries],
            }
        )
