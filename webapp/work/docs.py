"""The declared lifecycles as Markdown: ``docs/lifecycle.md`` is this text
(``manage.py lifecycle_docs --write docs/lifecycle.md``; a test keeps it current)."""

from __future__ import annotations

from webapp.work.lifecycle import Kind, kinds

HEADER = """# Lifecycle of each kind of work

Generated from `webapp.work.declarations` by `manage.py lifecycle_docs --write docs/lifecycle.md`;
do not edit by hand. Every status below is written only by `webapp.work` (`claim`, `finish`,
`fail`, `release`, `hand_back`, `retry_or_fail`, `restart`, `move`), along these tables; pages
and the API ask `is_final`, `is_cancellable` and the label instead of comparing states. A
claim spends one attempt; past the budget, work that lost its claim or met a transient error
fails with the message shown (`attempts_spent` is the one rule). Work a worker holds when it
is told to stop waits again at once, its attempt given back (`hand_back`).
"""


def _states(kind: Kind, states) -> str:
    return ", ".join(f"`{s}` ({kind.label(s)})" for s in states) or "—"


def _kind(kind: Kind) -> list[str]:
    lines = [f"## {kind.name}", "", kind.description, ""]
    lines.append(
        f"- rows: `{kind.model._meta.label}`" + (f", field `{kind.field}`" if kind.field else "")
    )
    if kind.task:
        lines.append(f"- task: `{kind.task}` on queue `{kind.queue}`")
    if kind.due_field:
        lines.append(f"- due while `{kind.due_field}` is set")
    if kind.field:
        lines.append(f"- waiting: {_states(kind, kind.waiting)}")
        lines.append(f"- running: {_states(kind, kind.running)}")
        lines.append(f"- final: {_states(kind, kind.final)}")
        if kind.cancellable:
            lines.append(f"- cancellable: {_states(kind, kind.cancellable)}")
    if kind.reset:
        reset = ", ".join(f"`{name}`" for name in kind.reset)
        lines.append(f"- reset when it waits again: {reset}")
    if kind.restart_reset:
        reset = ", ".join(f"`{name}`" for name in kind.restart_reset)
        lines.append(f"- also reset when a person starts it over: {reset}")
    if kind.claims:
        lines.append(f"- attempts budget: `{kind.budget_setting}`")
    if kind.on_silent:
        lines.append(f"- a silent claim is ended by `{kind.on_silent}`")
    if kind.sweep:
        lines.append(f"- swept by `{kind.sweep}`")
    for cause, message in kind.messages.items():
        lines.append(f'- fails when {cause}: "{message}"')
    if kind.field:
        lines += ["", "| from | to |", "|---|---|"]
        for state, onward in kind.transitions.items():
            ordered = [s for s in kind.states if s in onward]
            lines.append(f"| `{state}` | {', '.join(f'`{s}`' for s in ordered) or '(end)'} |")
    return [*lines, ""]


def lifecycle_markdown() -> str:
    lines = [HEADER]
    for kind in kinds().values():
        lines += _kind(kind)
    return "\n".join(lines).rstrip() + "\n"
