"""What a person sends with an upload, checked once for the page and the API: the
experiment's metadata (agent, model, conditions, seeds per run group)."""

import datetime as dt

from rest_framework import serializers

from benchmark import disclosure
from webapp.core.bad_input import IsoDateField, parse_json


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
    obfuscated_descriptions = serializers.BooleanField(
        required=False,
        default=False,
        help_text="The runs used MLE-bench's obfuscated descriptions (description_obfuscated.md).",
    )
    knowledge_cutoff = IsoDateField(
        required=False, allow_null=True, help_text="The model's knowledge cutoff (YYYY-MM-DD)."
    )
    seeds = serializers.DictField(child=serializers.IntegerField(min_value=0), required=False)
    usage = serializers.JSONField(
        required=False,
        help_text="Tokens of the whole experiment, when its runs declare none of their own: "
        '{"prompt_tokens": N, "completion_tokens": N}. Per run, put "usage" in the run\'s '
        "entry of its run group's metadata.json.",
    )

    disclosure = serializers.JSONField(
        required=False,
        help_text="The conditions the runs had (benchmark.disclosure.FIELDS): "
        '{"gpus": 1, "gpu_model": "A10 24GB", "vcpus": 36, "ram_gib": 440, "hours": 24, '
        '"models": ["gpt-4o"], "internet": false, "test_labels": false, "seeds": 3, '
        '"selection": "pass@1", "source_url": "https://..."}. Any may be left out.',
    )

    def validate_disclosure(self, value):
        try:
            return disclosure.parse(value)
        except disclosure.DisclosureError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def validate_usage(self, usage):
        from benchmark.cost import parse_usage_declaration

        try:
            return parse_usage_declaration(usage, "usage")
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def validate_seeds(self, seeds: dict) -> dict:
        # Keys are run-group names, stored as text: the checks of a text field apply.
        text = serializers.CharField(max_length=200, allow_blank=True)
        for key in seeds:
            try:
                text.run_validation(key)
            except serializers.ValidationError as exc:
                raise serializers.ValidationError(
                    f"run-group name {key!r}: {' '.join(exc.detail)}"
                ) from None
        return seeds


def upload_metadata(raw) -> dict:
    """Parse and validate the ``metadata`` field; raises ValueError with a readable reason."""
    if raw in (None, ""):
        raise ValueError(
            'the "metadata" field is required: JSON with at least "scaffold" and "model"'
        )
    if isinstance(raw, str):
        try:
            raw = parse_json(raw)
        except ValueError as exc:
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
    # Kept as JSON with the upload: a date as its ISO text.
    return {
        k: v.isoformat() if isinstance(v, dt.date) else v
        for k, v in serializer.validated_data.items()
        if v is not None
    }
