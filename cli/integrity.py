"""``mleboard similarity`` and ``mleboard integrity``: MLE-bench's plagiarism and
rule-violation checks on files (see ``benchmark.integrity``).

``similarity`` compares every code file under ``--submissions`` with every one under
``--references`` as Dolos does and prints the pairs at or above ``--threshold``
(``--max-fingerprint-percentage`` and ``--ignore`` are Dolos' ``-M`` and ``-i``; figures as
Dolos gives them for every file in name order; a file in both folders is one file).
``integrity`` prints the rule-violation detectors' findings on a run folder. More in
docs/integrity.md.

Exit codes: 0 (also when something was found: the output says what), 2 a usage problem.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cli import CommandError

CODE_SUFFIXES = (".py", ".ipynb", ".r")


def register(subparsers) -> None:
    """Add ``similarity`` and ``integrity`` to the ``mleboard`` parser."""
    sim = subparsers.add_parser(
        "similarity",
        help="code similarity of submissions to reference code, as Dolos measures it",
        description="Compare each code file (.py, .ipynb, .R) under --submissions with each "
        "under --references (Dolos' tokens, k-grams of 23, winnowing window 17) and print "
        "the pairs whose similarity is at least --threshold, with the matched line ranges.",
    )
    sim.add_argument("--references", required=True, type=Path, metavar="DIR")
    sim.add_argument("--submissions", required=True, type=Path, metavar="DIR")
    sim.add_argument("--threshold", type=float, default=0.6, help="default: 0.6")
    sim.add_argument(
        "--max-fingerprint-percentage",
        type=float,
        metavar="FRACTION",
        help="ignore fingerprints found in more than this fraction (above 0, at most 1) of "
        "all the files compared, as Dolos' maxFingerprintPercentage: code most files share "
        "(a scaffold's boilerplate) then says nothing. Needs three files or more.",
    )
    sim.add_argument(
        "--ignore",
        type=Path,
        metavar="FILE",
        help="template code whose fingerprints are ignored (Dolos' ignored file)",
    )
    sim.add_argument("--format", choices=("json", "text"), default="json")
    sim.set_defaults(handler=cmd_similarity)

    check = subparsers.add_parser(
        "integrity",
        help="rule-violation checks on a run folder: hand-written submission, LLM use, "
        "unauthorized resources",
        description="Run MLE-bench's rule-violation checks over RUN_DIR/code and "
        "RUN_DIR/logs and print each finding (check, file, line, excerpt).",
    )
    check.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    check.add_argument("--format", choices=("json", "text"), default="text")
    check.set_defaults(handler=cmd_integrity)


def _code_files(root: Path) -> tuple[dict[str, str], dict[str, Path]]:
    """The code files under ``root`` by name (their path under it): their texts, and
    the files they are (resolved paths), to tell a file given on both sides."""
    if not root.is_dir():
        raise CommandError(f"{root} is not a folder")
    files, where = {}, {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix.lower() in CODE_SUFFIXES:
            name = path.relative_to(root).as_posix()
            try:
                files[name] = path.read_text(encoding="utf-8", errors="replace")
            except OSError as error:
                raise CommandError(f"cannot read {path}: {error.strerror}") from None
            where[name] = path.resolve()
    return files, where


def _template(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    if not path.is_file() or path.suffix.lower() not in CODE_SUFFIXES:
        raise CommandError(f"--ignore {path}: not a .py, .ipynb or .R file")
    try:
        return {path.name: path.read_text(encoding="utf-8", errors="replace")}
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None


def _ignored(args, files: list[tuple[str, str]]) -> frozenset[int]:
    """The hashes Dolos would ignore with ``-M`` over ``files`` (every file compared,
    each once) and ``-i``."""
    from benchmark.integrity.common_code import (
        FingerprintShareRefused,
        check_fraction,
        shared_code_filter,
    )
    from benchmark.integrity.winnowing import file_fingerprints

    fraction = args.max_fingerprint_percentage
    if fraction is not None:
        try:
            check_fraction(fraction)
        except FingerprintShareRefused as error:
            raise CommandError(f"--max-fingerprint-percentage: {error}") from None
        if len(files) < 3:
            raise CommandError(
                "--max-fingerprint-percentage needs three files or more: with two, every "
                "shared fingerprint is in all of them (Dolos refuses it too)"
            )
    documents = [[file_fingerprints(name, text)] for name, text in files]
    return shared_code_filter(
        documents, fraction, _template(args.ignore), minimum_to_keep_pairs=False
    ).ignored


def cmd_similarity(args: argparse.Namespace) -> int:
    from benchmark.integrity.winnowing import compare_corpus

    if not 0.0 <= args.threshold <= 1.0:
        raise CommandError("--threshold must be between 0 and 1")
    references, ref_files = _code_files(args.references)
    submissions, sub_files = _code_files(args.submissions)
    as_submission = {path: name for name, path in sub_files.items()}
    # Dolos' order: every file by name (a submission before a reference of the same
    # name), a file on both sides by its submission's name
    ref_order = {name: as_submission.get(path, name) for name, path in ref_files.items()}
    both_sides = set(as_submission) & set(ref_files.values())

    def left(sub: str, ref: str) -> bool:
        return sub <= ref_order[ref]

    def keep(sub: str, ref: str) -> bool:
        if sub_files[sub] == ref_files[ref]:
            return False  # a file with itself
        # two files on both sides come as (a, b) and (b, a): once, Dolos' way round
        return not {sub_files[sub], ref_files[ref]} <= both_sides or left(sub, ref)

    distinct = {sub_files[name]: (name, text) for name, text in submissions.items()}
    for name, text in references.items():
        distinct.setdefault(ref_files[name], (name, text))
    ignored = _ignored(args, list(distinct.values()))
    matches = compare_corpus(
        submissions, references, args.threshold, ignored=ignored, left=left, keep=keep
    )
    if args.format == "json":
        print(json.dumps([m.as_dict() for m in matches], indent=2))
        return 0
    for match in matches:
        ranges = ", ".join(
            f"{f.a_lines[0]}-{f.a_lines[1]}~{f.b_lines[0]}-{f.b_lines[1]}"
            for f in match.fragments[:8]
        )
        more = f" (+{len(match.fragments) - 8})" if len(match.fragments) > 8 else ""
        print(f"{match.similarity:.3f}  {match.submission}  {match.reference}  {ranges}{more}")
    print(
        f"{len(matches)} pairs at or above {args.threshold} "
        f"({len(submissions)} submissions x {len(references)} references)"
    )
    return 0


def cmd_integrity(args: argparse.Namespace) -> int:
    from benchmark.integrity.detectors import scan_run

    if not args.run_dir.is_dir():
        raise CommandError(f"{args.run_dir} is not a folder")
    findings = scan_run(args.run_dir)
    if args.format == "json":
        print(json.dumps([f.as_dict() for f in findings], indent=2))
        return 0
    for finding in findings:
        print(f"{finding.check}  {finding.file}:{finding.line}  {finding.detail}")
        print(f"    {finding.excerpt}")
    print(f"{len(findings)} findings")
    return 0
