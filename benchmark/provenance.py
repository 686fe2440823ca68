"""Provenance, in the field's words: what stands behind an experiment's figures.

* ``reproduced``: the site ran the agent itself, on its own run hosts;
* ``graded``: someone sent submissions and the site's graders graded them;
* ``reported``: reports or published figures were imported as they are;
* ``reference``: mleboard's synthetic demo references (never an agent).

Leaderboards of the field keep these apart (SWE-bench's ✓, HAL's "verified", Epoch's
"evaluated by Epoch" all mean *re-run by us*). mleboard once called its graded uploads
"verified": that word is read as ``graded`` wherever a provenance is asked for
(``ALIASES``), so old links still answer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Provenance:
    slug: str
    label: str
    description: str


REPRODUCED = "reproduced"
GRADED = "graded"
REPORTED = "reported"
REFERENCE = "reference"

PROVENANCES: tuple[Provenance, ...] = (
    Provenance(REPRODUCED, "Reproduced", "the site ran the agent on its own run hosts"),
    Provenance(GRADED, "Graded", "submissions sent to the site and graded by its graders"),
    Provenance(REPORTED, "Reported", "reports or published figures imported as they are"),
    Provenance(REFERENCE, "Reference", "mleboard's synthetic demo references, not agents"),
)
SLUGS: tuple[str, ...] = tuple(p.slug for p in PROVENANCES)
LABELS = {p.slug: p.label for p in PROVENANCES}
# Earlier names, read as today's.
ALIASES = {"verified": GRADED}
# Provenances whose runs the site graded itself: their grading reports are here.
GRADED_HERE = frozenset({REPRODUCED, GRADED, REFERENCE})


class UnknownProvenance(ValueError):
    pass


def normalise(name: str) -> str:
    """The provenance ``name`` means (an alias read as today's word); raises
    ``UnknownProvenance`` naming the valid ones."""
    value = ALIASES.get(name.strip().lower(), name.strip().lower())
    if value not in SLUGS:
        raise UnknownProvenance(
            f"unknown provenance {name[:40]!r}; choose one of {', '.join(SLUGS)}"
            f" (or {', '.join(f'{a} = {b}' for a, b in ALIASES.items())})"
        )
    return value
