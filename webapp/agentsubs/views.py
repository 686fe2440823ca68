"""Submitted-agent pages: the list, the form, an agent's page (files, definition, status,
review, build log, reproductions) and a reproduction's page (its verdict and cost)."""

import yaml
from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from benchmark.splits import SPLIT_SLUGS, split_choices
from webapp.agentsubs import selectors
from webapp.agentsubs.models import AgentSubmission
from webapp.agentsubs.reproductions import may_reproduce, reproduction_start
from webapp.agentsubs.services import (
    APPROVE,
    SUBMIT,
    SubmissionInvalid,
    submission_create,
    submission_review,
)
from webapp.core.bad_input import LengthBoundForm
from webapp.core.refusals import permission_refused
from webapp.core.visibility import can_see, has_perm


class SubmitForm(LengthBoundForm, forms.Form):
    archive = forms.FileField(help_text="A zip or tar(.gz) of the agent's folder.")
    experiment = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=2**63 - 1,
        help_text="The id of the experiment it claims to reproduce (optional).",
    )


class ReviewForm(LengthBoundForm, forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("refuse", "Refuse")])
    reason = forms.CharField(max_length=2000, required=False, widget=forms.Textarea)


class ReproduceForm(LengthBoundForm, forms.Form):
    experiment = forms.IntegerField(min_value=1, max_value=2**63 - 1, required=False)
    split = forms.ChoiceField(choices=split_choices(SPLIT_SLUGS), initial="demo")
    seeds = forms.IntegerField(min_value=1, max_value=20, initial=3)


@login_required
def agent_list(request):
    return render(
        request,
        "agentsubs/list.html",
        {
            "submissions": selectors.submissions_visible_to(request.user)[:200],
            "may_submit": has_perm(request.user, SUBMIT),
        },
    )


@login_required
def agent_new(request):
    if not has_perm(request.user, SUBMIT):
        raise permission_refused(SUBMIT, "submit agents")
    code = 200
    form = SubmitForm(request.POST or None, request.FILES or None)
    if request.method == "POST":
        if form.is_valid():
            try:
                submission = submission_create(
                    owner=request.user,
                    uploaded_file=form.cleaned_data["archive"],
                    claims=form.cleaned_data["experiment"],
                )
            except SubmissionInvalid as exc:
                form.add_error("archive" if exc.field not in form.fields else exc.field, str(exc))
            else:
                return redirect(submission)
        code = 400
    return render(request, "agentsubs/new.html", {"form": form}, status=code)


def agent_detail(request, pk: int, *, review_form=None, reproduce_form=None, status=200):
    submission = selectors.submission_visible_to(request.user, pk)
    claims = (
        submission.claims
        if submission.claims and can_see(request.user, submission.claims)
        else None
    )
    return render(
        request,
        "agentsubs/detail.html",
        {
            "submission": submission,
            "claims": claims,
            "definition_yaml": yaml.safe_dump(submission.definition, sort_keys=False),
            "may_review": has_perm(request.user, APPROVE)
            and submission.status == AgentSubmission.Status.SUBMITTED,
            "review_form": review_form or ReviewForm(),
            "may_reproduce": may_reproduce(request.user, submission)
            and submission.status == AgentSubmission.Status.BUILT,
            "reproduce_form": reproduce_form
            or ReproduceForm(initial={"experiment": submission.claims_id}),
            "reproductions": selectors.reproductions_visible_to(request.user, submission),
        },
        status=status,
    )


@login_required
@require_POST
def agent_review(request, pk: int):
    submission = selectors.submission_visible_to(request.user, pk)
    if not has_perm(request.user, APPROVE):
        raise permission_refused(APPROVE, "approve agents")
    form = ReviewForm(request.POST)
    if form.is_valid():
        try:
            moved = submission_review(
                submission,
                by=request.user,
                approve=form.cleaned_data["decision"] == "approve",
                reason=form.cleaned_data["reason"],
            )
        except SubmissionInvalid as exc:
            form.add_error("reason", str(exc))
        else:
            if not moved:
                messages.warning(request, "It was reviewed already.")
            return redirect(submission)
    return agent_detail(request, pk, review_form=form, status=400)


@login_required
@require_POST
def agent_reproduce(request, pk: int):
    submission = selectors.submission_visible_to(request.user, pk)
    if not may_reproduce(request.user, submission):
        raise permission_refused(APPROVE, "launch reproductions of this agent")
    form = ReproduceForm(request.POST)
    if form.is_valid():
        try:
            reproduction = reproduction_start(
                submission,
                by=request.user,
                target_id=form.cleaned_data["experiment"],
                split=form.cleaned_data["split"],
                seeds=form.cleaned_data["seeds"],
            )
        except SubmissionInvalid as exc:
            field = exc.field if exc.field in form.fields else None
            form.add_error(field, str(exc))
        else:
            return redirect(reproduction)
    return agent_detail(request, pk, reproduce_form=form, status=400)


def reproduction_detail(request, pk: int):
    from django.http import Http404

    reproduction = selectors.reproduction_visible_to(request.user, pk)
    if reproduction is None:
        raise Http404("No such reproduction.")
    submission = reproduction.submission
    return render(
        request,
        "agentsubs/reproduction.html",
        {
            "reproduction": reproduction,
            "experiment": reproduction.launch.experiment,
            "submission_shown": can_see(request.user, submission),
            "experiment_shown": can_see(request.user, reproduction.launch.experiment),
        },
    )
