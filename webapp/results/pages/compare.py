"""What the compare page shows beside the comparison: experiments that differ in one
condition (their twins), and original against obfuscated descriptions."""

from benchmark.splits import SPLIT_PREFERENCE, split_label
from webapp.results.models import Experiment

# The conditions under which one agent may be run again and compared with itself (the
# paper's Table 3 for hardware and time, Table 4 for descriptions): (field, label).
TWIN_CONDITIONS = (
    ("hardware", "hardware"),
    ("runtime_hours", "time limit"),
    ("obfuscated_descriptions", "descriptions"),
)


def condition_twins(experiments: list[Experiment]) -> list[dict]:
    """The experiments compared that run the same agent, with the same internet access
    and test feedback, under conditions that differ only in ``TWIN_CONDITIONS``: one group
    per agent, ``{"agent", "varies": [labels], "members": [experiments]}``, members in
    the order given."""
    groups: dict[tuple, list[Experiment]] = {}
    for e in experiments:
        groups.setdefault((e.agent_id, e.internet_access, e.test_feedback), []).append(e)
    out = []
    for members in groups.values():
        varies = [
            label
            for field, label in TWIN_CONDITIONS
            if len({getattr(e, field) for e in members}) > 1
        ]
        if len(members) > 1 and varies:
            out.append({"agent": str(members[0].agent), "varies": varies, "members": members})
    return out


def condition_text(experiment: Experiment) -> str:
    """The experiment's conditions as Table 3 names them: hardware, time, descriptions."""
    parts = [experiment.hardware or "hardware not stated"]
    hours = experiment.runtime_hours
    parts.append("time not stated" if hours is None else f"{hours:g} h")
    parts.append("obfuscated descriptions" if experiment.obfuscated_descriptions else "original")
    return " · ".join(parts)


def twins_table(experiments: list[Experiment], by_split: dict) -> list[dict]:
    """The paper's Table 3 for the experiments compared: per group of ``condition_twins``,
    each member's conditions and its Any Medal % per split the group has in common, as
    mean ± SEM with the 95% interval (mean ± 1.96·SEM, clipped to 0-100)."""
    from webapp.core.formatting import shown_interval

    table = []
    for group in condition_twins(experiments):
        splits = [s for s in SPLIT_PREFERENCE if all(s in by_split[e.pk] for e in group["members"])]
        rows = []
        for e in group["members"]:
            cells = []
            for split in splits:
                value = by_split[e.pk][split]
                margin = 1.96 * value["standard_error"]
                cells.append(
                    {
                        **value,
                        "interval": shown_interval(
                            {"ci_lower": value["mean"] - margin, "ci_upper": value["mean"] + margin}
                        ),
                    }
                )
            rows.append({"experiment": e, "conditions": condition_text(e), "cells": cells})

        table.append({**group, "splits": [split_label(s) for s in splits], "rows": rows})
    return table


def description_pairs(experiments: list[Experiment], by_split: dict) -> list[dict]:
    """The paper's Table 4 for the experiments compared: for each agent present on both
    original and obfuscated descriptions (``condition_twins`` differing in descriptions),
    Any Medal % on each per common split and the difference (obfuscated − original). An
    original is paired with an obfuscated twin on the same hardware and time when there
    is one."""
    rows = []
    for group in condition_twins(experiments):
        if "descriptions" not in group["varies"]:
            continue
        twins = [e for e in group["members"] if e.obfuscated_descriptions]
        for original in (e for e in group["members"] if not e.obfuscated_descriptions):
            twin = next(
                (
                    e
                    for e in twins
                    if (e.hardware, e.runtime_hours) == (original.hardware, original.runtime_hours)
                ),
                twins[0],
            )
            for split in SPLIT_PREFERENCE:
                a, b = by_split[original.pk].get(split), by_split[twin.pk].get(split)
                if a and b:
                    rows.append(
                        {
                            "agent": str(original.agent),
                            "split": split,
                            "original": a,
                            "obfuscated": b,
                            "difference": b["mean"] - a["mean"],
                        }
                    )
    return rows


def class_warning(chosen) -> str:
    """A sentence when the experiments compared are not in one comparability class (their
    figures were made under different conditions); "" when they are."""
    classes = {e.comparability_class for e in chosen}
    if len(classes) < 2:
        return ""

    def said(e) -> str:
        reasons = (e.comparability or {}).get("reasons") or []
        return f"{e.name} is {e.comparability_class}" + (
            f" ({', '.join(reasons)})" if reasons else ""
        )

    return (
        "These experiments ran under different conditions, so their figures are not "
        "directly comparable: " + "; ".join(said(e) for e in chosen) + "."
    )
