"""What every page needs to know about agent runs: whether this site isolates them."""

from django.conf import settings


def isolation(request) -> dict:
    return {"runs_unisolated": settings.MLEBOARD_RUN_BACKEND == "local"}
