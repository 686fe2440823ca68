"""MLE-bench's README leaderboard read into published entries."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from benchmark.published import (
    PublishedTableError,
    entries_from_yaml,
    entries_to_yaml,
    read_readme_leaderboard,
)
from tests.support.mlebench_material import readme_with_leaderboard

SHIPPED = Path(__file__).resolve().parents[2] / "benchmark" / "data" / "published_results.yaml"

README = """# MLE-bench

## Leaderboard

| Agent | LLM(s) used | Low == Lite (%) | Medium (%) | High (%) | All (%) | Running Time (hours) | Date | Known Leakage[^1] | Source Code Available | Grading Reports Available |
|-------|-------------|-----------------|------------|----------|---------|----------------------|------|---------------|----------------------|---------------------------|
| [Fast](https://fast.example) | Model-A | 90.91 ± 0.00     | 72.81 ± 0.88      | 71.11 ± 2.22     | 77.78 ± 0.44   |24| 2026-02-03 | [✓](https://github.com/openai/mle-bench/pull/118) |X|✓|
|[Evolve](https://evolve.example)<br>(Some Lab)|Model-B[^4]|80.30 ± 1.52[^3]|45.61 ±  0.88[^3] | 40.0 ± 0.00[^3]|61.33 ± 0.77[^3]|12|2026-01-05| - |X|✓|
| OpenHands | gpt-4o-2024-08-06 | 12.12 ± 1.52 | 1.75 ± 0.88 | 2.22 ± 2.22 | 4.89 ± 0.44 | 24 | 2024-10-08 | - | ✓ | ✓ |

[^1]: Some tasks are partially exploitable. We mark this column when authors
    note their agent uses test label leakage.
[^3]: Computed by padding incomplete seeds with failing scores.
[^4]: Primarily driven by Model-B, with some modules using Model-C.

### Producing Scores for the Leaderboard
"""


def test_readme_rows_figures_links_and_footnotes():
    fast, evolve, openhands = read_readme_leaderboard(README)
    assert (fast.agent, fast.agent_url, fast.llm) == ("Fast", "https://fast.example", "Model-A")
    assert {s: (f.mean, f.standard_error) for s, f in fast.figures.items()} == {
        "low": (90.91, 0.0),
        "medium": (72.81, 0.88),
        "high": (71.11, 2.22),
        "all": (77.78, 0.44),
    }
    assert fast.known_leakage and fast.known_leakage_url.endswith("/pull/118")
    assert fast.known_leakage_note.endswith("uses test label leakage.")  # continuation line
    assert not fast.source_available and fast.grading_reports_available
    assert fast.runtime_hours == 24 and fast.date == dt.date(2026, 2, 3)
    assert evolve.agent == "Evolve (Some Lab)" and evolve.runtime_hours == 12
    assert evolve.figures["medium"].mean == 45.61  # two spaces after ±
    assert evolve.figures["high"].footnotes == (
        "Computed by padding incomplete seeds with failing scores.",
    )
    assert evolve.notes == ("Primarily driven by Model-B, with some modules using Model-C.",)
    assert not evolve.known_leakage and evolve.known_leakage_note == ""
    assert openhands.agent_url == "" and openhands.source_available
    assert openhands.name == "OpenHands × gpt-4o-2024-08-06, 24 h (published)"


def test_names_tell_apart_one_agent_published_twice():
    entries = entries_from_yaml(SHIPPED.read_text(encoding="utf-8"))
    assert len({e.name for e in entries}) == len(entries)


def test_shipped_copy_round_trips_through_readme_markdown_and_yaml():
    shipped = entries_from_yaml(SHIPPED.read_text(encoding="utf-8"))
    assert len(shipped) == 26
    assert read_readme_leaderboard(readme_with_leaderboard(shipped)) == shipped
    assert entries_from_yaml(entries_to_yaml(shipped)) == shipped


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# MLE-bench\n\nNo table here.\n", "no '## Leaderboard' section"),
        ("## Leaderboard\n\n## Next\n| a |\n", "has no table"),
        (README.replace("90.91 ± 0.00", "90.91"), "is not 'mean ± SEM'"),
        (README.replace("| Medium (%) ", "| Middle (%) "), "no medium column"),
        (README.replace("2026-02-03", "Feb 3"), "is not YYYY-MM-DD"),
    ],
)
def test_unreadable_tables_say_what_is_wrong(text, message):
    with pytest.raises(PublishedTableError, match=message):
        read_readme_leaderboard(text)
