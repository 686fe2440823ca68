"""Launching agent runs: a launch over competitions × seeds, its experiment and its runs,
sent to the run hosts."""

import datetime as dt
import logging
import math
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from benchmark.catalogue import competitions_in_split
from benchmark.disclosure import PASS_AT_1
from runner.agent_definition import AgentConfigError
from runner.spec import parse_size
from webapp.competitions.models import Competition
from webapp.results.models import Experiment
from webapp.results.services import agent_get_or_create
from webapp.runs.models import AgentRun, Launch
from webapp.runs.services.catalogue import (
    LaunchRefused,
    agent_unusable_reason,
    find_site_agent,
    site_backend,
)
from webapp.work import send_on_commit

log = logging.getLogger(__name__)


def launch_create(
    *,
    owner,
    agent_name: str,
    competitions: list[str] | None = None,
    split: str = "",
    seeds: int = 1,
    cpus: float | None = None,
    memory_bytes: int | None = None,
    shm_bytes: int | None = None,
    gpus: int = 0,
    time_limit_s: float | None = None,
    snapshot_interval_s: float | None = None,
    backend: str | None = None,
    obfuscated_descriptions: bool = False,
    knowledge_cutoff: dt.date | None = None,
) -> Launch:
    """Create a launch, its reproduced experiment and one queued AgentRun per
    (competition, seed); the runs are dispatched on the ``runs`` queue after commit.
    Raises LaunchRefused with a message a person can act on."""
    try:
        agent = find_site_agent(agent_name)
    except AgentConfigError as exc:
        raise LaunchRefused(str(exc)) from None
    # Refused here, not ended as a harness error later (which is not a result).
    if unusable := agent_unusable_reason(agent):
        raise LaunchRefused(unusable)
    ids = list(dict.fromkeys(competitions or []))
    if split:
        ids += [c.id for c in competitions_in_split(split) if c.id not in ids]
    if not ids:
        raise LaunchRefused("choose at least one competition or a split")
    known = {c.slug: c for c in Competition.objects.filter(slug__in=ids, retired=False)}
    unknown = [c for c in ids if c not in known]
    if unknown:
        raise LaunchRefused(f"unknown or retired competitions: {', '.join(unknown[:5])}")
    data_dir = Path(settings.MLEBOARD_DATA_DIR)
    unprepared = [c for c in ids if not (data_dir / c / "prepared" / "public").is_dir()]
    if unprepared:
        raise LaunchRefused(
            f"no prepared data for {', '.join(unprepared[:5])} under {data_dir}: prepare it (MLE-bench's "
            "prepared layout) before running agents on it"
        )
    if not 1 <= seeds <= 20:
        raise LaunchRefused("seeds must be between 1 and 20")
    if obfuscated_descriptions:
        lacking = [c for c in ids if not known[c].description_obfuscated.strip()]
        if lacking:
            raise LaunchRefused(
                f"no obfuscated description for {', '.join(lacking[:5])}: import MLE-bench's "
                "description_obfuscated.md (manage.py import_mlebench) or run on the original "
                "descriptions"
            )
    backend = site_backend(asked=backend)
    with transaction.atomic():
        experiment = Experiment.objects.create(
            name=f"{agent.name} run {timezone.now():%Y-%m-%d %H:%M}",
            agent=agent_get_or_create(agent.name, _model_label(agent)),
            source=Experiment.Source.REPRODUCED,
            owner=owner,
            hardware=_hardware(cpus, memory_bytes, gpus),
            runtime_hours=(time_limit_s / 3600) if time_limit_s else None,
            date=timezone.now().date(),
            internet_access=agent.egress,
            test_feedback=False,
            source_available=True,
            obfuscated_descriptions=obfuscated_descriptions,
            knowledge_cutoff=knowledge_cutoff,
            notes=f"Run by mleboard's harness ({backend} backend).",
            **_disclosed(agent, seeds=seeds, cpus=cpus, memory=memory_bytes, gpus=gpus),
        )
        launch = Launch.objects.create(
            owner=owner,
            agent_name=agent.name,
            backend=backend,
            competitions=ids,
            seeds=seeds,
            cpus=cpus,
            memory_bytes=memory_bytes,
            shm_bytes=shm_bytes,
            gpus=gpus,
            time_limit_s=time_limit_s,
            snapshot_interval_s=snapshot_interval_s,
            experiment=experiment,
        )
        runs = AgentRun.objects.bulk_create(
            [
                AgentRun(launch=launch, competition=known[c], seed=s)
                for s in range(seeds)
                for c in ids
            ]
        )

        for run in runs:
            send_on_commit("agent_run", run.pk)
    return launch


def _model_label(agent) -> str:
    """The model an experiment of ``agent`` is shown with: the operator's model for an
    agent using the site's endpoint (``MLEBOARD_LLM_MODEL``), else what the agent says."""
    from config import env
    from runner.agent_definition import LLM_MODEL_ENV

    if agent.llm:
        return env(LLM_MODEL_ENV).strip() or "the operator's model"
    return "via its own endpoint" if agent.egress else "none (no LLM)"


def launch_create_from_input(owner, data: dict) -> Launch:
    """``launch_create`` from the launch form's or ``POST /api/launches/``'s cleaned data,
    sizes written as people write them ("8g")."""
    try:
        memory = parse_size(data["memory"]) if data.get("memory") else None
        shm = parse_size(data["shm"]) if data.get("shm") else None
    except ValueError as exc:
        raise LaunchRefused(str(exc)) from None
    return launch_create(
        owner=owner,
        agent_name=data["agent"],
        competitions=data.get("competitions") or [],
        split=data.get("split") or "",
        seeds=data["seeds"],
        cpus=data.get("cpus"),
        memory_bytes=memory,
        shm_bytes=shm,
        gpus=data.get("gpus") or 0,
        time_limit_s=data.get("time_limit_s"),
        snapshot_interval_s=data.get("snapshot_interval_s"),
        backend=data.get("backend") or None,
        obfuscated_descriptions=bool(data.get("obfuscated_descriptions")),
        knowledge_cutoff=data.get("knowledge_cutoff"),
    )


def _disclosed(agent, *, seeds: int, cpus, memory, gpus: int) -> dict:
    """What the site knows of a launch's conditions, as the experiment's disclosure: the
    limits it set, the model it serves, no test labels (the agent sees only the public
    data), every seed counted. Unlimited CPUs or memory stay undisclosed: the host's own
    may differ from run to run."""
    return {
        "gpus": gpus,
        "vcpus": math.ceil(cpus) if cpus else None,
        "ram_gib": round(memory / 1024**3, 3) if memory else None,
        "models_used": [_model_label(agent)],
        "known_leakage": False,
        "seeds": seeds,
        "selection": PASS_AT_1,
    }


def _hardware(cpus, memory, gpus) -> str:
    parts = []
    if cpus:
        parts.append(f"{cpus:g} vCPU")
    if memory:
        parts.append(f"{memory / 1024**3:.0f} GB RAM")
    parts.append(f"{gpus} GPU" if gpus else "no GPU")
    return ", ".join(parts)
