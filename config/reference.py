"""The configuration reference (``docs/configuration.md``), rendered from the declaration
(``config.variables``).

``mleboard config --write docs/configuration.md`` replaces the part of the page between the
two markers below with ``render_table()``; ``tests/config/test_configuration.py`` fails when they
differ. Internal variables are not listed.
"""

from __future__ import annotations

from pathlib import Path

from config.variables import SECTIONS, VARIABLES

BEGIN = (
    "<!-- configuration table: rendered from config/variables.py by "
    "`mleboard config --write docs/configuration.md`; edit it there -->"
)
END = "<!-- end of the configuration table -->"
# Where the table lives, relative to the checkout.
PAGE = "docs/configuration.md"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_table() -> str:
    """The documented variables as one Markdown table, section by section."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for section in SECTIONS:
        rows = [v for v in VARIABLES if v.section == section and not v.internal]
        if not rows:
            continue
        lines.append(f"| **{_cell(section)}** | | |")
        for variable in rows:
            lines.append(
                f"| `{variable.name}` | {_cell(variable.shown)} | {_cell(variable.meaning)} |"
            )
    return "\n".join(lines) + "\n"


def block() -> str:
    return f"{BEGIN}\n{render_table()}{END}"


def current_block(page: str) -> str | None:
    """The page's block between the markers (markers included), or None without them."""
    start = page.find(BEGIN)
    end = page.find(END, start)
    if start < 0 or end < 0:
        return None
    return page[start : end + len(END)]


def rewrite(path: Path) -> bool:
    """Write the rendered table into the page at ``path``; True when it changed.
    Raises ``ValueError`` when the page has no markers."""
    text = path.read_text(encoding="utf-8")
    old = current_block(text)
    if old is None:
        raise ValueError(
            f"{path} has no configuration table markers ({BEGIN!r} ... {END!r}); the table "
            f"lives in {PAGE}"
        )
    new = text.replace(old, block())
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text
