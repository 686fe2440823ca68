"""Why a run was flagged: stored as facts, told to each viewer as they may read it.

A check stores what it found (``RunCheck.reasons``) as facts, never as sentences: the
similarity to a reference file (its path), to another owner's run (its id), a rule
detector's count, an LLM answer. The text is made here, per viewer, from
``webapp.core.visibility``: the other run is named (its experiment, its owner, a link) only to
whom may see it, and reference code (its file names, sources, code) only to whom may see
reference corpora; anyone else reads what they may ("similar to a run you cannot see")."""

from __future__ import annotations

from django.urls import reverse

from benchmark.integrity.detectors import check_label
from webapp.core.visibility import Perm, can_see, has_perm
from webapp.results.models import Run

# The kinds of fact a check stores in ``RunCheck.reasons``.
REFERENCE, PEER, RULE, LLM = "reference", "peer", "rule", "llm"


def reference_fact(similarity: float, threshold: float, path: str) -> dict:
    return {"kind": REFERENCE, "similarity": similarity, "threshold": threshold, "path": path}


def peer_fact(similarity: float, threshold: float, run_id: int) -> dict:
    return {"kind": PEER, "similarity": similarity, "threshold": threshold, "run": run_id}


def rule_fact(check: str, findings: int) -> dict:
    return {"kind": RULE, "check": check, "findings": findings}


def llm_fact(question: str) -> dict:
    return {"kind": LLM, "question": question}


def sees_references(user) -> bool:
    return has_perm(user, Perm.SEE_REFERENCES)


class Viewer:
    """What one person may read of checks: the other runs they may see (asked once per
    run) and whether reference code is theirs to read."""

    def __init__(self, user):
        self.user = user
        self.references = sees_references(user)
        # Every run: figures about the competition's runs as a whole (how many owners
        # have runs on it, what their shared code was) are theirs to read.
        self.all_runs = has_perm(user, Perm.SEE_ALL_EXPERIMENTS)
        self.everything = self.references and self.all_runs
        self._runs: dict[int, Run | None] = {}

    def run(self, run_id: int | None) -> Run | None:
        """The run ``run_id`` when this viewer may see it (with its experiment and
        owner), else None: deleted and invisible runs are alike to them."""
        if run_id is None:
            return None
        if run_id not in self._runs:
            run = (
                Run.objects.filter(pk=run_id)
                .select_related("experiment__owner", "competition")
                .first()
            )
            self._runs[run_id] = run if can_see(self.user, run) else None
        return self._runs[run_id]


def _percent(value) -> str:
    return f"{float(value):.0%}"


def run_label(run: Run) -> str:
    """A run named for whom may see it: its id, experiment and owner."""
    owner = f" by {run.experiment.owner.username}" if run.experiment.owner_id else ""
    return f"run {run.pk} of {run.experiment.name}{owner}"


def reason_text(fact, viewer: Viewer) -> str:
    """One fact as ``viewer`` may read it."""
    if not isinstance(fact, dict):
        # A sentence stored by an earlier version (the migration converts them): it may
        # name others' work, so only whom may see everything reads it.
        return str(fact) if viewer.everything else "a reason recorded by an earlier check"
    kind = fact.get("kind")
    if kind == REFERENCE:
        where = f"reference {fact['path']}" if viewer.references else "the reference code"
        return (
            f"{_percent(fact['similarity'])} similar to {where} "
            f"(threshold {_percent(fact['threshold'])})"
        )
    if kind == PEER:
        other = viewer.run(fact.get("run"))
        if other is not None:
            named = f"another owner's {run_label(other)}"
        elif viewer.all_runs:  # sees every run: this one is gone
            named = "another owner's run, since deleted"
        else:
            named = "a run you cannot see, another owner's"
        return f"{_percent(fact['similarity'])} similar to {named} (threshold {_percent(fact['threshold'])})"
    if kind == RULE:
        count = int(fact["findings"])
        return f"{check_label(fact['check'])}: {count} finding{'s' if count != 1 else ''}"
    if kind == LLM:
        return f"LLM review says yes to {fact['question'].replace('_', ' ')}"
    return "a reason"


def reasons_for(check, viewer: Viewer) -> list[str]:
    """The reasons ``check`` was flagged, as ``viewer`` may read them."""
    if check is None:
        return []
    return [reason_text(fact, viewer) for fact in check.reasons or []]


def peer_for(check, viewer: Viewer) -> dict | None:
    """The closest other owner's run as ``viewer`` may know it: always the similarity and
    the checked run's own file; the other run (its id, experiment, owner, file, a link)
    only when they may see it. None when no peer was compared."""
    if check is None or check.peer_similarity is None:
        return None
    other = viewer.run(check.peer_run_id)
    shown = {
        "similarity": check.peer_similarity,
        "file": check.peer_file,
        "visible": other is not None,
    }
    if other is not None:
        shown.update(
            run=other.pk,
            label=run_label(other),
            experiment=other.experiment.name,
            owner=other.experiment.owner.username if other.experiment.owner_id else "",
            other_file=check.peer_run_file,
            url=reverse("run-page-result", args=[other.pk]),
        )
    return shown
