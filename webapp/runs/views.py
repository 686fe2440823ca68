"""Agent-run pages: launch form, a launch's live status with log tails, cancel; the run
hosts (``runs.manage_runhost``)."""

import os

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from benchmark.splits import SPLIT_SLUGS, split_choices
from runner.spec import MAX_GPUS
from webapp.core.refusals import permission_refused
from webapp.core.visibility import Perm
from webapp.runs import hosts, selectors
from webapp.runs.models import RunHost
from webapp.runs.services.catalogue import LaunchRefused, agent_unusable_reason, site_agents
from webapp.runs.services.ending import agent_run_cancel
from webapp.runs.services.launch import launch_create_from_input
from webapp.work import heartbeat_interval

PAPER_CPUS, PAPER_MEMORY_GIB, PAPER_GPUS = 36, 440, 1


class AgentSelect(forms.Select):
    """The agents, those this site cannot run now disabled with the reason."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.unusable: dict[str, str] = {}
        self.short: dict[str, str] = {}

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        if reason := self.unusable.get(value):
            option["attrs"]["disabled"] = True
            option["attrs"]["title"] = reason
            option["label"] = f"{label} (unavailable: {self.short.get(value, '')})"
        return option


class LaunchForm(forms.Form):
    agent = forms.ChoiceField(choices=(), widget=AgentSelect)
    split = forms.ChoiceField(
        choices=[("", "— none —"), *split_choices(SPLIT_SLUGS)], required=False
    )
    competitions = forms.CharField(
        required=False, help_text="Competition ids, separated by spaces or commas."
    )
    seeds = forms.IntegerField(min_value=1, max_value=20, initial=1)
    # The paper's protocol (24 h, 36 vCPU, 440 GB, one A10-class GPU), capped in
    # __init__ at what this site's worker host can give (MLEBOARD_HOST_*).
    cpus = forms.FloatField(min_value=0.01, required=False, initial=PAPER_CPUS)
    memory = forms.CharField(required=False, initial=f"{PAPER_MEMORY_GIB}g")
    gpus = forms.IntegerField(min_value=0, max_value=MAX_GPUS, initial=PAPER_GPUS)
    time_limit_s = forms.FloatField(
        min_value=1, required=False, initial=24 * 3600, label="Time limit (s)"
    )
    snapshot_interval_s = forms.FloatField(
        min_value=1, required=False, initial=3600, label="Snapshot every (s)"
    )
    knowledge_cutoff = forms.DateField(
        required=False,
        label="Model's knowledge cutoff",
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="YYYY-MM-DD, when known: the experiment then compares competitions that "
        "ended before it with those after.",
    )
    obfuscated_descriptions = forms.BooleanField(
        required=False,
        label="Obfuscated descriptions",
        help_text="The agent reads MLE-bench's obfuscated description (no Kaggle identity) "
        "and instructions that do not name Kaggle, as in the paper's test.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        agents = site_agents()
        unusable = {name: agent_unusable_reason(a) for name, a in agents.items()}
        unusable = {name: why for name, why in unusable.items() if why}
        self.fields["agent"].choices = [(name, name) for name in agents]
        self.fields["agent"].widget.unusable = unusable
        self.fields["agent"].widget.short = {
            name: ("no model endpoint: " if agents[name].llm else "")
            + ", ".join(agents[name].missing(os.environ))
            + " not set"
            for name in unusable
        }
        # The default is an agent this site can run (never one needing a missing endpoint).
        usable = [name for name in agents if name not in unusable]
        self.fields["agent"].initial = usable[0] if usable else None
        if unusable:
            self.fields["agent"].help_text = (
                "Unavailable here: "
                + "; ".join(f"{n}: {why}" for n, why in sorted(unusable.items()))
                + "."
            )
        host = host_resources()
        self.fields["cpus"].initial = min(PAPER_CPUS, host["cpus"])
        self.fields["memory"].initial = f"{min(PAPER_MEMORY_GIB, host['memory_gib'])}g"
        self.fields["gpus"].initial = min(PAPER_GPUS, host["gpus"])
        self.fields["cpus"].help_text = f"The worker host has {host['cpus']:g}."
        self.fields["memory"].help_text = f"The worker host has {host['memory_gib']}g."
        self.fields["gpus"].help_text = f"The worker host has {host['gpus']}."


def host_resources() -> dict:
    """What the largest run host that is up may hand out to one agent run; with no host
    registered yet, this machine's MLEBOARD_HOST_* (the host ``make run`` starts)."""
    up = list(RunHost.objects.filter(state=RunHost.State.UP))
    if up:
        return {
            "cpus": max(h.cpus for h in up),
            "memory_gib": max(1, max(h.memory_bytes for h in up) // 1024**3),
            "gpus": max(len(h.gpu_ids) for h in up),
        }
    return {
        "cpus": settings.MLEBOARD_HOST_CPUS,
        "memory_gib": max(1, settings.MLEBOARD_HOST_MEMORY // 1024**3),
        "gpus": len(settings.MLEBOARD_HOST_GPUS or []),
    }


def host_list(request):
    """The run hosts: up or down, last heartbeat, capacity, free, runs held."""
    if not selectors.can_manage_hosts(request.user):
        return _refused(request, "You do not have the permission to see the run hosts.")
    return render(
        request,
        "runs/hosts.html",
        {
            "hosts": hosts.status(),
            "stale_after_s": settings.MLEBOARD_STALE_AFTER_S,
            "beat_every_s": heartbeat_interval(),
        },
    )


@login_required
def launch_list(request):
    return render(
        request,
        "runs/launch_list.html",
        {
            "launches": selectors.launches_with_progress(request.user),
            "can_launch": selectors.can_launch(request.user),
        },
    )


@login_required
def launch_new(request):
    if not selectors.can_launch(request.user):
        raise permission_refused(Perm.LAUNCH, "Launching agent runs")
    form = LaunchForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        data["competitions"] = [c for c in data["competitions"].replace(",", " ").split() if c]
        try:
            launch = launch_create_from_input(request.user, data)
        except LaunchRefused as exc:
            messages.error(request, f"Not launched: {exc}")
        else:
            return redirect(launch.get_absolute_url())
    # A form sent back with what is wrong answers 400 (the messages say why).
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "runs/launch_new.html",
        {"form": form, "host": host_resources()},
        status=status,
    )


@login_required
def launch_detail(request, pk: int):
    launch = selectors.launches_visible_to(request.user).filter(pk=pk).first()
    if launch is None:
        raise Http404
    cancellable = set(
        selectors.agent_runs_cancellable_by(request.user)
        .filter(launch=launch)
        .values_list("pk", flat=True)
    )
    return render(
        request,
        "runs/launch_detail.html",
        {
            "launch": launch,
            "status": selectors.launch_status(launch),
            "cancellable": cancellable,
        },
    )


def _refused(request, message: str):
    """Signed in without the permission: 403 saying so; anonymous: to the login page."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    raise PermissionDenied(message)


@login_required
@require_POST
def agent_run_cancel_view(request, pk: int):
    run = selectors.agent_runs_visible_to(request.user).filter(pk=pk).first()
    if run is None:
        raise Http404
    if not selectors.agent_runs_cancellable_by(request.user).filter(pk=pk).exists():
        raise PermissionDenied("Only the run's owner and operators may cancel it.")
    agent_run_cancel(run)
    messages.info(request, f"Cancel requested for {run}.")
    return redirect(run.launch.get_absolute_url())
