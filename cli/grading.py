"""``mleboard grade``, ``grade-sample`` and ``validate``: MLE-bench's grading commands.

``grade`` reads MLE-bench's ``submissions.jsonl`` and writes
``<output-dir>/<timestamp>_grading_report.json`` exactly as ``mlebench grade`` does;
``grade-sample`` prints one report; ``validate`` says whether a submission is well formed
(never its score).

Exit codes: 0 success (``validate``: valid), 1 ``validate``: invalid, 2 a usage or
infrastructure problem the message explains (unknown competition, answers not prepared).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from cli import CommandError
from config import env, is_set

DATA_DIR_ENV = "MLEBOARD_DATA_DIR"


def register(subparsers) -> None:
    """Add the grading subcommands to the ``mleboard`` parser."""
    grade = subparsers.add_parser(
        "grade",
        help="grade the submissions listed in a JSONL file into an MLE-bench grading report",
        description="Grade every line of a submissions JSONL file (competition_id, "
        "submission_path, optional seed) and write <timestamp>_grading_report.json in "
        "MLE-bench's format.",
    )
    grade.add_argument("--submission", required=True, type=Path, help="submissions.jsonl")
    grade.add_argument("--output-dir", required=True, type=Path)
    _data_arguments(grade)
    grade.set_defaults(handler=cmd_grade)

    sample = subparsers.add_parser(
        "grade-sample",
        help="grade one submission CSV and print its report as JSON",
        description="Grade one submission CSV and print MLE-bench's report (plus `error` "
        "when the submission is invalid).",
    )
    sample.add_argument("submission", type=Path)
    sample.add_argument("competition_id")
    _data_arguments(sample)
    sample.set_defaults(handler=cmd_grade_sample)

    validate = subparsers.add_parser(
        "validate",
        help="say whether a submission is well formed (exit 0) or why not (exit 1)",
        description="Check a submission CSV against the competition's rules without "
        "revealing a score.",
    )
    validate.add_argument("submission", type=Path)
    validate.add_argument("competition_id")
    _data_arguments(validate, leaderboard=False)
    validate.set_defaults(handler=cmd_validate)


def _data_arguments(parser: argparse.ArgumentParser, leaderboard: bool = True) -> None:
    default = env(DATA_DIR_ENV) if is_set(DATA_DIR_ENV) else None
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=default,
        required=default is None,
        help=f"MLE-bench's prepared data folder (default: ${DATA_DIR_ENV})",
    )
    if leaderboard:
        parser.add_argument(
            "--mlebench-dir",
            type=Path,
            help="an MLE-bench checkout, for competitions/<id>/leaderboard.csv",
        )


def _compact_memory() -> None:
    from graders.reading import use_compact_memory

    use_compact_memory()


def _grade_one(path, competition_id, args, leaderboards: dict, seed=None):
    """One report; leaderboards are read once per competition, notes go to stderr."""
    from benchmark.catalogue import UnknownCompetition as NotCatalogued
    from benchmark.grading import grade_submission_run, load_private_leaderboard
    from graders import AnswersMissing, GraderError, UnknownCompetition

    if competition_id not in leaderboards:
        try:
            board, note = load_private_leaderboard(
                competition_id, data_dir=args.data_dir, mlebench_dir=args.mlebench_dir
            )
        except NotCatalogued as error:
            raise CommandError(str(error)) from None
        if note:
            print(f"note: {note}", file=sys.stderr)
        leaderboards[competition_id] = board
    try:
        return grade_submission_run(
            path, competition_id, args.data_dir, leaderboards[competition_id], seed=seed
        )
    except (UnknownCompetition, NotCatalogued) as error:
        raise CommandError(str(error)) from None
    except AnswersMissing as error:
        raise CommandError(str(error)) from None
    except GraderError as error:
        raise CommandError(f"cannot grade {competition_id}: {error}") from None


def cmd_grade_sample(args: argparse.Namespace) -> int:
    """Print one submission's report (MLE-bench's keys plus the error when invalid)."""
    _compact_memory()
    report = _grade_one(args.submission, args.competition_id, args, {})
    print(json.dumps(report.to_dict(), indent=4))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Print whether the submission is valid; exit 0 if so, 1 if not."""
    _compact_memory()
    from graders import AnswersMissing, GraderError, UnknownCompetition, validate_submission

    try:
        result = validate_submission(args.submission, args.competition_id, args.data_dir)
    except UnknownCompetition as error:
        raise CommandError(str(error)) from None
    except (AnswersMissing, GraderError) as error:
        raise CommandError(str(error)) from None
    if result.valid:
        print(result.message)
        return 0
    print(f"Submission invalid: {result.message}")
    return 1


def cmd_grade(args: argparse.Namespace) -> int:
    """Grade a submissions JSONL into ``<output-dir>/<timestamp>_grading_report.json``."""
    from benchmark.reports import grading_report_dict, write_grading_report

    entries = _read_submissions(args.submission)
    _compact_memory()
    leaderboards: dict = {}
    reports = []
    progress = _Progress(len(entries), "Grading submissions")
    for entry in entries:
        path = Path(str(entry["submission_path"]))
        reports.append(
            _grade_one(path, entry["competition_id"], args, leaderboards, seed=entry.get("seed"))
        )
        progress.advance()
    progress.close()
    timestamp = time.strftime("%Y-%m-%dT%H-%M-%S-%Z", time.gmtime())
    output = args.output_dir / f"{timestamp}_grading_report.json"
    write_grading_report(output, reports)
    summary = {k: v for k, v in grading_report_dict(reports).items() if k != "competition_reports"}
    print(json.dumps(summary, indent=4))
    print(f"Saved grading report to {output}", file=sys.stderr)
    return 0


def _read_submissions(path: Path) -> list[dict]:
    """JSONL entries; blank and commented-out (# or //) lines are skipped, as in MLE-bench."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror or error}") from None
    entries = []
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("//"):
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as error:
            raise CommandError(f"{path}:{number}: not valid JSON ({error.msg})") from None
        if not isinstance(entry, dict) or not {"competition_id", "submission_path"} <= set(entry):
            raise CommandError(
                f"{path}:{number}: each line needs competition_id and submission_path"
            )
        seed = entry.get("seed")
        if seed is not None and not isinstance(seed, int):
            raise CommandError(f"{path}:{number}: seed must be an integer")
        entries.append(entry)
    return entries


class _Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.label, self.done = total, label, 0
        self.enabled = sys.stderr.isatty() and total > 0
        self._draw()

    def advance(self) -> None:
        self.done += 1
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        width = 30
        filled = int(width * self.done / self.total)
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(f"\r{self.label}: [{bar}] {self.done}/{self.total}")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()
