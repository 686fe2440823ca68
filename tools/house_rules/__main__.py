"""``python -m tools.house_rules [name ...]``: run the house rules (all, or those named)
over the tree after checking each against its examples; exit 1 on any problem."""

from __future__ import annotations

import sys

from tools.house_rules.engine import check
from tools.house_rules.rules import RULES


def main(names: list[str]) -> int:
    unknown = set(names) - {rule.name for rule in RULES}
    if unknown:
        print(f"no such rule: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    problems = [p for rule in RULES if not names or rule.name in names for p in check(rule)]
    for problem in problems:
        print(problem, file=sys.stderr)
    ran = len(names) if names else len(RULES)
    print(f"house rules: {ran} checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
