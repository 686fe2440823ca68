"""The lifecycle of work as data, and the only calls that write a status.

A ``Kind`` (each app declares its own in ``<app>/kinds.py`` and registers it with
``declare``) says which states wait for a worker, which are held by one, which are final,
and which moves are legal (``transitions``). Every call here (``claim``, ``finish``,
``fail``, ``release``, ``hand_back``, ``retry_or_fail``, ``restart``) is one conditional
update limited to the states the table allows to reach the target, so a re-delivered
task, a sweeper and a person acting at once cannot take a row along a move the table does
not have, and exactly one of them wins a race. Callers narrow a move with ``where`` (a
``Q``); they never write the status field themselves. The tables: docs/lifecycle.md.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone


@dataclass(frozen=True)
class Kind:
    """One kind of work, declared once."""

    name: str
    model: type[models.Model]
    description: str
    # The states, by what they mean for a worker, and the legal moves between them.
    waiting: tuple[str, ...] = ()
    running: tuple[str, ...] = ()
    final: tuple[str, ...] = ()
    transitions: Mapping[str, frozenset[str]] = _field(default_factory=dict)
    field: str = "status"
    done: str | None = None  # where ``finish`` goes by default
    failed: str | None = None  # where ``fail`` goes
    reason_field: str = "error"  # where ``fail`` writes its reason
    cancellable: tuple[str, ...] = ()
    # Set on every return to waiting, and in addition when a person starts it over.
    reset: Mapping[str, Any] = _field(default_factory=dict)
    restart_reset: Mapping[str, Any] = _field(default_factory=dict)
    # Its task, by its registered name (its queue is the task's route; services send it
    # through ``webapp.work.send``, never importing a tasks module); rows in
    # ``send_scope`` are sent by the sweeper.
    task: str = ""
    send_scope: Q = _field(default_factory=Q)
    # Claims that went silent: taken back (``retry_or_fail``) unless ``on_silent`` (a dotted
    # path to ``fn(pk, cutoff) -> bool``) ends them another way.
    on_silent: str = ""
    silent_scope: Q | Callable[[], Q] = _field(default_factory=Q)
    # Work without a status: an outbox column (a time it became due) the sweeper resends
    # by ``sweep`` (a dotted path to ``fn() -> int``).
    due_field: str = ""
    sweep: str = ""
    # The attempts budget (a setting) and the failure messages, by cause:
    # ``silent`` (its worker stopped answering), ``transient`` (infrastructure errors).
    budget_setting: str = "MLEBOARD_MAX_ATTEMPTS"
    messages: Mapping[str, str] = _field(default_factory=dict)

    @property
    def states(self) -> tuple[str, ...]:
        return (*self.waiting, *self.running, *self.final)

    @property
    def budget(self) -> int:
        return getattr(settings, self.budget_setting)

    @property
    def claims(self) -> bool:
        """Rows of this kind carry the claim columns (``webapp.work.outbox.Dispatched``)."""
        return any(f.name == "claimed_by" for f in self.model._meta.get_fields())

    @property
    def queue(self) -> str:
        """The queue its task is routed to (``CELERY_TASK_ROUTES``, first match)."""
        for pattern, route in settings.CELERY_TASK_ROUTES.items():
            if self.task and fnmatch.fnmatchcase(self.task, pattern):
                return route["queue"]
        return settings.CELERY_TASK_DEFAULT_QUEUE if self.task else ""

    def sources(self, to: str) -> list[str]:
        """The states from which the table allows a move to ``to``."""
        return [s for s, onward in self.transitions.items() if to in onward]

    def is_final(self, state: str) -> bool:
        return state in self.final

    def is_waiting(self, state: str) -> bool:
        return state in self.waiting

    def is_running(self, state: str) -> bool:
        return state in self.running

    def is_cancellable(self, state: str) -> bool:
        return state in self.cancellable

    def label(self, state: str) -> str:
        choices = dict(self.model._meta.get_field(self.field).choices or ())
        return str(choices.get(state, state))


class LifecycleFields:
    """What pages, serializers and templates ask of a row instead of comparing strings."""

    @property
    def work_kind(self) -> Kind:
        return kind_for(type(self))

    @property
    def is_final(self) -> bool:
        kind = self.work_kind
        return kind.is_final(getattr(self, kind.field))

    @property
    def is_cancellable(self) -> bool:
        kind = self.work_kind
        return kind.is_cancellable(getattr(self, kind.field))

    @property
    def status_label(self) -> str:
        kind = self.work_kind
        return kind.label(getattr(self, kind.field))


def dotted(path: str) -> Callable:
    """The function a declaration names by its dotted path (imported when first used)."""
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


_KINDS: dict[str, Kind] = {}


def declare(*declared: Kind) -> None:
    """Register kinds of work (each app its own, from ``AppConfig.ready``); declaring a
    kind again replaces it."""
    for kind in declared:
        _KINDS[kind.name] = kind


def kinds() -> dict[str, Kind]:
    """Every kind of work by name, in the order the apps declared them (the sweeper's)."""
    return dict(_KINDS)


def kind_for(model: type[models.Model] | str) -> Kind:
    """The kind whose rows are ``model``'s (a model class or a kind's name)."""
    if isinstance(model, str):
        return kinds()[model]
    label = model._meta.concrete_model._meta.label
    for kind in kinds().values():
        if kind.model._meta.label == label and kind.field:
            return kind
    raise LookupError(f"{label} is not a declared kind of work")


# ---------------------------------------------------------------- end hooks

_END_HOOKS: dict[str, list[Callable[[list[int], str], None]]] = {}


def on_end(kind_name: str, hook: Callable[[list[int], str], None]) -> None:
    """Call ``hook(pks, state)`` whenever rows of ``kind_name`` reach a final state (apps
    register theirs in ``AppConfig.ready``). Hooks run in the mover's transaction."""
    hooks = _END_HOOKS.setdefault(kind_name, [])
    if hook not in hooks:
        hooks.append(hook)


def _ended(kind: Kind, pks: list[int], state: str) -> None:
    for hook in _END_HOOKS.get(kind.name, ()):
        hook(pks, state)


# ---------------------------------------------------------------- moves


def _move(kind: Kind, query, to: str, /, *, same: bool = False, **fields) -> int:
    """The one writer of a status: ``query``'s rows in a state the table allows (or
    already in ``to``, with ``same``) moved to ``to`` with ``fields``."""
    if to not in kind.states:
        raise ValueError(f"{to!r} is not a state of {kind.name}")
    sources = kind.sources(to)
    if same:
        sources.append(to)
    if not sources:
        raise ValueError(f"nothing in {kind.name} goes to {to!r}")
    if to in kind.waiting:
        fields = {**kind.reset, **fields}
    return query.filter(**{f"{kind.field}__in": sources}).update(**{kind.field: to}, **fields)


def holding(kind: Kind, pk: int, token: str, /):
    """The row, filtered to "still claimed by ``token``": update it (not its status) while
    the work runs."""
    return kind.model.objects.filter(
        pk=pk, claimed_by=token, **{f"{kind.field}__in": list(kind.running)}
    )


def claim(
    kind: Kind, pk: int, token: str, /, *, where: Q | None = None, reclaim_own: bool = False
) -> bool:
    """Move a row from waiting to running for ``token``. True only for the one caller
    that won; the claim spends one attempt. With ``reclaim_own`` a re-delivery of the same
    task (its worker process was killed) takes its row back at once instead of waiting
    for the sweeper."""
    now = timezone.now()
    running = kind.running[0]
    query = kind.model.objects.filter(pk=pk)
    if reclaim_own:
        query = query.filter(
            Q(**{f"{kind.field}__in": kind.sources(running)})
            | Q(**{kind.field: running}, claimed_by=token)
        )
    if where is not None:
        query = query.filter(where)
    fields = {"claimed_by": token, "claimed_at": now, "heartbeat_at": now}
    return _move(kind, query, running, same=reclaim_own, attempts=F("attempts") + 1, **fields) == 1


def _scoped(kind: Kind, pk: int, token: str | None, where: Q | None):
    query = holding(kind, pk, token) if token else kind.model.objects.filter(pk=pk)
    return query.filter(where) if where is not None else query


def finish(
    kind: Kind,
    pk: int,
    to: str | None = None,
    /,
    *,
    token: str | None = None,
    where: Q | None = None,
    **fields,
) -> bool:
    """End a row in the final state ``to`` (the kind's ``done`` by default), while
    ``token`` holds it when given; the end hooks run. True when this call ended it."""
    to = to or kind.done
    if to not in kind.final:
        raise ValueError(f"{to!r} is not a final state of {kind.name}")
    if kind.claims:
        fields.setdefault("claimed_by", "")
    moved = _move(kind, _scoped(kind, pk, token, where), to, **fields)
    if moved:
        _ended(kind, [pk], to)
    return bool(moved)


def fail(
    kind: Kind,
    pk: int,
    reason: str,
    /,
    *,
    token: str | None = None,
    where: Q | None = None,
    **fields,
) -> bool:
    """End a row as failed with ``reason`` (see ``finish``)."""
    return finish(
        kind, pk, kind.failed, token=token, where=where, **{kind.reason_field: reason, **fields}
    )


def release(kind: Kind, pk: int, token: str, /, *, where: Q | None = None, **fields) -> bool:
    """Give a claim back: the row waits again (``Kind.reset``; ``fields`` override)."""
    return bool(_move(kind, _scoped(kind, pk, token, where), kind.waiting[0], **fields))


def hand_back(kind: Kind, tokens: Iterable[str], /) -> int:
    """Work a stopping worker holds under ``tokens`` waits again (``release``: sent again
    by the sweeper), with the attempt its claim spent given back: a stop someone asked for
    is not a failure of the work. Returns how many rows."""
    tokens = [t for t in tokens if t]
    if not kind.claims or not tokens:
        return 0
    query = kind.model.objects.filter(
        claimed_by__in=tokens, attempts__gt=0, **{f"{kind.field}__in": list(kind.running)}
    )
    return _move(kind, query, kind.waiting[0], attempts=F("attempts") - 1)


def attempts_spent(kind: Kind, attempts: int) -> bool:
    """The one rule deciding retry-or-fail: a row that has spent its budget of claims
    fails instead of waiting again."""
    return attempts >= kind.budget


def retry_or_fail(
    kind: Kind,
    pk: int,
    token: str,
    cause: str,
    /,
    *,
    where: Q | None = None,
    release_fields: Mapping[str, Any] | None = None,
    **details,
) -> str:
    """After a claim was lost or hit a transient error: ``"released"`` (the row waits
    again) while attempts are left, ``"failed"`` with the kind's message for ``cause``
    after; ``""`` when the claim was gone already."""
    attempts = kind.model.objects.filter(pk=pk).values_list("attempts", flat=True).first()
    if attempts is None:
        return ""
    if attempts_spent(kind, attempts):
        reason = kind.messages[cause].format(attempts=attempts, **details)
        return "failed" if fail(kind, pk, reason, token=token, where=where) else ""
    released = release(kind, pk, token, where=where, **(release_fields or {}))
    return "released" if released else ""


def restart(
    kind: Kind, pks: Iterable[int], to: str | None = None, /, *, where: Q | None = None, **fields
) -> int:
    """A person starts rows over (send again, re-grade, ask again): to ``to`` (the first
    waiting state by default) from any state the table allows, or already there, with the
    outcome cleared (``Kind.restart_reset``). Returns how many moved."""
    to = to or kind.waiting[0]
    query = kind.model.objects.filter(pk__in=list(pks))
    if where is not None:
        query = query.filter(where)
    return _move(kind, query, to, same=True, **{**kind.restart_reset, **fields})


def move(kind: Kind, pk: int, to: str, /, *, where: Q | None = None, **fields) -> bool:
    """Any legal move of one row (for kinds whose states are not about a worker: a review
    outcome, a resumable upload's progress). A row may stay where it is only where the
    table has that loop."""
    query = kind.model.objects.filter(pk=pk)
    if where is not None:
        query = query.filter(where)
    moved = _move(kind, query, to, **fields)
    if moved and to in kind.final:
        _ended(kind, [pk], to)
    return bool(moved)
