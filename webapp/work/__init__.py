"""Work the database owns, and its lifecycle.

Each kind of work (reading an upload, grading a run, an agent run, an integrity check, a
figure refresh, a familiarity measurement, a resumable upload) is declared once in
its app's ``kinds.py`` (registered with ``declare`` when the app is ready): its states, the legal transitions as a table, what is reset when it
waits again, its task and queue, its attempts budget and its failure messages. The calls of
``webapp.work.lifecycle`` (``claim``, ``finish``, ``fail``, ``release``, ``hand_back``,
``retry_or_fail``, ``restart``) are the only writers of a status
(a house rule, tools/house_rules, holds that); what happens when work ends is a hook an app
registers (``on_end``). The outbox and the claim's heartbeat are ``webapp.work.outbox``.
``docs/lifecycle.md`` renders the tables.
"""

from webapp.work.lifecycle import (
    Kind,
    attempts_spent,
    claim,
    declare,
    fail,
    finish,
    hand_back,
    holding,
    kind_for,
    kinds,
    move,
    on_end,
    release,
    restart,
    retry_or_fail,
)
from webapp.work.outbox import (
    Dispatched,
    heartbeat,
    heartbeat_interval,
    new_token,
    resend_due,
    send,
    send_on_commit,
    stale_before,
)

__all__ = [
    "Dispatched",
    "Kind",
    "attempts_spent",
    "claim",
    "declare",
    "fail",
    "finish",
    "hand_back",
    "heartbeat",
    "heartbeat_interval",
    "holding",
    "kind_for",
    "kinds",
    "move",
    "new_token",
    "on_end",
    "release",
    "resend_due",
    "restart",
    "retry_or_fail",
    "send",
    "send_on_commit",
    "stale_before",
]
