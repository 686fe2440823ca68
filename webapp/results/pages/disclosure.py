"""The experiment's conditions on its own pages: the form that states them, and publishing,
refused with the same list of what is missing as the API's."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from benchmark import disclosure as fields
from webapp.core.visibility import may
from webapp.results import selectors
from webapp.results.disclosure import (
    DisclosureForm,
    PublishRefused,
    described,
    disclosure_update,
    experiment_publish,
    experiment_withdraw,
    missing,
)


def conditions_section(user, experiment) -> dict:
    """What the experiment page shows of its conditions: the class and its reasons, each
    field, and (to whom may act) what publishing still needs."""
    found = experiment.comparability or fields.comparability(experiment.disclosed()).as_dict()
    lacking = missing(experiment) if not experiment.is_published else []
    return {
        "comparability": found,
        "class_label": fields.CLASS_LABELS[found["class"]],
        "disclosed": described(experiment),
        "missing_labels": fields.labels(lacking),
        "may_disclose": may(user, "disclose", experiment),
        "may_publish": may(user, "publish", experiment),
    }


@login_required
def experiment_disclosure(request, pk: int):
    experiment = selectors.experiment_visible_to(request.user, pk)
    if not may(request.user, "disclose", experiment):
        raise PermissionDenied("only its owner or a publisher may state its conditions")
    form = DisclosureForm(request.POST or None, initial=DisclosureForm.initial_for(experiment))
    if request.method == "POST" and form.is_valid():
        # Every field of the form is sent: one left empty is cleared.
        values = {name: None for name in fields.BY_NAME}
        values.update(form.values)
        for name in ("gpu_model", "leakage_url", "selection", "source_url"):
            values[name] = values[name] or ""
        disclosure_update(experiment, values)
        messages.success(request, "Conditions saved.")
        return redirect(experiment.get_absolute_url() + "#conditions")
    return render(
        request,
        "results/experiment_disclosure.html",
        {"experiment": experiment, "form": form},
        status=400 if request.method == "POST" else 200,
    )


class PublishForm(forms.Form):
    publish = forms.ChoiceField(choices=[("1", "publish"), ("0", "withdraw")])


@login_required
@require_POST
def experiment_publish_page(request, pk: int):
    experiment = selectors.experiment_visible_to(request.user, pk)
    if not may(request.user, "publish", experiment):
        raise PermissionDenied("publishing needs the permission to publish")
    form = PublishForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing was done: the form was not the page's.")
        return redirect(experiment.get_absolute_url() + "#conditions")
    try:
        if form.cleaned_data["publish"] == "1":
            experiment_publish(experiment)
            messages.success(request, "Published on the public leaderboard.")
        else:
            experiment_withdraw(experiment)
            messages.success(request, "Withdrawn from the public leaderboard.")
    except PublishRefused as refused:
        messages.error(request, f"Not published: {refused}.")
    return redirect(experiment.get_absolute_url() + "#conditions")
