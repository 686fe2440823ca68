"""MLE-bench's published leaderboard: the table in its README, read into entries.

    entries = read_readme_leaderboard(Path("mle-bench/README.md").read_text())

The README's "## Leaderboard" section holds one markdown table followed by footnote
definitions; a footnote reference marks the figure it is on, or, on the agent or LLM cell,
is a note on the entry. Columns are found by their heading; a table without the split
columns is an error. ``entries_to_yaml`` / ``entries_from_yaml`` write and read the shipped
copy: ``mleboard published README.md --output benchmark/data/published_results.yaml``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass

# The README's Low (Lite), Medium, High and All columns are benchmark.splits.PUBLISHED_SPLITS.
from benchmark.splits import PUBLISHED_SPLITS

_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
_FOOTNOTE_REF = re.compile(r"\[\^([^\]]+)\]")
_FOOTNOTE_DEF = re.compile(r"^\[\^([^\]]+)\]:\s*(.*)$")
_FIGURE = re.compile(r"^(-?\d+(?:\.\d+)?)\s*±\s*(-?\d+(?:\.\d+)?)$")
_YES = {"✓", "✔", "yes", "y", "true"}
_NO = {"x", "✗", "✘", "no", "n", "false", "-", ""}


class PublishedTableError(ValueError):
    """The README has no leaderboard table we can read; the message says what is wrong."""


@dataclass(frozen=True)
class PublishedFigure:
    mean: float
    standard_error: float
    footnotes: tuple[str, ...] = ()  # footnote texts marking this figure


@dataclass(frozen=True)
class PublishedEntry:
    """One row of MLE-bench's README leaderboard."""

    agent: str
    llm: str
    figures: dict[str, PublishedFigure]  # low / medium / high / all
    runtime_hours: float | None
    date: dt.date | None
    agent_url: str = ""
    known_leakage: bool = False
    known_leakage_url: str = ""
    source_available: bool = False
    grading_reports_available: bool = False
    notes: tuple[str, ...] = ()  # footnotes on the agent or the LLMs used
    known_leakage_note: str = ""  # the leakage column's footnote, on entries marked with it

    @property
    def name(self) -> str:
        """The entry's name on mleboard; the running time tells apart rows of one agent
        and model published twice (12 h and 24 h)."""
        hours = "" if self.runtime_hours is None else f", {self.runtime_hours:g} h"
        return f"{self.agent} × {self.llm}{hours} (published)"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["date"] = self.date.isoformat() if self.date else None
        data["figures"] = {
            split: {
                "mean": f.mean,
                "standard_error": f.standard_error,
                **({"footnotes": list(f.footnotes)} if f.footnotes else {}),
            }
            for split, f in self.figures.items()
        }
        data["notes"] = list(self.notes)
        return data


def read_readme_leaderboard(text: str) -> list[PublishedEntry]:
    """Every row of the README's leaderboard table, in the README's order."""
    lines = text.splitlines()
    start = next(
        (i for i, line in enumerate(lines) if re.match(r"^#+\s*Leaderboard\s*$", line.strip())),
        None,
    )
    if start is None:
        raise PublishedTableError("the README has no '## Leaderboard' section")
    table: list[str] = []
    i = start + 1
    while i < len(lines) and not lines[i].lstrip().startswith("|"):
        if lines[i].startswith("#"):
            raise PublishedTableError("the README's Leaderboard section has no table")
        i += 1
    while i < len(lines) and lines[i].lstrip().startswith("|"):
        table.append(lines[i])
        i += 1
    if len(table) < 3:
        raise PublishedTableError("the README's leaderboard table has no rows")
    footnotes = _footnote_definitions(lines)
    header = [_plain(cell)[0].lower() for cell in _cells(table[0])]
    header_refs = [_refs(cell) for cell in _cells(table[0])]
    columns = _column_index(header)
    leak_refs = header_refs[columns["known_leakage"]] if "known_leakage" in columns else []
    leak_note = " ".join(footnotes.get(r, "") for r in leak_refs).strip()
    entries = []
    for number, row in enumerate(table[2:], start=1):
        cells = _cells(row)
        if len(cells) < len(header):
            raise PublishedTableError(
                f"leaderboard row {number} has {len(cells)} cells, the heading {len(header)}"
            )
        entries.append(_entry(cells, columns, footnotes, leak_note, number))
    return entries


def _entry(cells, columns, footnotes, leak_note, number) -> PublishedEntry:
    agent, agent_url = _plain(cells[columns["agent"]])
    llm, _ = _plain(cells[columns["llm"]])
    notes = tuple(
        footnotes.get(ref, f"[^{ref}]")
        for key in ("agent", "llm")
        for ref in _refs(cells[columns[key]])
    )
    figures = {}
    for split in PUBLISHED_SPLITS:
        raw = cells[columns[split]]
        value, _ = _plain(raw)
        match = _FIGURE.match(re.sub(r"\s+", " ", value))
        if not match:
            raise PublishedTableError(
                f"leaderboard row {number} ({agent}): the {split} figure {value!r} is not "
                "'mean ± SEM'"
            )
        figures[split] = PublishedFigure(
            mean=float(match.group(1)),
            standard_error=float(match.group(2)),
            footnotes=tuple(footnotes.get(r, f"[^{r}]") for r in _refs(raw)),
        )
    leak_text, leak_url = (
        _plain(cells[columns["known_leakage"]]) if "known_leakage" in columns else ("", "")
    )
    leaked = _flag(leak_text)
    return PublishedEntry(
        agent=agent,
        llm=llm,
        figures=figures,
        runtime_hours=_hours(cells, columns),
        date=_date(cells, columns, number),
        agent_url=agent_url,
        known_leakage=leaked,
        known_leakage_url=leak_url if leaked else "",
        source_available=_flag(_plain(cells[columns["source"]])[0])
        if "source" in columns
        else False,
        grading_reports_available=_flag(_plain(cells[columns["reports"]])[0])
        if "reports" in columns
        else False,
        notes=notes,
        known_leakage_note=leak_note if leaked else "",
    )


def _column_index(header: list[str]) -> dict[str, int]:
    wanted = {
        "agent": lambda h: h.startswith("agent"),
        "llm": lambda h: h.startswith("llm"),
        "low": lambda h: h.startswith("low"),
        "medium": lambda h: h.startswith("medium"),
        "high": lambda h: h.startswith("high"),
        "all": lambda h: h.startswith("all"),
        "hours": lambda h: "running time" in h or "hours" in h,
        "date": lambda h: h.startswith("date"),
        "known_leakage": lambda h: "leakage" in h,
        "source": lambda h: "source code" in h,
        "reports": lambda h: "grading report" in h,
    }
    found = {}
    for key, test in wanted.items():
        idx = next((i for i, h in enumerate(header) if test(h)), None)
        if idx is not None:
            found[key] = idx
    missing = [k for k in ("agent", "llm", *PUBLISHED_SPLITS) if k not in found]
    if missing:
        raise PublishedTableError(
            f"the leaderboard table has no {', '.join(missing)} column (heading: {header})"
        )
    return found


def _cells(row: str) -> list[str]:
    body = row.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [cell.strip() for cell in body.split("|")]


def _refs(cell: str) -> list[str]:
    return _FOOTNOTE_REF.findall(cell)


def _plain(cell: str) -> tuple[str, str]:
    """The cell's text without markup or footnote marks, and its first link's URL."""
    links = _LINK.findall(cell)
    text = _FOOTNOTE_REF.sub("", cell)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = re.sub(r"<br\s*/?>", " ", text, flags=re.IGNORECASE)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text, (links[0][1] if links else "")


def _flag(text: str) -> bool:
    value = text.strip().lower()
    if value in _YES:
        return True
    if value in _NO:
        return False
    raise PublishedTableError(f"cannot tell yes or no from {text!r}")


def _hours(cells, columns) -> float | None:
    if "hours" not in columns:
        return None
    text, _ = _plain(cells[columns["hours"]])
    try:
        return float(text)
    except ValueError:
        return None


def _date(cells, columns, number) -> dt.date | None:
    if "date" not in columns:
        return None
    text, _ = _plain(cells[columns["date"]])
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise PublishedTableError(
            f"leaderboard row {number}: date {text!r} is not YYYY-MM-DD"
        ) from None


def _footnote_definitions(lines: list[str]) -> dict[str, str]:
    """``[^id]: text`` definitions, with their indented continuation lines."""
    notes: dict[str, str] = {}
    current = None
    for line in lines:
        match = _FOOTNOTE_DEF.match(line)
        if match:
            current = match.group(1)
            notes[current] = match.group(2).strip()
        elif current is not None and line.startswith(("    ", "\t")) and line.strip():
            notes[current] += " " + line.strip()
        else:
            current = None
    return {key: _LINK.sub(lambda m: m.group(1), text) for key, text in notes.items()}


def entries_to_yaml(entries: list[PublishedEntry], *, source: str = "") -> str:
    import yaml

    header = (
        "# MLE-bench's published leaderboard (its README's table), one entry per row, in the\n"
        "# README's order. Generated by `mleboard published README.md`; do not edit by hand.\n"
    )
    if source:
        header += f"# Source: {source}\n"
    body = yaml.safe_dump(
        [e.to_dict() for e in entries], sort_keys=False, allow_unicode=True, width=100
    )
    return header + body


def entries_from_yaml(text: str) -> list[PublishedEntry]:
    import yaml

    entries = []
    for data in yaml.safe_load(text) or []:
        figures = {
            split: PublishedFigure(
                mean=float(f["mean"]),
                standard_error=float(f["standard_error"]),
                footnotes=tuple(f.get("footnotes", ())),
            )
            for split, f in data["figures"].items()
        }
        date = data.get("date")
        entries.append(
            PublishedEntry(
                agent=str(data["agent"]),
                llm=str(data["llm"]),
                figures=figures,
                runtime_hours=data.get("runtime_hours"),
                date=dt.date.fromisoformat(str(date)) if date else None,
                agent_url=data.get("agent_url", ""),
                known_leakage=bool(data.get("known_leakage")),
                known_leakage_url=data.get("known_leakage_url", ""),
                source_available=bool(data.get("source_available")),
                grading_reports_available=bool(data.get("grading_reports_available")),
                notes=tuple(data.get("notes", ())),
                known_leakage_note=data.get("known_leakage_note", ""),
            )
        )
    return entries
