"""An experiment's disclosure as people send it (the upload form, the API, ``mleboard
submit``, the archive's ``disclosure.yaml``) and what publishing asks of it. The fields and
the comparability class are ``benchmark.disclosure``'s; the columns they are kept in are
``Experiment``'s (``DISCLOSURE_ATTRIBUTES``)."""

from __future__ import annotations

from django import forms
from django.db import transaction

from benchmark import disclosure
from webapp.results.models import DISCLOSURE_ATTRIBUTES, Experiment

# The upload metadata's older top-level names for three of the fields.
_LEGACY = {"runtime_hours": "hours", "internet_access": "internet", "source_url": "source_url"}


class PublishRefused(ValueError):
    """Publishing needs a full disclosure; ``missing`` names what it lacks (field names)."""

    def __init__(self, missing: list[str]):
        self.missing = missing
        super().__init__(
            "publishing needs the experiment's conditions; missing: "
            + ", ".join(disclosure.labels(missing))
        )


def attributes(values: dict) -> dict:
    """Disclosure values (already parsed) as ``Experiment`` column values."""
    out = {DISCLOSURE_ATTRIBUTES[name]: value for name, value in values.items()}
    if values.get("source_url"):
        out["source_available"] = True
    return out


def upload_disclosure(metadata: dict, archived: dict, *, seeds_seen: int | None) -> dict:
    """What an upload discloses: the archive's file, then the older top-level metadata
    fields, then the metadata's ``disclosure`` (the last said wins, field by field). The
    number of seeds, when not disclosed, is the one the upload holds: a fact, not a guess."""
    values = dict(archived)
    values.update({new: metadata[old] for old, new in _LEGACY.items() if metadata.get(old)})
    values.update(metadata.get("disclosure") or {})
    if "seeds" not in values and seeds_seen:
        values["seeds"] = seeds_seen
    return values


def missing(experiment: Experiment) -> list[str]:
    """What publishing ``experiment`` still needs, by field name; [] for a synthetic
    reference (not an agent) and for an entry of the published leaderboard, whose
    conditions are what its README says."""
    if experiment.source == Experiment.Source.REFERENCE:
        return []
    return disclosure.missing(experiment.disclosed())


@transaction.atomic
def disclosure_update(experiment: Experiment, values: dict) -> Experiment:
    """Set the disclosed fields in ``values`` (parsed by ``benchmark.disclosure.parse``);
    the class follows on save."""
    experiment = Experiment.objects.select_for_update().get(pk=experiment.pk)
    experiment.disclose(values)
    experiment.save()
    return experiment


@transaction.atomic
def experiment_publish(experiment: Experiment) -> bool:
    """Put ``experiment`` on the public leaderboard; raises ``PublishRefused`` listing what
    its disclosure lacks. False when it already was."""
    experiment = Experiment.objects.select_for_update().get(pk=experiment.pk)
    if experiment.is_published:
        return False
    if lacking := missing(experiment):
        raise PublishRefused(lacking)
    experiment.is_published = True
    experiment.save(update_fields=["is_published"])
    return True


@transaction.atomic
def experiment_withdraw(experiment: Experiment) -> bool:
    """Take ``experiment`` off the public leaderboard; False when it was not on it."""
    experiment = Experiment.objects.select_for_update().get(pk=experiment.pk)
    if not experiment.is_published:
        return False
    experiment.is_published = False
    experiment.save(update_fields=["is_published"])
    return True


def _shown(name: str, value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def described(experiment: Experiment) -> list[dict]:
    """The disclosure as the experiment page lists it: each field's label and value as
    text, "not disclosed" where it is missing."""
    values = experiment.disclosed()
    return [
        {
            "name": f.name,
            "label": f.label,
            "value": _shown(f.name, values[f.name]) if f.name in values else "",
            "url": values.get(f.name, "") if f.name in ("source_url", "leakage_url") else "",
        }
        for f in disclosure.FIELDS
    ]


_WIDGETS = {
    "gpus": forms.NumberInput(attrs={"min": 0, "max": 64}),
    "vcpus": forms.NumberInput(attrs={"min": 1}),
    "ram_gib": forms.NumberInput(attrs={"min": 0, "step": "any"}),
    "hours": forms.NumberInput(attrs={"min": 0, "step": "any"}),
    "seeds": forms.NumberInput(attrs={"min": 1}),
    "source_url": forms.URLInput(),
    "leakage_url": forms.URLInput(),
}
_FLAGS = ("internet", "test_labels")
_FLAG_CHOICES = [("", "not stated"), ("yes", "yes"), ("no", "no")]
_PLACEHOLDERS = {
    "gpu_model": "A10 24GB",
    "models": "gpt-4o, o3-mini",
    "selection": "pass@1",
    "source_url": "https://github.com/…",
}


class DisclosureForm(forms.Form):
    """The disclosure's fields as a form (the upload page's and the experiment page's),
    every value read by ``benchmark.disclosure.parse``: one set of rules and messages."""

    prefix = "disclosure"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for f in disclosure.FIELDS:
            if f.name in _FLAGS:
                field = forms.ChoiceField(choices=_FLAG_CHOICES, required=False)
            else:
                widget = _WIDGETS.get(f.name, forms.TextInput())
                if f.name in _PLACEHOLDERS:
                    widget.attrs["placeholder"] = _PLACEHOLDERS[f.name]
                field = forms.CharField(required=False, widget=widget, strip=True)
            field.label = f.label
            field.help_text = f.help
            self.fields[f.name] = field

    @classmethod
    def initial_for(cls, experiment: Experiment) -> dict:
        out = {}
        for name, value in experiment.disclosed().items():
            if isinstance(value, bool):
                out[name] = "yes" if value else "no"
            elif isinstance(value, list):
                out[name] = ", ".join(value)
            elif isinstance(value, float):
                out[name] = f"{value:g}"
            else:
                out[name] = value
        return out

    def clean(self):
        raw = {k: v for k, v in self.cleaned_data.items() if v not in (None, "")}
        try:
            self.cleaned_data["values"] = disclosure.parse(raw)
        except disclosure.DisclosureError as error:
            for name, why in error.errors.items():
                self.add_error(name if name in self.fields else None, f"{why}.")
        return self.cleaned_data

    @property
    def values(self) -> dict:
        return self.cleaned_data.get("values", {})
