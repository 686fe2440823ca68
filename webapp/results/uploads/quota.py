"""How much one person may upload in a rolling day: archives completed
(``MLEBOARD_UPLOADS_PER_DAY``) and bytes (``MLEBOARD_UPLOAD_BYTES_PER_DAY``: completed
archives plus resumable uploads still arriving, whose declared length is held for them).
Counted from the database, so every web process and host agrees, and asked by both ways
of uploading. A duplicate (same checksum) is not a new upload and costs nothing."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Count, Min, Sum
from django.utils import timezone

DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class QuotaRefusal:
    message: str
    retry_after: int  # seconds until the oldest upload counted leaves the day


def quota_refusal(owner, *, incoming_bytes: int) -> QuotaRefusal | None:
    """Why ``owner`` may not start an upload of ``incoming_bytes`` now, or None."""
    from webapp.results.models import PartialUpload, Upload

    now = timezone.now()
    since = now - DAY
    done = Upload.objects.filter(owner=owner, created_at__gte=since).aggregate(
        count=Count("pk"), first=Min("created_at"), size=Sum("size")
    )
    count = done["count"]
    arriving = (
        PartialUpload.objects.filter(
            owner=owner,
            state__in=[PartialUpload.State.RECEIVING, PartialUpload.State.ASSEMBLING],
        ).aggregate(size=Sum("length"))["size"]
        or 0
    )
    wait = max(1, math.ceil((done["first"] + DAY - now).total_seconds())) if done["first"] else 60
    hours = max(1, math.ceil(wait / 3600))
    if count >= settings.UPLOADS_PER_DAY:
        return QuotaRefusal(
            f"you have uploaded {count} archives in the last 24 hours, this site's limit "
            f"(MLEBOARD_UPLOADS_PER_DAY={settings.UPLOADS_PER_DAY}); try again in about "
            f"{hours} hour(s)",
            wait,
        )
    used = (done["size"] or 0) + arriving
    if used + incoming_bytes > settings.UPLOAD_BYTES_PER_DAY:
        return QuotaRefusal(
            f"this archive ({incoming_bytes:,} bytes) would bring your uploads of the last 24 "
            f"hours to {used + incoming_bytes:,} bytes, past this site's limit of "
            f"{settings.UPLOAD_BYTES_PER_DAY:,} (MLEBOARD_UPLOAD_BYTES_PER_DAY; uploads still "
            f"arriving count with their full size); try again in about {hours} hour(s), or "
            "cancel an unfinished upload",
            wait,
        )
    return None
