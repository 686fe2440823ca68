"""What MLE-bench's ``prepare.py`` writes for each competition, as data.

``graders/data/mlebench_layouts.yaml`` records, per competition, the private answers file
and the public sample submission that MLE-bench's ``prepare.py`` writes: columns in order
with the dtype pandas reads back, and the answers columns its ``grade.py`` reads. Graders
must grade answers in exactly that layout (extra columns included); the tests build their
synthetic answers from it. ``graders/LAYOUTS.md`` is this table for people, rendered by
``python -m graders.layouts > graders/LAYOUTS.md``.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

LAYOUTS_FILE = Path(__file__).parent / "data" / "mlebench_layouts.yaml"


@functools.cache
def load_layouts() -> dict[str, dict]:
    """Competition id -> its layout entry (answers_file, answers_columns, sample_file, ...)."""
    import yaml

    entries = yaml.safe_load(LAYOUTS_FILE.read_text(encoding="utf-8"))
    return {entry["id"]: entry for entry in entries}


def column_names(columns) -> list[str]:
    """The names of a layout's ``[[name, dtype, note?], ...]`` list ([] when not a table)."""
    return [c[0] for c in columns] if isinstance(columns, list) else []


def _columns_cell(columns) -> str:
    if not isinstance(columns, list):
        return str(columns)
    return ", ".join(f"`{c[0]}` {c[1]}" for c in columns)


def render_markdown() -> str:
    """The layouts as a markdown table, one row per competition."""
    lines = [
        "# Answers and sample submissions as MLE-bench's prepare.py writes them",
        "",
        "Generated from `graders/data/mlebench_layouts.yaml` by "
        "`python -m graders.layouts > graders/LAYOUTS.md`; edit the YAML, not this file.",
        "Columns are in file order with the dtype pandas reads back. *Differed*: mleboard's",
        "test data had another answers layout before this audit; *broke*: the grader refused",
        "correct submissions on the real layout (fixed since).",
        "",
        "| competition | answers file | answers columns | sample file | sample columns "
        "| grade.py reads | differed | broke |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cid, e in sorted(load_layouts().items(), key=lambda kv: kv[0].lower()):
        cells = [
            cid,
            f"`{e['answers_file']}` ({e['answers_format']})",
            _columns_cell(e["answers_columns"]),
            f"`{e['sample_file']}`",
            _columns_cell(e["sample_columns"]),
            str(e["grade_uses"]),
            "yes" if e["synthetic_layout_differed"] else "",
            "yes" if e["grader_broke_on_real_layout"] else "",
        ]
        lines.append(
            "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render_markdown())
