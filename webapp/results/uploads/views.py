"""Upload pages for signed-in users: the form, the list of one's uploads, and an upload's
live progress (polled from the API, no manual reload)."""

import math

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from rest_framework.throttling import ScopedRateThrottle

from webapp.core.bad_input import parse_json
from webapp.results import selectors
from webapp.results.disclosure import DisclosureForm
from webapp.results.pages.leaderboard import filter_choices
from webapp.results.uploads import progress, resumable
from webapp.results.uploads.api import UploadCreateApi
from webapp.results.uploads.input import upload_metadata
from webapp.results.uploads.services import upload_create

TRI_STATE = [("", "not stated"), ("true", "yes"), ("false", "no")]


class UploadForm(forms.Form):
    archive = forms.FileField(
        help_text="A zip or tar of MLE-bench run-group folders, a submissions.jsonl with its CSVs, "
        "or MLE-bench grading-report JSON files."
    )
    # Free text, with the names already in use offered (a <datalist>), so that one agent
    # does not get two spellings ("none" and "none (no LLM)").
    scaffold = forms.CharField(
        max_length=100,
        widget=forms.TextInput(attrs={"list": "scaffold-choices", "autocomplete": "off"}),
        help_text="Pick an existing name when it is the same scaffold.",
    )
    model = forms.CharField(
        max_length=100,
        widget=forms.TextInput(attrs={"list": "model-choices", "autocomplete": "off"}),
        help_text="The LLM behind the agent; pick an existing name when it is the same one.",
    )
    agent_version = forms.CharField(max_length=60, required=False)
    name = forms.CharField(max_length=200, required=False, help_text="A name for the experiment.")
    hardware = forms.CharField(max_length=200, required=False)
    test_feedback = forms.ChoiceField(
        choices=TRI_STATE, required=False, label="Used test-set feedback"
    )
    obfuscated_descriptions = forms.BooleanField(
        required=False,
        label="Obfuscated descriptions",
        help_text="The agent read MLE-bench's obfuscated descriptions (no Kaggle identity).",
    )
    knowledge_cutoff = forms.DateField(
        required=False,
        label="Model's knowledge cutoff",
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="YYYY-MM-DD, when known: the experiment then compares competitions that "
        "ended before it with those after.",
    )
    seeds = forms.CharField(
        required=False,
        help_text='Optional JSON: the seed of each run group, e.g. {"2024-10-01_run-group_aide": 0}',
    )

    def metadata(self, disclosed: dict) -> dict:
        """The upload's metadata, with ``disclosed`` (a ``DisclosureForm``'s values)."""
        data = self.cleaned_data
        raw = {
            k: data[k]
            for k in ("scaffold", "model", "agent_version", "name", "hardware")
            if data.get(k)
        }
        if disclosed:
            raw["disclosure"] = disclosed
        if data.get("obfuscated_descriptions"):
            raw["obfuscated_descriptions"] = True
        if data.get("knowledge_cutoff"):
            raw["knowledge_cutoff"] = data["knowledge_cutoff"].isoformat()
        for key in ("test_feedback",):
            if data.get(key):
                raw[key] = data[key] == "true"
        if data.get("seeds") is not None:
            raw["seeds"] = data["seeds"]
        return upload_metadata(raw)

    def clean_seeds(self):
        """The seeds as JSON, or None; a mistake is said beside the field."""
        text = self.cleaned_data.get("seeds")
        if not text:
            return None
        try:
            return parse_json(text)
        except ValueError as exc:
            raise forms.ValidationError(f"seeds is not valid JSON: {exc}") from None


@login_required
def upload_new(request):
    throttle = ScopedRateThrottle()  # the upload API's per-user budget, shared with it
    if request.method == "POST" and not throttle.allow_request(request, UploadCreateApi):
        minutes = max(1, math.ceil((throttle.wait() or 0) / 60))
        messages.error(
            request,
            f"Too many uploads: at most {throttle.rate}. Try again in {minutes} minute(s).",
        )
        form = UploadForm(initial=request.POST.dict())
        return render(
            request,
            "results/upload_new.html",
            {
                "form": form,
                "disclosure_form": DisclosureForm(initial=request.POST.dict()),
                **filter_choices(request.user),
            },
            status=429,
        )
    form = UploadForm(request.POST or None, request.FILES or None)
    disclosure_form = DisclosureForm(request.POST or None)
    if request.method == "POST" and form.is_valid() and disclosure_form.is_valid():
        try:
            created = upload_create(
                owner=request.user,
                uploaded_file=form.cleaned_data["archive"],
                metadata=form.metadata(disclosure_form.values),
            )
        except ValueError as exc:  # UploadRefused included
            upload = getattr(exc, "upload", None)
            messages.error(request, f"Upload refused: {exc}")
            if upload is not None:
                return redirect(upload.get_absolute_url())
        else:
            if created.refused:
                messages.error(request, created.note)
            elif created.metadata_ignored:
                messages.warning(request, created.note)
            elif created.duplicate:
                messages.info(request, created.note)
            return redirect(created.upload.get_absolute_url())
    # A form sent back with what is wrong answers 400 (the messages say why).
    status = 400 if request.method == "POST" else 200
    chosen = request.FILES.get("archive")
    if chosen is not None:
        # A browser never keeps a chosen file when the form comes back: ask again, by name.
        # (the bound field keeps its own copy of the help text, made when it was first used)
        form["archive"].help_text = (
            f"You chose “{chosen.name}”: choose it again (a browser does not keep a file "
            "when the form comes back)."
        )
    return render(
        request,
        "results/upload_new.html",
        {
            "form": form,
            "disclosure_form": disclosure_form,
            "chunk_bytes": resumable.BROWSER_CHUNK_BYTES,
            **filter_choices(request.user),
        },
        status=status,
    )


@login_required
def upload_list(request):
    uploads = selectors.uploads_visible_to(request.user).filter(owner=request.user)
    uploads = uploads.select_related("experiment")
    return render(request, "results/upload_list.html", {"uploads": uploads})


@login_required
def upload_detail(request, pk: int):
    upload = get_object_or_404(selectors.uploads_visible_to(request.user), pk=pk)
    return render(
        request,
        "results/upload_detail.html",
        {"upload": upload, "progress": progress.upload_progress(upload)},
    )
