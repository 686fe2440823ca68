"""The README's configuration table, rendered from the declaration (``config.variables``).

``mleboard config --write README.md`` replaces the part of the README between the two
markers below with ``render_table()``; ``tests/test_configuration.py`` fails when they
differ. Internal variables are not listed.
"""

from __future__ import annotations

from pathlib import Path

from config.variables import SECTIONS, VARIABLES

BEGIN = (
    "<!-- configuration table: rendered from config/variables.py by "
    "`mleboard config --write README.md`; edit it there -->"
)
END = "<!-- end of the configuration table -->"


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


def current_block(readme: str) -> str | None:
    """The README's block between the markers (markers included), or None without them."""
    start = readme.find(BEGIN)
    end = readme.find(END, start)
    if start < 0 or end < 0:
        return None
    return readme[start : end + len(END)]


def rewrite(path: Path) -> bool:
    """Write the rendered table into the README at ``path``; True when it changed.
    Raises ``ValueError`` when the README has no markers."""
    text = path.read_text(encoding="utf-8")
    old = current_block(text)
    if old is None:
        raise ValueError(f"{path} has no configuration table markers ({BEGIN!r} ... {END!r})")
    new = text.replace(old, block())
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text
