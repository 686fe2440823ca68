"""Reads of the corrections log as a person may see it (``webapp.core.visibility``): the
entries, and in each the experiments' figures, both by the one rule, so no count, name or
figure of an experiment they may not see reaches them."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from benchmark.splits import in_display_order, split_label
from webapp.core.bad_input import whole_number
from webapp.core.formatting import format_percent
from webapp.core.visibility import may_see_names, visible_to
from webapp.corrections.models import Correction, CorrectionFigures, Kind, Subject

PAGE_SIZE = 50


class BadQuery(ValueError):
    """A ``?page`` or ``?kind`` the log cannot read (a 400): its message says what would do."""


class PastTheEnd(LookupError):
    """A page past the last (a 404, as a page that does not exist): its message says which
    is the last."""


@dataclass(frozen=True)
class Query:
    page: int
    kind: str


def parse_query(query) -> Query:
    """``?page=`` (a whole number from 1) and ``?kind=`` (one of ``Kind``, or nothing)."""
    raw_page = query.get("page", "")
    page = 1
    if raw_page.strip():
        page = whole_number(raw_page)
        if page is None or page < 1:
            raise BadQuery(f"page must be a whole number from 1 (got {raw_page[:40]!r})")
    kind = query.get("kind", "").strip()
    if kind and kind not in Kind.values:
        raise BadQuery(
            f"kind must be one of {', '.join(Kind.values)} (got {kind[:40]!r}), or left out "
            "for every kind"
        )
    return Query(page, kind)


def corrections_visible_to(user, kind: str = "") -> QuerySet:
    """The entries ``user`` may see, newest first, each with the experiments' figures they
    may see (``visible_figures``)."""
    entries = visible_to(user, Correction.objects.all())
    if kind:
        entries = entries.filter(kind=kind)
    figures = (
        visible_to(user, CorrectionFigures.objects.all())
        .select_related("experiment")
        .order_by("experiment_name", "id")
    )
    return entries.select_related("experiment", "competition", "by").prefetch_related(
        Prefetch("figures", queryset=figures, to_attr="visible_figures")
    )


@dataclass
class Page:
    entries: list
    number: int
    pages: int
    count: int

    @property
    def has_next(self) -> bool:
        return self.number < self.pages

    @property
    def has_previous(self) -> bool:
        return self.number > 1


def page_of(user, query: Query) -> Page:
    """One page of the log; a page past the last is ``PastTheEnd`` (page 1 of an empty
    log is an empty page)."""
    entries = corrections_visible_to(user, query.kind)
    count = entries.count()
    pages = max(1, -(-count // PAGE_SIZE))
    if query.page > pages:
        raise PastTheEnd(f"page {query.page} is past the last page ({pages})")
    start = (query.page - 1) * PAGE_SIZE
    return Page(list(entries[start : start + PAGE_SIZE]), query.page, pages, count)


# ---------------------------------------------------------------- as shown


def who(entry: Correction, user) -> str:
    """The role someone acted in; their name too for those who may see names."""
    if entry.by_id and may_see_names(user):
        return f"{entry.by.get_username()} ({entry.get_role_display()})"
    return entry.get_role_display()


def subject(entry: Correction) -> dict:
    """{type, id, name, url}: what the entry is about (no id or url once it is gone)."""
    if entry.subject_type == Subject.EXPERIMENT:
        target = entry.experiment
        return {
            "type": Subject.EXPERIMENT.value,
            "id": target.pk if target else None,
            "name": target.name if target else entry.subject_name,
            "url": target.get_absolute_url() if target else None,
        }
    if entry.subject_type == Subject.COMPETITION:
        target = entry.competition
        return {
            "type": Subject.COMPETITION.value,
            "id": target.slug if target else None,
            "name": target.slug if target else entry.subject_name,
            "url": target.get_absolute_url() if target else None,
        }
    return {
        "type": Subject.CATALOGUE.value,
        "id": None,
        "name": "the catalogue",
        "url": "/competitions/",
    }


def figures_text(before: dict, after: dict | None) -> list[str]:
    """Each split's Any Medal % before → after, in the splits' order: "All 12.3% →
    10.1%", "pending" while the refresh has not stored the figures after."""
    splits = in_display_order(set(before) | set(after or {}))
    out = []
    for split in splits:
        old = format_percent((before.get(split) or {}).get("mean")) or "—"
        if after is None:
            new = "pending"
        else:
            new = format_percent((after.get(split) or {}).get("mean")) or "—"
        out.append(f"{split_label(split)} {old} → {new}")
    return out


def row(entry: Correction, user) -> dict:
    """An entry as the page and the feed show it."""
    moved = []
    for item in entry.visible_figures:
        moved.append(
            {
                "name": item.experiment.name if item.experiment else item.experiment_name,
                "url": item.experiment.get_absolute_url() if item.experiment else None,
                "clean": item.clean,
                "pending": item.pending,
                "unchanged": not item.pending and item.before == item.after,
                "lines": figures_text(item.before, None if item.pending else item.after),
            }
        )
    return {
        "id": entry.pk,
        "time": entry.created_at,
        "kind": entry.kind,
        "kind_label": entry.get_kind_display(),
        "subject": subject(entry),
        "reason": entry.reason,
        "who": who(entry, user),
        "moved": moved,
    }
