"""Why runs fail, as numbers (the MLE-bench paper's section 4 failure modes).

``failure_table`` counts, over an experiment's runs, each way a run goes wrong, and keeps
the runs behind every count so that a page can list them. A figure is counted only over
the runs for which it can be known (a run whose validation calls were not recorded is in
neither "never validated" nor its denominator), and says so with its ``of``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from graders.results import ERROR_CLASS_LABELS, ErrorClass

# A run that ended before this share of its time limit "stopped early".
EARLY_SHARE = 0.10

# Outcomes as the runner names them (``runner.spec.Outcome``), and the one an upload's
# run-group metadata gives for a run its harness failed (``"success": false``).
COMPLETED, FAILED = "completed", "failed"
TIMED_OUT, OUT_OF_MEMORY, HARNESS_ERROR = "timed_out", "out_of_memory", "harness_error"
AGENT_RAN = {COMPLETED, FAILED, TIMED_OUT, OUT_OF_MEMORY}


@dataclass(frozen=True)
class RunFacts:
    """What is known of one run; ``None`` for what is not."""

    key: Hashable  # how the page names the run (its id)
    outcome: str | None = None  # a runner outcome, or None (an upload that does not say)
    duration_s: float | None = None
    time_limit_s: float | None = None
    validation_calls: int | None = None  # None: not recorded
    submission_exists: bool = False
    valid_submission: bool = False
    error_class: str = ""  # ``graders.ErrorClass`` of an invalid or missing submission
    graded: bool = True
    # Whether the harness failed the run, when that alone is known (MLE-bench's run-group
    # metadata says ``success`` but not how the agent ended).
    harness_error: bool | None = None


# (key, label, what it means), in the order the table shows them.
MODES: tuple[tuple[str, str, str], ...] = (
    (
        "never_validated",
        "never called the validation server",
        "runs whose validation calls were recorded",
    ),
    (
        "validated_still_invalid",
        "validated, yet submitted something invalid",
        "runs that called the validation server",
    ),
    (
        "stopped_early",
        f"ended before {EARLY_SHARE:.0%} of the time limit",
        "runs with a time limit and a duration",
    ),
    ("out_of_memory", "hit the memory limit", "runs with a known outcome"),
    ("timed_out", "hit the time limit", "runs with a known outcome"),
    ("harness_error", "harness errors", "runs with a known outcome"),
    ("no_submission", "made no submission", "graded runs"),
    ("invalid", "submitted something invalid", "graded runs"),
)
# Invalid submissions by class, in this order (the paper's: columns, row count, ids,
# types, NaN; then the rest).
INVALID_CLASSES = (
    ErrorClass.COLUMNS,
    ErrorClass.ROW_COUNT,
    ErrorClass.IDS,
    ErrorClass.TYPES,
    ErrorClass.NAN,
    ErrorClass.VALUES,
    ErrorClass.UNREADABLE,
    ErrorClass.OTHER,
)


def _mode_members(run: RunFacts) -> dict[str, bool | None]:
    """For each mode: True (the run is in it), False (it is not), None (cannot be known)."""
    known_outcome = run.outcome is not None
    early = None
    if run.duration_s is not None and run.time_limit_s and run.outcome in (None, *AGENT_RAN):
        early = run.duration_s < EARLY_SHARE * run.time_limit_s
    invalid = run.graded and run.submission_exists and not run.valid_submission
    return {
        # A run the harness never got going had no chance to call it.
        "never_validated": None
        if run.validation_calls is None or run.outcome not in (None, *AGENT_RAN)
        else run.validation_calls == 0,
        "validated_still_invalid": None if not run.validation_calls or not run.graded else invalid,
        "stopped_early": early,
        "out_of_memory": run.outcome == OUT_OF_MEMORY if known_outcome else None,
        "timed_out": run.outcome == TIMED_OUT if known_outcome else None,
        "harness_error": run.outcome == HARNESS_ERROR if known_outcome else run.harness_error,
        "no_submission": (not run.submission_exists) if run.graded else None,
        "invalid": invalid if run.graded else None,
    }


def failure_table(runs: Iterable[RunFacts]) -> dict:
    """``{"modes": [{"key", "label", "of_what", "count", "of", "runs"}],
    "invalid_by_class": [{"key", "label", "count", "of", "runs"}], "runs": n}``: per mode
    the runs in it (``runs``, their keys) out of the runs it can be known for (``of``);
    invalid submissions by the class of their first error, out of the invalid ones."""
    runs = list(runs)
    members: dict[str, list] = {key: [] for key, _, _ in MODES}
    knowable = dict.fromkeys(members, 0)
    by_class: dict[str, list] = {str(c): [] for c in INVALID_CLASSES}
    for run in runs:
        for key, member in _mode_members(run).items():
            if member is None:
                continue
            knowable[key] += 1
            if member:
                members[key].append(run.key)
        if run.graded and run.submission_exists and not run.valid_submission:
            kind = run.error_class if run.error_class in by_class else ErrorClass.OTHER
            by_class[str(kind)].append(run.key)
    n_invalid = len(members["invalid"])
    return {
        "runs": len(runs),
        "modes": [
            {
                "key": key,
                "label": label,
                "of_what": of_what,
                "count": len(members[key]),
                "of": knowable[key],
                "runs": members[key],
            }
            for key, label, of_what in MODES
        ],
        "invalid_by_class": [
            {
                "key": str(kind),
                "label": ERROR_CLASS_LABELS[kind],
                "count": len(by_class[str(kind)]),
                "of": n_invalid,
                "runs": by_class[str(kind)],
            }
            for kind in INVALID_CLASSES
        ],
    }


FAILURE_KEYS = frozenset(key for key, _, _ in MODES) | {f"invalid_{c}" for c in INVALID_CLASSES}


def runs_in(table: dict, key: str) -> list:
    """The run keys behind ``key`` (a mode, or ``invalid_<class>``); [] for an unknown key."""
    for row in table["modes"]:
        if row["key"] == key:
            return row["runs"]
    for row in table["invalid_by_class"]:
        if f"invalid_{row['key']}" == key:
            return row["runs"]
    return []
