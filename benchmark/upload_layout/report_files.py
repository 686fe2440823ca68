"""MLE-bench grading-report JSON files (``total_*`` counts and ``competition_reports``).

One file is one run group, taken as reported, not graded here. Its seeds are the ones
its reports carry, else the uploader's, else the next unused ones in file-name order.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter, defaultdict
from pathlib import Path

from benchmark.reports import CompetitionReport, GradingReportError, parse_grading_report
from benchmark.upload_layout.contents import ReportedGroup
from benchmark.upload_tree import UploadLayoutError, UploadTree, check_seed


def is_grading_report(tree: UploadTree, rel: str) -> bool:
    """True when the start of ``rel`` looks like a grading report."""
    head = tree.head(rel).lstrip()
    if head.startswith(b"{"):
        return b'"competition_reports"' in head or b'"total_runs"' in head
    return head.startswith(b"[") and b'"submission_exists"' in head


def read_reports(
    tree: UploadTree,
    sources: list[str],
    known: set[str],
    seeds: dict[str, int] | None,
    warnings: list[str],
) -> tuple[list[ReportedGroup], list[str]]:
    """The reports of ``sources``, one group per seed; or none, and the unknown competitions."""
    parsed: list[tuple[str, list[CompetitionReport]]] = []
    for rel in sources:
        try:
            data = json.loads(tree.path(rel).read_text(encoding="utf-8"))
            parsed.append((rel, parse_grading_report(data, name=rel)))
        except (ValueError, UnicodeDecodeError, RecursionError) as error:
            if isinstance(error, GradingReportError):
                raise UploadLayoutError(str(error)) from None
            raise UploadLayoutError(f"{rel} is not valid JSON: {error}") from None
    unknown = [r.competition_id for _rel, reports in parsed for r in reports]
    unknown = [cid for cid in unknown if cid not in known]
    if unknown:
        return [], unknown
    explicit: dict[str, list[tuple[int, CompetitionReport]]] = {}
    positional: list[tuple[str, list[CompetitionReport]]] = []
    for rel, reports in parsed:
        stem, name = Path(rel).stem, Path(rel).name
        given = next((seeds[k] for k in (stem, name) if seeds and k in seeds), None)
        if reports and all(r.seed is not None for r in reports):
            explicit[rel] = [(check_seed(r.seed, f"a seed in {rel}"), r) for r in reports]
        elif given is not None:
            base = check_seed(given, f"the seed of {rel}")
            explicit[rel] = _by_position(rel, reports, base, warnings)
        else:
            positional.append((rel, reports))
    used = {seed for pairs in explicit.values() for seed, _r in pairs}
    following = 0
    for rel, reports in positional:  # files in name order take the next unused seeds
        width = max(Counter(r.competition_id for r in reports).values(), default=1)
        while any(following + i in used for i in range(width)):
            following += 1
        explicit[rel] = _by_position(rel, reports, following, warnings)
        following += width
    groups = []
    for rel in sources:
        by_seed: dict[int, list[CompetitionReport]] = defaultdict(list)
        for seed, report in explicit[rel]:
            by_seed[seed].append(dataclasses.replace(report, seed=seed))
        groups += [ReportedGroup(Path(rel).stem, seed, by_seed[seed]) for seed in sorted(by_seed)]
    return groups, []


def _by_position(
    rel: str, reports: list[CompetitionReport], base: int, warnings: list[str]
) -> list[tuple[int, CompetitionReport]]:
    position: Counter[str] = Counter()
    pairs = []
    for report in reports:
        pairs.append((base + position[report.competition_id], report))
        position[report.competition_id] += 1
    if any(n > 1 for n in position.values()):
        warnings.append(
            f"{rel} holds several reports of the same competition; their seeds were "
            "assigned by position, in file order"
        )
    return pairs
