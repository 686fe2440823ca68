"""The public leaderboard: agents ranked by Any Medal % on a split (``?split=``), with
rank ranges, the filters, the clean-subset switch and the exports. Reads only the small
per-split summaries and the stored replicates of the ranking split."""

import datetime as dt
import re
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Q

from benchmark import disclosure, provenance
from benchmark.cost import cost_estimate, pareto_frontier
from benchmark.splits import (
    PUBLISHED_SPLITS,
    RAN,
    SPLIT_PREFERENCE,
    SPLIT_SLUGS,
    split_label,
)
from webapp.core.bad_input import split_asked
from webapp.core.formatting import format_percentage_number
from webapp.core.rendering import url_for_each
from webapp.figures import medal_against_cost
from webapp.results import extensions
from webapp.results.grading.aggregates import wants_clean_subset
from webapp.results.grading.replicates import figure_replicates, interval_of
from webapp.results.models import Experiment
from webapp.results.pages.rank_ranges import add_rank_ranges, rank_text, rank_title
from webapp.results.selectors import experiments_visible_to

TRI_STATE_FILTERS = ("internet_access", "test_feedback", "source_available", "known_leakage")
# The integrity filter (``webapp.integrity``'s counts on each experiment's figures): its
# value -> (label, the condition on the experiment).
INTEGRITY_FILTERS = {
    "checked": ("checked", Q(aggregate__runs_checked__gt=0)),
    "clean": (
        "clean (none flagged)",
        Q(aggregate__runs_checked__gt=0, aggregate__runs_flagged=0, aggregate__runs_disqualified=0),
    ),
    "flagged": ("flagged", Q(aggregate__runs_flagged__gt=0)),
    "disqualified": ("disqualified", Q(aggregate__runs_disqualified__gt=0)),
    "unchecked": ("not checked", Q(aggregate__isnull=True) | Q(aggregate__runs_checked=0)),
}


@dataclass
class LeaderboardFilters:
    scaffold: str = ""
    model: str = ""
    provenance: str = ""  # one of benchmark.provenance.SLUGS, or ""
    comparability: str = ""  # one of benchmark.disclosure.CLASSES, or ""
    since: dt.date | None = None
    until: dt.date | None = None
    flags: dict | None = None
    clean: bool = False
    integrity: str = ""  # "", or one of INTEGRITY_FILTERS
    descriptions: str = ""  # "", "original" or "obfuscated"
    split: str = ""  # the ranking split asked for (a slug), "" for the first with figures

    @classmethod
    def from_query(cls, query) -> "LeaderboardFilters":
        """The filters a query asks for; a value it does not take is ignored, but an
        unknown split is refused (``BadQuery``: a 400 naming the valid ones)."""

        def date(name):
            try:
                return dt.date.fromisoformat(query.get(name, "")) if query.get(name) else None
            except ValueError:
                return None

        try:
            # ``source`` is its older name, and "verified" its older word for graded.
            chosen = provenance.normalise(query.get("provenance") or query.get("source") or "")
        except provenance.UnknownProvenance:
            chosen = ""
        flags = {}
        for name in TRI_STATE_FILTERS:
            value = query.get(name, "")
            if value in ("yes", "no"):
                flags[name] = value == "yes"
        return cls(
            scaffold=query.get("scaffold", "").strip(),
            model=query.get("model", "").strip(),
            provenance=chosen,
            comparability=query.get("class", "")
            if query.get("class") in disclosure.CLASSES
            else "",
            since=date("since"),
            until=date("until"),
            flags=flags,
            clean=wants_clean_subset(query),
            integrity=query.get("integrity", "")
            if query.get("integrity") in INTEGRITY_FILTERS
            else "",
            descriptions=query.get("descriptions", "")
            if query.get("descriptions") in ("original", "obfuscated")
            else "",
            split=split_asked(query),
        )


FIELDS = (
    "pk",
    "name",
    "source",
    "comparability_class",
    "comparability",
    "is_published",
    "hardware",
    "runtime_hours",
    "gpus",
    "date",
    "created_at",
    "internet_access",
    "test_feedback",
    "source_available",
    "source_url",
    "known_leakage",
    "known_leakage_url",
    "known_leakage_note",
    "grading_reports_available",
    "published_notes",
    "published_figures",
    "agent__scaffold__name",
    "agent__model__name",
    "agent__version",
    "obfuscated_descriptions",
    "aggregate__runs_checked",
    "aggregate__runs_flagged",
    "aggregate__runs_disqualified",
    "aggregate__cost",
)


def leaderboard_entries(*, user, filters: LeaderboardFilters) -> list[dict]:
    """One dict per experiment, best first (Any Medal % on the split asked for, else on
    All, then Low, ...), with its rank range and interval there (``add_rank_ranges``); the
    synthetic references (``synthetic``: the demo's models mleboard trains itself) after
    every agent, unranked."""
    qs = experiments_visible_to(user)
    if filters.scaffold:
        qs = qs.filter(agent__scaffold__name=filters.scaffold)
    if filters.model:
        qs = qs.filter(agent__model__name=filters.model)
    if filters.provenance:
        qs = qs.filter(source=filters.provenance)
    if filters.comparability:
        qs = qs.filter(comparability_class=filters.comparability)
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
    if filters.integrity:
        qs = qs.filter(INTEGRITY_FILTERS[filters.integrity][1])
    if filters.descriptions:
        qs = qs.filter(obfuscated_descriptions=filters.descriptions == "obfuscated")
    entries = []
    prices = settings.MLEBOARD_LLM_PRICES
    # Only the summary shown is read (each is JSON to decode, per row).
    summary_field = "aggregate__clean_summary" if filters.clean else "aggregate__summary"
    for row in qs.values(*FIELDS, summary_field):
        summary = row[summary_field] or {}
        figures_source = "reports"
        if not summary and row["published_figures"]:
            # Published figures cannot be recomputed on a subset: shown as published.
            summary = _published_with_intervals(row["pk"], row["published_figures"])
            figures_source = "published"
        entries.append(
            {
                "id": row["pk"],
                "name": row["name"],
                "scaffold": row["agent__scaffold__name"],
                "model": row["agent__model__name"],
                "agent_version": row["agent__version"],
                "provenance": row["source"],
                # The older name of provenance, kept for the clients that read it.
                "source": row["source"],
                "comparability": {
                    "class": row["comparability_class"],
                    "reasons": list((row["comparability"] or {}).get("reasons", ())),
                    "undisclosed": list((row["comparability"] or {}).get("undisclosed", ())),
                },
                "synthetic": row["source"] == Experiment.Source.REFERENCE,
                "is_published": row["is_published"],
                "figures_source": figures_source,
                "splits": {s: summary.get(s) for s in SPLIT_SLUGS},
                # Figures over exactly the competitions run (an entry covering no split).
                "ran": summary.get(RAN.slug) if isinstance(summary.get(RAN.slug), dict) else None,
                # None when no figure says (published figures give no seed count).
                "n_seeds": max(
                    (
                        v["n_seeds"]
                        for v in summary.values()
                        if isinstance(v, dict) and v.get("n_seeds")
                    ),
                    default=None,
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
                "known_leakage_note": row["known_leakage_note"],
                # Graded here: the reports are on this site, whatever the flag says.
                "grading_reports_available": True
                if row["source"] in Experiment.GRADED_HERE
                else row["grading_reports_available"],
                "notes": list(row["published_notes"] or []),
                "obfuscated_descriptions": row["obfuscated_descriptions"],
                "cost": _cost_per_run(row, prices),
                "integrity": {
                    "checked": row["aggregate__runs_checked"] or 0,
                    "flagged": row["aggregate__runs_flagged"] or 0,
                    "disqualified": row["aggregate__runs_disqualified"] or 0,
                },
            }
        )

    split = rank_entries(entries, filters.split)
    add_rank_ranges(entries, split, clean=filters.clean)
    return entries


def _published_with_intervals(experiment_id: int, published: dict) -> dict:
    """Published figures, each with the 95% interval drawn from its mean ± SEM (what
    ranks it among the others; ``webapp.results.grading.replicates``)."""
    out = {}
    for split, value in published.items():
        if isinstance(value, dict) and value.get("mean") is not None and split in SPLIT_SLUGS:
            found = interval_of(*figure_replicates(experiment_id, split, value, None))
            value = {**value, "interval_lower": found["lower"], "interval_upper": found["upper"]}
        out[split] = value
    return out


def _cost_per_run(row: dict, prices) -> dict:
    """What one run of the entry costs, in each unit known: tokens (stored with its
    figures), dollars (those tokens at the operator's price for its model) and GPU-hours
    (its disclosed GPUs × hours). A unit not known is left out, never 0."""
    stored = row["aggregate__cost"] or {}
    out = {}
    if stored.get("tokens_per_run") is not None:
        out["tokens"] = stored["tokens_per_run"]
        dollars = cost_estimate(
            stored["prompt_per_run"],
            stored["completion_per_run"],
            prices.get(row["agent__model__name"]),
        )
        if dollars is not None:
            out["dollars"] = dollars
    if row["gpus"] is not None and row["runtime_hours"] is not None:
        out["gpu_hours"] = row["gpus"] * row["runtime_hours"]
    return out


# The units of the medals-against-cost chart: (key, label, axis title, Plotly tick format).
COST_UNITS = (
    ("tokens", "tokens", "tokens per run", "~s"),
    ("dollars", "dollars", "dollars per run", "$,.2f"),
    ("gpu_hours", "GPU-hours", "GPU-hours per run", ",.0f"),
)


def cost_chart(entries: list[dict], split: str, unit: str = "") -> dict | None:
    """The leaderboard's Any Medal % on ``split`` against cost per run in ``unit`` (or the
    unit most entries have), its Pareto frontier marked; the entries without a cost in
    that unit listed apart (``without``), never drawn at 0. None when no entry has both."""
    with_figure = [e for e in entries if (e["splits"].get(split) or {}).get("mean") is not None]
    counts = {key: sum(key in e["cost"] for e in with_figure) for key, *_ in COST_UNITS}
    units = [key for key, *_ in COST_UNITS if counts[key]]
    if not units:
        return None
    if unit not in units:
        unit = max(units, key=lambda key: counts[key])
    drawn = [e for e in with_figure if unit in e["cost"]]
    frontier = set(pareto_frontier([(e["cost"][unit], e["splits"][split]["mean"]) for e in drawn]))
    points = [
        {
            "label": e["name"],
            "cost": e["cost"][unit],
            "mean": e["splits"][split]["mean"],
            "standard_error": e["splits"][split].get("standard_error"),
            "frontier": i in frontier,
        }
        for i, e in enumerate(drawn)
    ]
    _, label, title, ticks = next(u for u in COST_UNITS if u[0] == unit)
    return {
        "unit": unit,
        "units": [(key, lab) for key, lab, *_ in COST_UNITS if key in units],
        "label": label,
        "split": split,
        "figure": medal_against_cost(points, title, ticks),
        "on_frontier": [
            p["label"] for p in sorted(points, key=lambda p: p["cost"]) if p["frontier"]
        ],
        "without": [e for e in with_figure if unit not in e["cost"]],
    }


def ranking_split(entries: list[dict], asked: str = "") -> str:
    """The split entries are ranked on: ``asked`` (``?split=``) when given, else the
    first of SPLIT_PREFERENCE (a catalogue split, never ``ran``) that some entry has a
    figure on; "" when none has any."""
    if asked:
        return asked
    return next(
        (
            s
            for s in SPLIT_PREFERENCE
            if s in SPLIT_SLUGS and any(e["splits"].get(s) for e in entries)
        ),
        "",
    )


def rank_entries(entries: list[dict], asked: str = "") -> str:
    """Sort ``entries`` best first and number them, within one split only: those with a
    figure on the ranking split get ranks (ties broken by the next splits); the others
    come after, unranked (``rank`` None), since a figure over other competitions is not
    comparable. Synthetic references come last and are never ranked: they are not agents,
    and a reference scoring 83% on the demo would read as beating every agent. ``asked``:
    the split to rank on (``ranking_split``). Returns the ranking split."""
    split = ranking_split([e for e in entries if not e.get("synthetic")], asked)

    def mean(entry, s):
        value = (entry["splits"].get(s) or {}).get("mean")
        return -1.0 if value is None else value

    def key(entry):
        has = entry["splits"].get(split) is not None if split else False
        return (
            bool(entry.get("synthetic")),
            not has,
            -mean(entry, split) if split else 0.0,
            *(-mean(entry, s) for s in SPLIT_PREFERENCE if s in SPLIT_SLUGS),
            -((entry.get("ran") or {}).get("mean") or -1.0),
        )

    entries.sort(key=key)
    rank = 0
    for entry in entries:
        if split and entry["splits"].get(split) is not None and not entry.get("synthetic"):
            rank += 1
            entry["rank"] = rank
        else:
            entry["rank"] = None
        entry["ranked_on"] = split if entry["rank"] else ""
    return split


def shown_splits(entries: list[dict], always=PUBLISHED_SPLITS) -> list[str]:
    """The split columns of the leaderboard's table and of its CSV: ``always`` (MLE-bench's
    splits); the others (dev, demo) when an entry has figures on them."""
    return [s for s in SPLIT_SLUGS if s in always or any(e["splits"].get(s) for e in entries)]


def _ran_shown(entry: dict) -> dict | None:
    """The figures over exactly the competitions run, where the table shows them: for an
    entry with no figure on any split."""
    ran = entry.get("ran")
    if not ran or ran.get("mean") is None or any(v for v in entry["splits"].values()):
        return None
    return ran


def csv_columns(shown: list[str]) -> list[str]:
    """The CSV's columns: the table's, split columns as shown (``shown_splits``)."""
    return [
        "rank",
        "scaffold",
        "model",
        "agent_version",
        "name",
        "provenance",
        "comparability_class",
        "comparability_reasons",
        *(
            f"{s}_{k}"
            for s in shown
            for k in ("mean", "standard_error", "interval_lower", "interval_upper")
        ),
        *(f"{RAN.slug}_{k}" for k in ("mean", "standard_error", "n_competitions")),
        "n_seeds",
        "runtime_hours",
        *(f"{key}_per_run" for key, *_ in COST_UNITS),
        "hardware",
        "date",
        "source_available",
        "internet_access",
        "test_feedback",
        "known_leakage",
        "known_leakage_url",
        "grading_reports_available",
        "figures_source",
        "obfuscated_descriptions",
        "runs_checked",
        "runs_flagged",
        "runs_disqualified",
        "rank_low",
        "rank_high",
        "footnotes",
        "id",
    ]


def csv_rows(entries: list[dict]):
    """The leaderboard as CSV: the table's columns and figures (unrounded), empty where
    the table shows nothing."""
    shown = shown_splits(entries)
    columns = csv_columns(shown)
    yield columns
    for entry in entries:
        flat = dict(entry)
        for split in shown:
            value = entry["splits"].get(split) or {}
            flat[f"{split}_mean"] = value.get("mean")
            flat[f"{split}_standard_error"] = value.get("standard_error")
            flat[f"{split}_interval_lower"] = value.get("interval_lower")
            flat[f"{split}_interval_upper"] = value.get("interval_upper")
        ran = _ran_shown(entry) or {}
        for key in ("mean", "standard_error", "n_competitions"):
            flat[f"{RAN.slug}_{key}"] = ran.get(key)
        flat["footnotes"] = " | ".join(_entry_footnotes(entry))
        for key, *_ in COST_UNITS:
            flat[f"{key}_per_run"] = entry["cost"].get(key)
        flat["comparability_class"] = entry["comparability"]["class"]
        flat["comparability_reasons"] = " | ".join(_class_reasons(entry))
        # The table's integrity cell is empty ("—") when no run was checked or disqualified.
        counts = entry["integrity"]
        shows_integrity = bool(counts["checked"] or counts["disqualified"])
        for key, value in counts.items():
            flat[f"runs_{key}"] = value if shows_integrity else None
        yield ["" if flat.get(c) is None else flat.get(c) for c in columns]


def _figure_notes(entry: dict, split: str) -> list[str]:
    return list((entry["splits"].get(split) or {}).get("footnotes", ()))


def _leak_notes(entry: dict) -> list[str]:
    note = entry.get("known_leakage_note") if entry["known_leakage"] else ""
    return [note] if note else []


def _entry_footnotes(entry: dict) -> list[str]:
    """The published footnotes of an entry: those on its figures (marked with their split),
    on the entry itself and on its leakage mark."""
    on_figures = [
        f"{split_label(s)}: {text}" for s in PUBLISHED_SPLITS for text in _figure_notes(entry, s)
    ]
    return on_figures + list(entry.get("notes", ())) + _leak_notes(entry)


def _footnote_numbers(entries: list[dict]) -> dict[str, int]:
    """Each distinct footnote text on the page -> its number, in order of first appearance."""
    seen: dict[str, int] = {}
    for entry in entries:
        for text in (
            *(t for s in PUBLISHED_SPLITS for t in _figure_notes(entry, s)),
            *entry.get("notes", ()),
            *_leak_notes(entry),
        ):
            seen.setdefault(text, len(seen) + 1)
    return seen


def filter_choices(user) -> dict:
    """The scaffolds and models of the experiments ``user`` sees (one query)."""
    pairs = set(
        experiments_visible_to(user)
        .order_by()
        .values_list("agent__scaffold__name", "agent__model__name")
        .distinct()
    )
    return {
        "scaffolds": sorted({scaffold for scaffold, _ in pairs}),
        "models": sorted({model for _, model in pairs}),
    }


# The flags folded into the table's "Conditions" cell: (key, abbreviation, what a raised
# mark means). A mark shows when the flag is yes, with "?" when it is not stated; an absent
# mark means no. The legend under the table (templates/results/home.html) lists the same.
CONDITIONS = (
    ("source_available", "src", "Source code available"),
    ("internet_access", "net", "Internet access during the run"),
    ("test_feedback", "fb", "Used feedback from the test set"),
    ("known_leakage", "leak", "Known leakage"),
    ("grading_reports_available", "rep", "Grading reports available"),
)
_CONDITION_URLS = {"source_available": "source_url", "known_leakage": "known_leakage_url"}


def _conditions(entry: dict, leak_marks: list[dict]) -> tuple[list[dict], int]:
    """The Conditions cell: its marks and its sort key (known leakage, then test feedback,
    then internet: the more, the higher). The tooltips (every flag spelled out on the cell,
    each mark's meaning on it) are written by static/js/tables.js from the marks and
    CONDITIONS, sent once with the page, rather than in every row."""
    marks = []
    for key, abbr, _meaning in CONDITIONS:
        value = entry.get(key)
        if value is False:
            continue
        marks.append(
            {
                "key": key,
                "abbr": abbr if value else f"{abbr}?",
                "url": (entry.get(_CONDITION_URLS.get(key, "")) or "") if value else "",
                "warn": key == "known_leakage" and bool(value),
                "unknown": value is None,
                "marks": leak_marks if key == "known_leakage" and value else [],
            }
        )
    sort = 4 * bool(entry.get("known_leakage")) + 2 * bool(entry.get("test_feedback"))
    sort += bool(entry.get("internet_access"))
    return marks, sort


def _class_reasons(entry: dict) -> list[str]:
    """Why an entry is in its class: what goes beyond MLE-bench's setup, and what it did
    not say ("not disclosed: GPUs")."""
    found = entry["comparability"]
    undisclosed = found.get("undisclosed") or []
    return list(found.get("reasons") or []) + (
        [f"not disclosed: {', '.join(undisclosed)}"] if undisclosed else []
    )


def _class_cell(entry: dict) -> dict:
    """The Class cell: the class's label and its reasons, as the badge and its note."""
    cls = entry["comparability"]["class"]
    reasons = _class_reasons(entry)
    undisclosed = entry["comparability"].get("undisclosed") or []
    # In the cell, what is undisclosed is counted (a list of five words made every published
    # row five lines tall); the cell's title names them all.
    note = list(entry["comparability"].get("reasons") or [])
    if undisclosed:
        note.append(f"{len(undisclosed)} not disclosed" if len(undisclosed) > 1 else reasons[-1])
    return {
        "class_label": disclosure.CLASS_LABELS[cls],
        "class_reasons": reasons,
        "class_note": note,
        "class_title": "; ".join(reasons) if reasons else "within MLE-bench's recommended setup",
        "class_sort": disclosure.CLASSES.index(cls),
    }


def _integrity_cell(counts: dict) -> dict:
    """The Integrity cell: runs checked, and flagged / disqualified marks when any; its
    sort key puts disqualifications, then flags, above clean entries."""
    checked, flagged, disqualified = counts["checked"], counts["flagged"], counts["disqualified"]
    said = [f"{checked} run{'s' if checked != 1 else ''} checked"]
    if flagged:
        said.append(f"{flagged} flagged for review")
    if disqualified:
        said.append(f"{disqualified} disqualified")
    return {
        "integrity_title": ", ".join(said) if checked or disqualified else "no run checked",
        "integrity_sort": disqualified * 10**6 + flagged * 10**3 + (1 if checked else 0),
    }


_NAME_FILLER = re.compile(r"[\s×,;:·()\[\]\-–—]+")


def _name_says_more(entry: dict) -> bool:
    """Whether the experiment's name says more than the agent cell already does (scaffold
    × model, version, the hours and the "published" badge): published entries are named
    "scaffold × model, 24 h (published)", which it would only repeat."""
    rest = entry["name"]
    hours = entry.get("runtime_hours")
    for part in (
        entry["scaffold"],
        entry["model"],
        entry.get("agent_version") or "",
        "(published)" if entry.get("figures_source") == "published" else "",
        "" if hours is None else f"{hours:g} h",
    ):
        if part:
            rest = rest.replace(part, " ", 1)
    return bool(_NAME_FILLER.sub("", rest))


def table_rows(
    entries: list[dict], shown: list[str], numbers: dict[str, int] | None = None
) -> tuple[list[dict], list[tuple[int, str]]]:
    """What the leaderboard's table shows, row by row, as plain values for the template
    (``webapp/core/jinja2/results/leaderboard_rows.html``, which escapes them): formatted figures, sort keys,
    footnote numbers (``numbers``: those of the whole page, when it has two tables).
    Returns the rows and the numbered footnotes listed under the table."""
    numbers = _footnote_numbers(entries) if numbers is None else numbers
    experiment_url = url_for_each("experiment-detail")
    verdicts = extensions.verdicts_for([e["id"] for e in entries])

    def marks(texts) -> list[dict]:
        return [{"n": numbers[t], "text": t} for t in texts]

    ranked_on = next((e["ranked_on"] for e in entries if e.get("ranked_on")), "")
    rows = []
    for e in entries:
        published = e["figures_source"] == "published"
        cells = []
        for split in shown:
            value = e["splits"].get(split)
            cells.append(
                {
                    "split": split,
                    "sort": value["mean"] if value else -1,
                    "mean": format_percentage_number(value["mean"]) if value else "",
                    "standard_error": format_percentage_number(value["standard_error"])
                    if value
                    else "",
                    # The ranking split's only: the interval its rank range comes from.
                    "interval": _interval_text(value) if split == ranked_on else "",
                    # Every figure to the site's precision; a published one as printed too.
                    "as_printed": f"as published: {value['mean']} ± {value['standard_error']}"
                    if value and published
                    else "",
                    "marks": marks(_figure_notes(e, split)),
                }
            )
        hours = "" if e["runtime_hours"] is None else f"{e['runtime_hours']:g}"
        ran = _ran_shown(e)
        ran_note = ""
        if ran:
            n = ran.get("n_competitions")
            ran_note = (
                f"{RAN.label}{f' ({n})' if n else ''}: "
                f"{format_percentage_number(ran['mean'])} ± "
                f"{format_percentage_number(ran.get('standard_error') or 0)}"
            )
        conditions, conditions_sort = _conditions(e, marks(_leak_notes(e)))
        rows.append(
            {
                **e,
                "url": experiment_url(e["id"]),
                "verdict": verdicts.get(e["id"]),
                "rank_text": rank_text(e),
                "rank_title": rank_title(e),
                "rank_sort": 10**9 if e["rank"] is None else e["rank"],
                "n_seeds_text": "" if e["n_seeds"] is None else str(e["n_seeds"]),
                "n_seeds_sort": -1 if e["n_seeds"] is None else e["n_seeds"],
                "ran_note": ran_note,
                "cells": cells,
                "hours": hours,
                "agent_sort": f"{e['scaffold']} × {e['model']} {e['agent_version'] or ''}".lower(),
                "agent_marks": marks(e.get("notes", ())),
                "name_shown": e["name"] if _name_says_more(e) else "",
                "conditions": conditions,
                "conditions_sort": conditions_sort,
                **_integrity_cell(e["integrity"]),
                **_class_cell(e),
            }
        )
    return rows, [(n, text) for text, n in numbers.items()]


def _interval_text(value: dict | None) -> str:
    """A cell's 95% interval, "12.0–20.3" ("" when it has none)."""
    if not value or value.get("interval_lower") is None:
        return ""
    lower = format_percentage_number(value["interval_lower"])
    return f"{lower}–{format_percentage_number(value['interval_upper'])}"


def page_tables(entries: list[dict]) -> dict:
    """The leaderboard page's two tables: the agents (ranked, drawn in the chart) and the
    synthetic references apart, each with the split columns it has figures on, and the
    footnotes of both, numbered once."""
    agents = [e for e in entries if not e["synthetic"]]
    references = [e for e in entries if e["synthetic"]]
    numbers = _footnote_numbers(entries)
    shown = shown_splits(agents)
    reference_shown = shown_splits(references, always=())
    rows, _ = table_rows(agents, shown, numbers)
    reference_rows, _ = table_rows(references, reference_shown, numbers)
    return {
        "agents": agents,
        "shown": shown,
        "rows": rows,
        "references": references,
        "reference_shown": reference_shown,
        "reference_rows": reference_rows,
        "footnotes": [(n, text) for text, n in numbers.items()],
    }
