"""``mleboard config``: the configuration table (rendered from ``config.variables``), written
into the docs' configuration page, and a check of the variables set in this environment."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "config",
        help="print the configuration table, write it into its docs page, or check the environment",
        description="Print the table of the environment variables mleboard reads (from their "
        "one declaration, config/variables.py); --write puts it into a page between its "
        "markers (docs/configuration.md); --check reports every variable set here to a value mleboard refuses.",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--write", metavar="PAGE", type=Path, help="rewrite PAGE's table (docs/configuration.md)"
    )
    mode.add_argument(
        "--check", action="store_true", help="check the variables set in this environment"
    )
    parser.set_defaults(handler=cmd_config)


def cmd_config(args: argparse.Namespace) -> int:
    from config import check_environment
    from config.reference import render_table, rewrite

    if args.check:
        problems = check_environment()
        for problem in problems:
            print(problem, file=sys.stderr)
        print("configuration: " + (f"{len(problems)} problem(s)" if problems else "ok"))
        return 1 if problems else 0
    if args.write:
        try:
            changed = rewrite(args.write)
        except (OSError, ValueError) as exc:
            print(f"mleboard config: error: {exc}", file=sys.stderr)
            return 2
        print(f"{args.write}: {'updated' if changed else 'already current'}")
        return 0
    sys.stdout.write(render_table())
    return 0
