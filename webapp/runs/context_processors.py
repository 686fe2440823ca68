"""What every page needs to know about agent runs: whether this site isolates them, and
what a local agent can read of its host (probed only by the pages that show it)."""

from django.conf import settings
from django.utils.functional import SimpleLazyObject


def isolation(request) -> dict:
    local = settings.MLEBOARD_RUN_BACKEND == "local"

    def confinement() -> str:
        from webapp.runs.services.catalogue import backend_confinement

        return backend_confinement("local")

    return {
        "runs_unisolated": local,
        "runs_confinement": SimpleLazyObject(confinement) if local else "",
    }
