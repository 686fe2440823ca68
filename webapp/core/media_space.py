"""The media folder's free space, and the margin uploads keep: below
``MLEBOARD_MEDIA_MIN_FREE_BYTES`` uploads are refused (``webapp.edge.media_space``, the
resumable upload), and the status page shows it."""

from __future__ import annotations

import errno
import shutil
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings


@dataclass(frozen=True)
class MediaSpace:
    total_bytes: int
    free_bytes: int
    min_free_bytes: int

    @property
    def low(self) -> bool:
        """Below the margin: uploads are refused."""
        return self.free_bytes < self.min_free_bytes

    def as_dict(self) -> dict:
        return {
            "total_bytes": self.total_bytes,
            "free_bytes": self.free_bytes,
            "min_free_bytes": self.min_free_bytes,
            "low": self.low,
        }


def _nearest_existing(path: Path) -> Path:
    """The folder itself, or (not made yet) the nearest one above it: its filesystem."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return path


def media_space() -> MediaSpace:
    usage = shutil.disk_usage(_nearest_existing(Path(settings.MEDIA_ROOT)))
    return MediaSpace(usage.total, usage.free, settings.MLEBOARD_MEDIA_MIN_FREE_BYTES)


def room_for(size: int = 0) -> bool:
    """The media folder can take ``size`` more bytes and keep its free-space margin."""
    space = media_space()
    return space.free_bytes - max(0, size) >= space.min_free_bytes


def is_disk_full(exc: BaseException) -> bool:
    """The write failed because the filesystem is full (or the quota spent)."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


FULL_MESSAGE = (
    "the server has no room for this upload right now (its storage is nearly full); "
    "nothing was kept: try again later, or tell the site's operators"
)
