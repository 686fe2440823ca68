"""``mleboard``'s parser and its own subcommands: ``catalogue``, ``rank``, ``aggregate``,
``published``. ``cli.grading`` and ``cli.runs`` add theirs. A subcommand sets ``handler``
with ``set_defaults``: a callable taking the parsed arguments and returning the exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from benchmark.splits import split_names_text
from cli import CommandError, agent_submit, configuration, grading, integrity, runs
from cli.submit import interface as submit


def build_parser() -> argparse.ArgumentParser:
    """The full ``mleboard`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="mleboard",
        description="mleboard: MLE-bench competitions, medal rules, grading and results.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_catalogue(subparsers)
    _add_rank(subparsers)
    _add_aggregate(subparsers)
    _add_published(subparsers)
    grading.register(subparsers)
    runs.register(subparsers)
    integrity.register(subparsers)
    submit.register(subparsers)
    agent_submit.register(subparsers)
    configuration.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mleboard`` with ``argv`` (default: sys.argv[1:]); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        code = handler(args)
    except CommandError as error:
        print(f"mleboard {args.command}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `mleboard catalogue | head`
        return 0
    return 0 if code is None else int(code)


# ---------------------------------------------------------------- catalogue


def _add_catalogue(subparsers) -> None:
    parser = subparsers.add_parser(
        "catalogue",
        help="list the competitions (facts: metric, direction, category, splits)",
        description="List the catalogue's competitions, optionally one split only.",
    )
    parser.add_argument(
        "--split",
        help=f"{split_names_text()}; default: every MLE-bench competition (75 + 7 dev)",
    )
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument(
        "--include-demo", action="store_true", help="also list mleboard's demo competitions"
    )
    parser.set_defaults(handler=cmd_catalogue)


def cmd_catalogue(args: argparse.Namespace) -> int:
    """Print the catalogue (or one split of it) as a table or JSON."""
    from dataclasses import asdict

    from benchmark.catalogue import competitions_in_split, load_catalogue
    from benchmark.splits import UnknownSplit

    if args.split:
        try:
            competitions = competitions_in_split(args.split)
        except UnknownSplit as error:
            raise CommandError(str(error)) from None
    else:
        competitions = list(load_catalogue(include_demo=args.include_demo).values())
    if args.format == "json":
        # The deadline (a date) as its ISO text, as the API gives it.
        print(json.dumps([asdict(facts) for facts in competitions], indent=2, default=str))
        return 0
    rows = [
        (
            f.id,
            f.complexity,
            f.category,
            f.metric,
            "lower" if f.lower_is_better else "higher",
            "yes" if f.awards_medals else "no",
            ",".join(f.splits),
        )
        for f in competitions
    ]
    header = ("id", "complexity", "category", "metric", "better", "medals", "splits")
    print(_table(header, rows))
    print(f"{len(rows)} competitions")
    return 0


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [header, ["-" * width for width in widths], *rows]
    return "\n".join(
        "  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


# ---------------------------------------------------------------- rank


def _add_rank(subparsers) -> None:
    parser = subparsers.add_parser(
        "rank",
        help="place scores on a private leaderboard: medals as MLE-bench gives them",
        description="Place scores on a human private leaderboard and print, as JSON, "
        "MLE-bench's medal keys and the score's percentile (a list when several scores).",
    )
    parser.add_argument(
        "--leaderboard",
        required=True,
        help="MLE-bench's leaderboard.csv, or Kaggle's leaderboard CSV or zip",
    )
    parser.add_argument("--score", required=True, nargs="+", type=float, metavar="X")
    direction = parser.add_mutually_exclusive_group()
    direction.add_argument("--lower-is-better", action="store_true")
    direction.add_argument(
        "--competition", metavar="ID", help="take the direction from the catalogue"
    )
    parser.set_defaults(handler=cmd_rank)


def cmd_rank(args: argparse.Namespace) -> int:
    """Print MLE-bench's rank of each score (JSON); the direction as the flags say."""
    from pathlib import Path

    from benchmark.catalogue import UnknownCompetition, get_competition
    from benchmark.leaderboard import LeaderboardError, read_leaderboard
    from benchmark.medals import leaderboard_percentile, rank_score

    lower_is_better = True if args.lower_is_better else None
    if args.competition:
        try:
            facts = get_competition(args.competition)
        except UnknownCompetition as error:
            raise CommandError(str(error)) from None
        lower_is_better = facts.lower_is_better
        if not facts.awards_medals:
            print(
                f"note: Kaggle awarded no medals in {facts.id}; MLE-bench still ranks "
                "against its medal thresholds",
                file=sys.stderr,
            )
    try:
        leaderboard = read_leaderboard(Path(args.leaderboard), lower_is_better=lower_is_better)
    except LeaderboardError as error:
        raise CommandError(str(error)) from None
    for warning in leaderboard.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    thresholds = leaderboard.thresholds()
    results = []
    for score in args.score:
        entry = rank_score(score, thresholds)
        entry["percentile"] = leaderboard_percentile(
            score, leaderboard.scores, leaderboard.lower_is_better
        )
        results.append(entry)
    print(json.dumps(results[0] if len(results) == 1 else results, indent=2))
    return 0


# ---------------------------------------------------------------- published


def _add_published(subparsers) -> None:
    parser = subparsers.add_parser(
        "published",
        help="read MLE-bench's README leaderboard into published entries (YAML)",
        description="Read the leaderboard table of MLE-bench's README.md (figures, running "
        "time, date, disclosures, footnotes) and print it as mleboard's published_results "
        "YAML, or write it to --output.",
    )
    parser.add_argument("readme", help="MLE-bench's README.md")
    parser.add_argument("--output", help="write here instead of stdout")
    parser.set_defaults(handler=cmd_published)


def cmd_published(args: argparse.Namespace) -> int:
    from pathlib import Path

    from benchmark.published import PublishedTableError, entries_to_yaml, read_readme_leaderboard

    try:
        text = Path(args.readme).read_text(encoding="utf-8")
        entries = read_readme_leaderboard(text)
    except OSError as error:
        raise CommandError(f"cannot read {args.readme}: {error.strerror}") from None
    except (PublishedTableError, UnicodeDecodeError) as error:
        raise CommandError(f"{args.readme}: {error}") from None
    out = entries_to_yaml(entries, source="MLE-bench README.md, section Leaderboard")
    if args.output:
        Path(args.output).write_text(out, encoding="utf-8")
        print(f"{len(entries)} published entries written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(out)
    return 0


# ---------------------------------------------------------------- aggregate


def _add_aggregate(subparsers) -> None:
    parser = subparsers.add_parser(
        "aggregate",
        help="MLE-bench's aggregate figures of grading reports, plus mleboard's breakdowns",
        description="Aggregate grading-report JSON files like MLE-bench's "
        "experiments/aggregate_grading_reports.py (same figures, same names), then per "
        "category, per complexity, the funnel and pass@k.",
    )
    parser.add_argument("--reports", required=True, nargs="+", metavar="FILE")
    parser.add_argument("--split", default="all", help=split_names_text())
    parser.add_argument(
        "--pad-missing",
        action="store_true",
        help="count missing runs as runs without a submission instead of dropping "
        "incomplete seeds (MLE-bench's --pad-missing)",
    )
    parser.add_argument(
        "--seeding",
        choices=("auto", "explicit", "positional"),
        default="auto",
        help="explicit: seeds from each report's `seed`; positional: MLE-bench's pairing "
        "by order; auto (default): explicit when every report has a seed",
    )
    parser.add_argument(
        "--num-seeds", type=int, default=-1, help="use the first N seeds (default: all)"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(handler=cmd_aggregate)


def cmd_aggregate(args: argparse.Namespace) -> int:
    """Print the aggregate of the reports: MLE-bench's figures first, then ours."""
    from benchmark.aggregate import AggregationError, aggregate, read_reports_in_mlebench_order
    from benchmark.reports import GradingReportError
    from benchmark.splits import UnknownSplit

    try:
        reports = read_reports_in_mlebench_order(args.reports)
        result = aggregate(
            reports,
            split=args.split,
            pad_missing=args.pad_missing,
            seeding=args.seeding,
            num_seeds=args.num_seeds,
        )
    except (AggregationError, GradingReportError, UnknownSplit) as error:
        raise CommandError(str(error)) from None
    for warning in result["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(result, indent=2))
    else:
        from benchmark.aggregate_text import format_aggregate

        print(format_aggregate(result))
    return 0
