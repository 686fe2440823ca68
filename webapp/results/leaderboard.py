"""The public leaderboard: agents ranked by Any Medal % per split, with the filters,
the clean-subset switch and the exports. Reads only the small per-split summaries."""

import datetime as dt
from dataclasses import dataclass

from django.db.models import Q

from webapp.results.selectors import experiments_visible_to

SPLITS = ("low", "medium", "high", "all")
SPLIT_LABELS = {
    "low": "Low (Lite)",
    "medium": "Medium",
    "high": "High",
    "all": "All",
    "demo": "Demo",
    "dev": "Dev",
    "ran": "Competitions run",
}
TRI_STATE_FILTERS = ("internet_access", "test_feedback", "source_available", "known_leakage")


@dataclass
class LeaderboardFilters:
    scaffold: str = ""
    model: str = ""
    source: str = ""
    since: dt.date | None = None
    until: dt.date | None = None
    flags: dict | None = None
    clean: bool = False

    @classmethod
    def from_query(cls, query) -> "LeaderboardFilters":
        def date(name):
            try:
                return dt.date.fromisoformat(query.get(name, "")) if query.get(name) else None
            except ValueError:
                return None

        flags = {}
        for name in TRI_STATE_FILTERS:
            value = query.get(name, "")
            if value in ("yes", "no"):
                flags[name] = value == "yes"
        return cls(
            scaffold=query.get("scaffold", "").strip(),
            model=query.get("model", "").strip(),
            source=query.get("source", "").strip(),
            since=date("since"),
            until=date("until"),
            flags=flags,
            clean=query.get("clean", "") in ("1", "true", "on", "yes"),
        )


FIELDS = (
    "pk",
    "name",
    "source",
    "is_published",
    "hardware",
    "runtime_hours",
    "date",
    "created_at",
    "internet_access",
    "test_feedback",
    "source_available",
    "source_url",
    "known_leakage",
    "known_leakage_url",
    "grading_reports_available",
    "published_notes",
    "published_figures",
    "agent__scaffold__name",
    "agent__model__name",
    "agent__version",
    "aggregate__summary",
    "aggregate__clean_summary",
)


def leaderboard_entries(*, user, filters: LeaderboardFilters) -> list[dict]:
    """One dict per experiment, best first (Any Medal % on All, then Low, ...)."""
    qs = experiments_visible_to(user)
    if filters.scaffold:
        qs = qs.filter(agent__scaffold__name=filters.scaffold)
    if filters.model:
        qs = qs.filter(agent__model__name=filters.model)
    if filters.source:
        qs = qs.filter(source=filters.source)
    if filters.since:
        qs = qs.filter(
            Q(date__gte=filters.since) | Q(date__isnull=True, created_at__date__gte=filters.since)
        )
    if filters.until:
        qs = qs.filter(
            Q(date__lte=filters.until) | Q(date__isnull=True, created_at__date__lte=filters.until)
        )
    for name, value in (filters.flags or {}).items():
        qs = qs.filter(**{name: value})
    entries = []
    for row in qs.values(*FIELDS):
        summary = (
            row["aggregate__clean_summary"] if filters.clean else row["aggregate__summary"]
        ) or {}
        figures_source = "reports"
        if not summary and row["published_figures"]:
            # Published figures cannot be recomputed on a subset: shown as published.
            summary = row["published_figures"]
            figures_source = "published"
        entries.append(
            {
                "id": row["pk"],
                "name": row["name"],
                "scaffold": row["agent__scaffold__name"],
                "model": row["agent__model__name"],
                "agent_version": row["agent__version"],
                "source": row["source"],
                "is_published": row["is_published"],
                "figures_source": figures_source,
                "splits": {s: summary.get(s) for s in (*SPLITS, "demo")},
                "n_seeds": max(
                    (v.get("n_seeds") or 0 for v in summary.values() if isinstance(v, dict)),
                    default=0,
                ),
                "runtime_hours": row["runtime_hours"],
                "hardware": row["hardware"],
                "date": (row["date"] or row["created_at"].date()).isoformat(),
                "internet_access": row["internet_access"],
                "test_feedback": row["test_feedback"],
                "source_available": row["source_available"],
                "source_url": row["source_url"],
                "known_leakage": row["known_leakage"],
                "known_leakage_url": row["known_leakage_url"],
                "grading_reports_available": row["grading_reports_available"],
                "notes": list(row["published_notes"] or []),
            }
        )

    def rank_key(entry):
        return tuple(
            -((entry["splits"].get(s) or {}).get("mean") or -1)
            for s in ("all", "low", "medium", "high", "demo")
        )

    entries.sort(key=rank_key)
    for rank, entry in enumerate(entries, start=1):
        entry["rank"] = rank
    return entries


CSV_COLUMNS = (
    "rank",
    "scaffold",
    "model",
    "agent_version",
    "name",
    "source",
    *(f"{s}_{k}" for s in SPLITS for k in ("mean", "standard_error")),
    "n_seeds",
    "runtime_hours",
    "hardware",
    "date",
    "source_available",
    "internet_access",
    "test_feedback",
    "known_leakage",
    "known_leakage_url",
    "grading_reports_available",
    "figures_source",
    "footnotes",
    "id",
)


def csv_rows(entries: list[dict]):
    yield list(CSV_COLUMNS)
    for entry in entries:
        flat = dict(entry)
        for split in SPLITS:
            value = entry["splits"].get(split) or {}
            flat[f"{split}_mean"] = value.get("mean")
            flat[f"{split}_standard_error"] = value.get("standard_error")
        flat["footnotes"] = " | ".join(_entry_footnotes(entry))
        yield ["" if flat.get(c) is None else flat.get(c) for c in CSV_COLUMNS]


def _entry_footnotes(entry: dict) -> list[str]:
    """The published footnotes of an entry: those on its figures (marked with their split)
    and those on the entry itself."""
    notes = []
    for split in SPLITS:
        for text in (entry["splits"].get(split) or {}).get("footnotes", ()):
            notes.append(f"{SPLIT_LABELS[split]}: {text}")
    return notes + list(entry.get("notes", ()))


def footnote_numbers(entries: list[dict]) -> list[tuple[int, str]]:
    """Each distinct footnote text on the page, numbered in order of first appearance."""
    seen: dict[str, int] = {}
    for entry in entries:
        for split in SPLITS:
            for text in (entry["splits"].get(split) or {}).get("footnotes", ()):
                seen.setdefault(text, len(seen) + 1)
        for text in entry.get("notes", ()):
            seen.setdefault(text, len(seen) + 1)
    return [(n, text) for text, n in seen.items()]


def filter_choices(user) -> dict:
    qs = experiments_visible_to(user)
    return {
        "scaffolds": sorted(set(qs.values_list("agent__scaffold__name", flat=True))),
        "models": sorted(set(qs.values_list("agent__model__name", flat=True))),
    }


LEAK_YES = '<span class="badge warn">yes</span>'
LEAK_NOTE = "Known leakage: "  # the published note on the leakage column


def _leak_cell(entry: dict) -> str:
    from django.utils.html import escape

    if not entry["known_leakage"]:
        return "no"
    numbers = entry.get("_footnote_numbers", {})
    marks = _marks([n for n in entry["notes"] if n.startswith(LEAK_NOTE)], numbers)
    if entry["known_leakage_url"]:
        link = escape(entry["known_leakage_url"])
        return f'<a href="{link}" rel="nofollow">{LEAK_YES}</a>{marks}'
    return LEAK_YES + marks


def _tri(value) -> str:
    return "?" if value is None else ("yes" if value else "no")


def _marks(texts, numbers: dict[str, int]) -> str:
    from django.utils.html import escape

    return "".join(
        f'<sup class="fn"><a href="#fn-{numbers[t]}" title="{escape(t)}">{numbers[t]}</a></sup>'
        for t in texts
        if t in numbers
    )


def rows_html(entries: list[dict], shown: list[str]) -> str:
    """The leaderboard's table body, built in Python (a template loop over hundreds of
    rows of sixteen cells is most of the page's time). Every value is escaped."""
    from django.utils.html import escape
    from django.utils.safestring import mark_safe

    numbers = {text: n for n, text in footnote_numbers(entries)}
    out = []
    for e in entries:
        e = {**e, "_footnote_numbers": numbers}
        version = (
            f' <span class="muted small">{escape(e["agent_version"])}</span>'
            if e["agent_version"]
            else ""
        )
        badges = f'<span class="badge {escape(e["source"])}">{escape(e["source"])}</span>'
        if e["figures_source"] == "published":
            badges += ' <span class="badge">published figures</span>'
        if not e["is_published"]:
            badges += ' <span class="badge">private</span>'
        cells = []
        for split in shown:
            value = e["splits"].get(split)
            if value:
                # Published figures as printed (two decimals); ours to one.
                digits = 2 if e["figures_source"] == "published" else 1
                cells.append(
                    f'<td class="num" data-split="{split}" data-value="{value["mean"]}">'
                    f"{value['mean']:.{digits}f} "
                    f'<span class="pm">± {value["standard_error"]:.{digits}f}</span>'
                    f"{_marks(value.get('footnotes', ()), numbers)}</td>"
                )
            else:
                cells.append(
                    f'<td class="num" data-split="{split}" data-value="-1"><span class="muted">—</span></td>'
                )
        source_cell = "✗"
        if e["source_available"]:
            source_cell = (
                f'<a href="{escape(e["source_url"])}" rel="nofollow">✓</a>'
                if e["source_url"]
                else "✓"
            )
        hours = "" if e["runtime_hours"] is None else f"{e['runtime_hours']:g}"
        out.append(
            f'<tr data-experiment="{e["id"]}">'
            f'<td><input type="checkbox" class="compare-pick" value="{e["id"]}" aria-label="compare {escape(e["name"])}"></td>'
            f'<td class="num" data-value="{e["rank"]}">{e["rank"]}</td>'
            f'<td>{escape(e["scaffold"])} <span class="muted">×</span> {escape(e["model"])}{version}'
            f"{_marks([n for n in e['notes'] if not n.startswith(LEAK_NOTE)], numbers)}</td>"
            f'<td><a href="/experiments/{e["id"]}/">{escape(e["name"])}</a> {badges}</td>'
            + "".join(cells)
            + f'<td class="num" data-value="{e["n_seeds"]}">{e["n_seeds"] or ""}</td>'
            f'<td class="num" data-value="{hours or -1}">{hours}</td>'
            f"<td>{escape(e['hardware'])}</td><td>{e['date']}</td><td>{source_cell}</td>"
            f"<td>{_tri(e['internet_access'])}</td><td>{_tri(e['test_feedback'])}</td>"
            f"<td>{_leak_cell(e)}</td><td>{_tri(e['grading_reports_available'])}</td></tr>"
        )
    return mark_safe("".join(out))
