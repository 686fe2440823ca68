"""The text rendering of ``aggregate``'s result for ``mleboard aggregate``.

First exactly what MLE-bench's ``aggregate_grading_reports.py`` prints (its per-seed
``SeedMetrics(...)`` lines and its JSON of the averages), then mleboard's additions as
small tables: per category, per complexity, the funnel and pass@k.
"""

from __future__ import annotations

import json

from benchmark.aggregate import METRIC_NAMES, mlebench_summary

_GROUP_COLUMNS = (
    ("made submission", "submission_exists_percentage"),
    ("valid", "valid_submissions_percentage"),
    ("above median", "above_median_percentage"),
    ("gold", "gold_medal_percentage"),
    ("any medal", "any_medal_percentage"),
)


def format_mlebench_block(result: dict) -> str:
    """The lines MLE-bench's script prints for the same seeds."""
    lines = []
    for index, seed in enumerate(result["seeds"]):
        fields = ", ".join(f"{name}={seed['metrics'][name]!r}" for name in METRIC_NAMES)
        label = index + 1 if result["seeding"] == "positional" else seed["seed"]
        lines.append(f"Seed {label}: SeedMetrics({fields})")
    lines.append("------\nAverage metrics across seeds:")
    lines.append(json.dumps(mlebench_summary(result), indent=2))
    return "\n".join(lines)


def _mean_se(figure: dict) -> str:
    return f"{figure['mean']:.1f} ± {figure['standard_error']:.1f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def _group_table(title: str, groups: dict) -> str:
    header = [title, "n"] + [label for label, _ in _GROUP_COLUMNS]
    rows = [
        [name, str(group["num_competitions"])]
        + [_mean_se(group["metrics"][metric]) for _, metric in _GROUP_COLUMNS]
        for name, group in groups.items()
    ]
    return _table(header, rows)


def format_aggregate(result: dict) -> str:
    """MLE-bench's block, then per category, per complexity, the funnel and pass@k."""
    n = result["num_seeds_averaged"]
    parts = [
        format_mlebench_block(result),
        "",
        f"mleboard: split {result['split']}, {result['num_competitions_per_seed']} "
        f"competitions, {n} seed{'s' if n != 1 else ''} ({result['seeding']} seeding"
        f"{', missing runs padded' if result['pad_missing'] else ''}); "
        "% of competitions, mean ± standard error over seeds",
        "",
        "Per category",
        _group_table("category", result["by_category"]),
        "",
        "Per complexity",
        _group_table("complexity", result["by_complexity"]),
        "",
        "Funnel",
        _table(
            ["stage", "% of competitions", "95% CI", "runs"],
            [
                [
                    stage["label"],
                    _mean_se(stage),
                    f"{stage['ci_lower']:.1f} - {stage['ci_upper']:.1f}",
                    str(stage["runs"]),
                ]
                for stage in result["funnel"]
            ],
        ),
        "",
        f"pass@k ({result['pass_at_k']['metric'].replace('_', ' ')}, n = {n})",
        _table(
            ["k", "%"],
            [[str(v["k"]), f"{v['percentage']:.1f}"] for v in result["pass_at_k"]["values"]],
        ),
    ]
    return "\n".join(parts)
