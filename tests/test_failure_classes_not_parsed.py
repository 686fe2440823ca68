"""Why a submission is invalid is a class the graders return (``graders.ErrorClass``,
stored as ``GradeReport.error_class``), never read back out of the message: messages are
for people and change with their wording. This rule bans matching on an error's text in
``webapp/`` (a lookup like ``error__icontains=`` or ``"..." in report.error``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOOKUP = re.compile(r"\berror__i?(contains|startswith|endswith|regex|exact)\b")


def _offences(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = [
        f"{path.relative_to(ROOT)}: a lookup on an error's text" for _ in LOOKUP.finditer(text)
    ]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Compare) and any(
            isinstance(op, ast.In | ast.NotIn) for op in node.ops
        ):
            for side in node.comparators:
                if isinstance(side, ast.Attribute) and side.attr == "error":
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: `... in x.error`")
    return found


def test_webapp_never_classifies_errors_by_their_text():
    offences = [o for path in sorted((ROOT / "webapp").rglob("*.py")) for o in _offences(path)]
    assert not offences, (
        "classify invalid submissions with the class the grader returns (error_class), "
        "not by matching the message:\n" + "\n".join(offences)
    )
