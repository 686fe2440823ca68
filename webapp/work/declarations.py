"""What every app's declaration of its kinds of work shares (each app declares its own
kinds in ``<app>/kinds.py`` and registers them from ``AppConfig.ready`` with
``webapp.work.declare``). The sweeper, pages, the API and ``docs/lifecycle.md``
(``manage.py lifecycle_docs``) read the kinds; ``webapp.work.lifecycle`` moves rows only
along their ``transitions``.

A restart (a person sends an archive again, re-grades, asks again) is a move too, so it is
in the table: "final" says no worker has anything left to do, not that nothing may follow.
"""

from __future__ import annotations


def table(**moves: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """A kind's legal moves: each state and the states it may go to."""
    return {state: frozenset(onward) for state, onward in moves.items()}


# Cleared whenever a claimed row waits again: the claim, and the send (so the sweeper
# sends it again at once unless the caller says when).
CLAIM_RESET = {"claimed_by": "", "dispatched_at": None}
# Cleared in addition when a person starts work over: the outcome and the budget.
RESTART_RESET = {"error": "", "attempts": 0}
