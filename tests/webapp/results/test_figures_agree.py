"""One source for each figure: every page, the API and every export give the same Any
Medal % for the same experiments, before and after a run is disqualified — the
leaderboard (page, CSV, JSON, API), the experiment page, compare (page and API, paired
and unpaired) and the experiment's reports exports. That the rules deciding which runs
count are read in one module only is a house rule (tools/house_rules)."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser

import pytest

from benchmark.catalogue import competitions_in_split
from tests.support.factories import import_runs
from webapp.competitions.models import Competition
from webapp.competitions.services import catalogue_sync
from webapp.core.formatting import format_rate
from webapp.integrity import services as integrity
from webapp.results.grading.aggregates import experiment_aggregate_refresh
from webapp.results.models import Experiment, GradeReport, Run
from webapp.results.services import agent_get_or_create

pytestmark = pytest.mark.django_db

SPLIT = "demo"
PUBLISHED = {
    "demo": {"mean": 37.5, "standard_error": 6.25},
    "all": {"mean": 16.9, "standard_error": 1.1},
}


class Tables(HTMLParser):
    """Every table row of a page: its cells' text and the attributes of the row and cells;
    a cell's interval (its ``div.interval``) apart from its text."""

    def __init__(self, html: str):
        super().__init__()
        self.rows: list[dict] = []
        self._tables: list[dict] = []
        self._row: dict | None = None
        self._cell: dict | None = None
        self._interval = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._tables.append(attrs)
        elif tag == "tr":
            self._row = {
                "table": dict(self._tables[-1]) if self._tables else {},
                "attrs": attrs,
                "cells": [],
            }
        elif tag in ("td", "th") and self._row is not None:
            self._cell = {"attrs": attrs, "text": "", "interval": ""}
        elif tag == "div" and self._cell is not None:
            self._interval = "interval" in (attrs.get("class") or "").split()

    def handle_endtag(self, tag):
        if tag == "div":
            self._interval = False
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._cell["text"] = " ".join(self._cell["text"].split())
            self._row["cells"].append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None
        elif tag == "table" and self._tables:
            self._tables.pop()

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["interval" if self._interval else "text"] += data

    def of(self, **table) -> list[dict]:
        return [
            r
            for r in self.rows
            if all(
                v in (r["table"].get(k) or "").split() or r["table"].get(k) == v
                for k, v in table.items()
            )
        ]


def page(client, url: str, **query) -> Tables:
    response = client.get(url, query)
    assert response.status_code == 200, url
    return Tables(response.content.decode())


def shown(mean: float, digits: int = 1) -> str:
    return f"{mean:.{digits}f}"


def any_medal_from_export(rows: list[dict]) -> float:
    """Any Medal % on the split from an exported grading report, as MLE-bench aggregates:
    per seed the % of the split's competitions with a medal (a missing run has none),
    then the mean over seeds."""
    ids = [c.id for c in competitions_in_split(SPLIT)]
    seeds = sorted({int(r["seed"]) for r in rows})
    medal = {
        (r["competition_id"], int(r["seed"]))
        for r in rows
        if any(str(r[k]).lower() == "true" for k in ("gold_medal", "silver_medal", "bronze_medal"))
    }
    per_seed = [100 * sum((cid, s) in medal for cid in ids) / len(ids) for s in seeds]
    return sum(per_seed) / len(per_seed)


def every_figure(client, a: Experiment, b: Experiment, c: Experiment) -> dict:
    """Each experiment's Any Medal % on the split, as each surface gives it; the compare
    page and API checked against each other on the way."""
    out: dict[str, dict[int, object]] = {}

    # The leaderboard: page, CSV, JSON export and API (and the clean subset's).
    for clean in ("", "1"):
        rows = page(client, "/", clean=clean).of(id="leaderboard")
        cells = {
            int(r["attrs"]["data-experiment"]): {
                cell["attrs"].get("data-split"): cell for cell in r["cells"]
            }
            for r in rows
            if r["attrs"].get("data-experiment")
        }
        seeds = {
            int(r["attrs"]["data-experiment"]): next(
                cell["text"]
                for cell in r["cells"]
                if "n-seeds" in (cell["attrs"].get("class") or "")
            )
            for r in rows
            if r["attrs"].get("data-experiment")
        }
        out[f"leaderboard page{clean}"] = {
            pk: cells[pk][SPLIT]["text"] for pk in (a.pk, b.pk, c.pk)
        }
        # The interval is shown on the ranking split's figures: ranked on the split here.
        ranked_rows = page(client, "/", clean=clean, split=SPLIT).of(id="leaderboard")
        ranked_cells = {
            int(r["attrs"]["data-experiment"]): {
                cell["attrs"].get("data-split"): cell for cell in r["cells"]
            }
            for r in ranked_rows
            if r["attrs"].get("data-experiment")
        }
        out[f"leaderboard page interval{clean}"] = {
            pk: ranked_cells[pk][SPLIT]["interval"] for pk in (a.pk, b.pk, c.pk)
        }
        out[f"leaderboard page seeds{clean}"] = {pk: seeds[pk] for pk in (a.pk, b.pk, c.pk)}
        exported = list(
            csv.DictReader(
                io.StringIO(client.get("/", {"format": "csv", "clean": clean}).content.decode())
            )
        )
        by_id = {int(r["id"]): r for r in exported}
        digits = {a.pk: 1, b.pk: 1, c.pk: 1}  # one decimal everywhere, published figures too
        out[f"leaderboard csv{clean}"] = {
            pk: f"{shown(float(by_id[pk][f'{SPLIT}_mean']), digits[pk])} ± "
            f"{shown(float(by_id[pk][f'{SPLIT}_standard_error']), digits[pk])}"
            for pk in (a.pk, b.pk, c.pk)
        }
        out[f"leaderboard csv interval{clean}"] = {
            pk: f"{shown(float(by_id[pk][f'{SPLIT}_interval_lower']))}–"
            f"{shown(float(by_id[pk][f'{SPLIT}_interval_upper']))}"
            for pk in (a.pk, b.pk, c.pk)
        }
        out[f"leaderboard csv seeds{clean}"] = {
            pk: by_id[pk]["n_seeds"] for pk in (a.pk, b.pk, c.pk)
        }
        entries = client.get("/", {"format": "json", "clean": clean}).json()["entries"]
        assert client.get("/api/leaderboard/", {"clean": clean}).json()["entries"] == entries
        by_id = {e["id"]: e for e in entries}
        out[f"leaderboard json{clean}"] = {
            pk: f"{shown(by_id[pk]['splits'][SPLIT]['mean'], digits[pk])} ± "
            f"{shown(by_id[pk]['splits'][SPLIT]['standard_error'], digits[pk])}"
            for pk in (a.pk, b.pk, c.pk)
        }
        # The interval of the ranking split, on the entry and on its split's figures.
        out[f"leaderboard json interval{clean}"] = {
            pk: f"{shown(by_id[pk]['splits'][SPLIT]['interval_lower'])}–"
            f"{shown(by_id[pk]['splits'][SPLIT]['interval_upper'])}"
            for pk in (a.pk, b.pk, c.pk)
        }
        ranked_on_split = {
            e["id"]: e
            for e in client.get("/api/leaderboard/", {"clean": clean, "split": SPLIT}).json()[
                "entries"
            ]
        }
        out[f"leaderboard api entry interval{clean}"] = {
            pk: f"{shown(ranked_on_split[pk]['interval']['lower'])}–"
            f"{shown(ranked_on_split[pk]['interval']['upper'])}"
            for pk in (a.pk, b.pk, c.pk)
        }
        out[f"leaderboard json seeds{clean}"] = {
            pk: "" if by_id[pk]["n_seeds"] is None else str(by_id[pk]["n_seeds"])
            for pk in (a.pk, b.pk, c.pk)
        }
        # The experiment page, on the same subset.
        out[f"experiment page{clean}"] = {}
        for e in (a, b):
            (row,) = [
                r
                for r in page(client, f"/experiments/{e.pk}/", clean=clean, split=SPLIT).of(
                    id="split-table"
                )
                if r["cells"] and r["cells"][0]["text"] == "Demo"
            ]
            out[f"experiment page{clean}"][e.pk] = row["cells"][-1]["text"]

    # The experiment's reports as exported (JSON and CSV), aggregated as MLE-bench does.
    out["reports export"] = {}
    for e in (a, b):
        as_json = json.loads(client.get(f"/experiments/{e.pk}/reports.json").content)
        as_csv = list(
            csv.DictReader(
                io.StringIO(client.get(f"/experiments/{e.pk}/reports.csv").content.decode())
            )
        )
        from_json = any_medal_from_export(as_json["competition_reports"])
        assert from_json == pytest.approx(any_medal_from_export(as_csv))
        out["reports export"][e.pk] = shown(from_json)

    for clean in ("", "1"):
        compared(client, a, b, c, clean, out)
    return out


def compared(client, a, b, c, clean: str, out: dict) -> None:
    """Compare, page and API (of all competitions, or of the clean subset): the split
    table, and the paired and unpaired comparisons."""
    ids = f"{a.pk},{b.pk},{c.pk}"
    query = {"experiments": ids, "split": SPLIT, "clean": clean}
    api = client.get("/api/compare/", query).json()
    assert api["split"] == SPLIT and api["clean_subset"] == bool(clean)
    by_split = api["any_medal_by_split"]
    out["compare api" + clean] = {
        e.pk: f"{shown(by_split[str(e.pk)][SPLIT]['mean'], d)} ± {shown(by_split[str(e.pk)][SPLIT]['standard_error'], d)}"
        for e, d in ((a, 1), (b, 1), (c, 1))
    }
    tables = page(client, "/compare/", **query)
    (demo_row,) = [r for r in tables.of(id="compare-splits") if r["cells"][0]["text"] == "Demo"]
    out["compare page" + clean] = {
        e.pk: cell["text"].rstrip("*").strip()
        for e, cell in zip((a, b, c), demo_row["cells"][1:], strict=True)
    }
    paired, unpaired = api["comparisons"]
    assert (paired["kind"], unpaired["kind"]) == ("paired", "unpaired")
    out["compare paired" + clean] = {
        a.pk: shown(paired["a_any_medal_percentage"]),
        b.pk: shown(paired["b_any_medal_percentage"]),
    }
    assert paired["difference"] == pytest.approx(
        by_split[str(a.pk)][SPLIT]["mean"] - by_split[str(b.pk)][SPLIT]["mean"]
    )
    (row,) = [r for r in unpaired["splits"] if r["split"] == SPLIT]
    out["compare unpaired" + clean] = {a.pk: shown(row["a_mean"]), c.pk: shown(row["b_mean"])}
    # The page says what the API says, and the per-competition table's rows are the API's.
    html = client.get("/compare/", query).content.decode().replace("&#x27;", "'")
    assert paired["sentence"] in html
    per_competition = tables.of(**{"class": "compare-per-competition"})
    page_rows = {
        r["attrs"]["data-competition"]: (
            r["attrs"]["data-result"],
            r["cells"][1]["text"],
            r["cells"][4]["text"],
        )
        for r in per_competition
        if r["attrs"].get("data-competition")
    }
    assert page_rows == {
        r["competition_id"]: (
            r["result"],
            format_rate(r["a_medal_rate"]),
            format_rate(r["b_medal_rate"]),
        )
        for r in paired["per_competition"]
    }
    # Each competition's page counts the same medals for the compared experiments (a
    # disqualified run's struck, not counted).
    if not clean:
        for row in paired["per_competition"]:
            scores = page(client, f"/competitions/{row['competition_id']}/").of(id="agent-scores")
            for e, rate in ((a, row["a_medal_rate"]), (b, row["b_medal_rate"])):
                mine = [
                    r["cells"]
                    for r in scores
                    if r["cells"][0]["text"].startswith(f"{e.name} (seed")
                ]
                medals = sum(cells[3]["text"] in ("gold", "silver", "bronze") for cells in mine)
                seeds = e.aggregate.figures["splits"][SPLIT]["num_seeds_averaged"]
                assert medals == round(rate * seeds), (row["competition_id"], e.name, mine)
    # Its medal rates average to the split's figure.
    rates = [r["a_medal_rate"] for r in paired["per_competition"]]
    assert 100 * sum(rates) / len(rates) == pytest.approx(by_split[str(a.pk)][SPLIT]["mean"])


def assert_agree(figures: dict) -> None:
    """The same text for each experiment wherever it is given (a bare mean where the
    surface gives no SEM is compared with the mean of the others)."""

    # The clean subset's figures (keys ending in 1) are compared among themselves.
    def kind_of(key: str) -> str:
        return next((kind for kind in ("seeds", "interval") if kind in key), "figure")

    groups = {
        (kind, clean): [k for k in figures if kind_of(k) == kind and k.endswith("1") == clean]
        for kind in ("figure", "seeds", "interval")
        for clean in (False, True)
    }
    for keys in groups.values():
        pks = {pk for k in keys for pk in figures[k]}
        for pk in pks:
            said = {k: figures[k][pk] for k in keys if pk in figures[k]}
            means = {k: v.split(" ± ")[0] for k, v in said.items()}
            assert len(set(means.values())) == 1, f"experiment {pk}: {said}"
            full = {v for v in said.values() if " ± " in v}
            assert len(full) <= 1, f"experiment {pk}: {said}"


def test_every_surface_gives_the_same_figures_after_a_disqualification(client, tmp_path, reviewer):
    catalogue_sync()
    import_runs(tmp_path / "runs", {"a": 3, "b": 3}, split=SPLIT, seed=21)
    a, b = Experiment.objects.order_by("pk")
    # A run that never happened: seeds are padded with failures alike everywhere.
    missing = GradeReport.objects.filter(experiment=b, is_current=True).order_by("pk").first()
    Run.objects.filter(pk=missing.run_id).delete()
    experiment_aggregate_refresh(b.pk)
    # The curation retires one competition of the split: the clean subset leaves it out.
    Competition.objects.filter(slug=competitions_in_split(SPLIT)[0].id).update(retired=True)
    experiment_aggregate_refresh(a.pk)
    experiment_aggregate_refresh(b.pk)
    c = Experiment.objects.create(
        name="published entry",
        agent=agent_get_or_create("pubscaffold", "pubmodel"),
        source=Experiment.Source.REPORTED,
        is_published=True,
        published_figures=PUBLISHED,
    )

    before = every_figure(client, a, b, c)
    assert_agree(before)
    assert before["experiment page1"][a.pk] != before["experiment page"][a.pk] or (
        before["compare paired1"] != before["compare paired"]
    ), "the clean subset should differ somewhere for this test to say anything"
    assert before["leaderboard page"][c.pk] == "37.5 ± 6.2"
    # Published figures give no seed count: empty in the table and in every export.
    assert {before[k][c.pk] for k in before if "seeds" in k} == {""}
    assert before["leaderboard csv seeds"][a.pk] == "3"

    # A reviewer disqualifies one of A's medals; the worker recomputes A's figures.
    medalled = GradeReport.objects.filter(
        experiment=a, is_current=True, gold_medal=True
    ).first() or (GradeReport.objects.filter(experiment=a, is_current=True, any_medal=True).first())
    assert medalled is not None, "the fixture needs a medal to disqualify"
    check = integrity.run_check_of(medalled.run)
    integrity.run_check_decide(check.pk, decision="disqualified", reason="copied", user=reviewer)
    experiment_aggregate_refresh(a.pk)

    after = every_figure(client, a, b, c)
    assert_agree(after)
    # The disqualification moved A's figure, by one medal of 4 competitions over 3 seeds.
    assert float(after["compare paired"][a.pk]) == pytest.approx(
        float(before["compare paired"][a.pk]) - 100 / 12, abs=0.051
    )
