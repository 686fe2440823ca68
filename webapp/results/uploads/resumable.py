"""Resumable uploads: an archive of up to ``MLEBOARD_UPLOAD_MAX_BYTES`` arriving in pieces
(tus 1.0, served by ``webapp.results.uploads.tus``), continued where it stopped after a
dropped connection, a closed laptop or Ctrl-C.

A ``PartialUpload`` owns a part file under ``MEDIA_ROOT/partial/``. Each piece is streamed to
it in small blocks and hashed on the way; the offset and the SHA-256 state are saved
together every ``CHECKPOINT_BYTES`` and when the request ends, however it ends. One request
writes a part at a time (an exclusive ``flock``). With the last byte the checksum is
finished from the saved state and the part goes through ``uploads.upload_store``, as a
one-request upload does. Its states (``partial_move``) are in docs/lifecycle.md;
``partial_uploads_sweep`` (run by the sweeper) ends every state that has a deadline.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from benchmark.file_seek import seek_clamped
from webapp import work
from webapp.core.media_space import FULL_MESSAGE, is_disk_full, room_for
from webapp.results.models import PartialUpload, Upload
from webapp.results.uploads.quota import quota_refusal
from webapp.results.uploads.services import UploadRefused, upload_store
from webapp.results.uploads.sha256 import ResumableSha256
from webapp.work import stale_before

log = logging.getLogger(__name__)

State = PartialUpload.State

BLOCK_BYTES = 1024 * 1024  # read from the request and written at a time
CHECKPOINT_BYTES = 64 * 1024 * 1024  # at most this much is received again after a crash
# The upload page's pieces: small enough that a slow link sends one well within
# gunicorn's request time-out, large enough that requests are few.
BROWSER_CHUNK_BYTES = 16 * 1024 * 1024


class ResumableError(ValueError):
    """A request the protocol or the limits refuse, answered with ``http_status``."""

    def __init__(self, message: str, status: int = 400, retry_after: int | None = None):
        super().__init__(message)
        self.http_status = status
        self.retry_after = retry_after


def part_path(partial: PartialUpload) -> Path:
    return Path(settings.MEDIA_ROOT) / "partial" / f"{partial.key}.part"


def partial_move(pk: int, to: str, *, expected: str | None = None, **fields) -> bool:
    """Move a partial upload to ``to`` along its declared lifecycle (``webapp.work.declarations``,
    from ``expected`` when given), setting ``fields`` in the same conditional update. True
    for the one caller that moved it."""
    kind = work.kind_for("resumable_upload")
    if expected is not None and expected not in kind.sources(to):
        raise ValueError(f"a partial upload does not go from {expected} to {to}")
    where = Q(state=expected) if expected is not None else None
    return work.move(kind, pk, to, where=where, updated_at=timezone.now(), **fields)


def _deadline() -> dt.datetime:
    return timezone.now() + dt.timedelta(seconds=settings.UPLOAD_PARTIAL_TTL_S)


def partial_create(*, owner, length: int, filename: str, metadata: dict) -> PartialUpload:
    """Open a resumable upload of ``length`` bytes (metadata already checked); refused
    with a ResumableError past the size limit or the owner's daily quota."""
    if length <= 0:
        raise ResumableError(
            "the archive is empty (Upload-Length 0): nothing to grade"
            if length == 0
            else "Upload-Length must be a whole number of bytes"
        )
    if length > settings.UPLOAD_MAX_BYTES:
        raise ResumableError(
            f"the archive is {length:,} bytes, larger than this site's upload limit of "
            f"{settings.UPLOAD_MAX_BYTES:,} bytes (MLEBOARD_UPLOAD_MAX_BYTES); split the "
            "run groups over several uploads",
            status=413,
        )
    if not room_for(length):
        raise ResumableError(FULL_MESSAGE, status=507)
    refusal = quota_refusal(owner, incoming_bytes=length)
    if refusal is not None:
        raise ResumableError(refusal.message, status=429, retry_after=refusal.retry_after)
    now = timezone.now()
    partial = PartialUpload.objects.create(
        owner=owner,
        length=length,
        filename=(Path(filename or "archive").name or "archive")[:255],
        metadata=metadata,
        expires_at=_deadline(),
        updated_at=now,
    )
    path = part_path(partial)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    return partial


def _store_bytes(handle, data: bytes) -> None:
    """Every byte of a resumable upload reaches the disk here: the one place a check of
    the media folder's free space belongs."""
    view = memoryview(data)
    try:
        while view:  # an unbuffered write may take part of the block
            view = view[handle.write(view) :]
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFull from exc
        raise


class DiskFull(Exception):
    """A piece met a full disk: what it wrote past the saved offset is cut off."""


@dataclass
class Received:
    partial: PartialUpload
    upload: Upload | None = None  # set once complete
    refused: str = ""  # the assembled archive was refused: why


def partial_receive(
    partial: PartialUpload, offset: int, read: Callable[[int], bytes], declared: int | None
) -> Received:
    """Append the request body (``read(n)`` returns at most n bytes, b"" at its end) at
    ``offset``, which must be where the upload stands. ``declared`` is the body's length
    when the request says it. Returns the partial upload as saved; assembles it with its
    last byte."""
    if partial.state != State.RECEIVING:
        raise ResumableError(not_receiving(partial), status=410)
    if offset != partial.offset:
        raise ResumableError(
            f"Upload-Offset {offset} does not match the {partial.offset} bytes received: "
            "ask for the offset (HEAD) and continue from there",
            status=409,
        )
    room = partial.length - partial.offset
    if declared is not None and declared > room:
        raise ResumableError(
            f"this piece has {declared:,} bytes but only {room:,} remain of the "
            f"{partial.length:,} declared",
            status=413,
        )
    if not room_for(room if declared is None else declared):
        raise ResumableError(FULL_MESSAGE, status=507)
    path = part_path(partial)
    try:
        handle = open(path, "r+b", buffering=0)
    except FileNotFoundError:
        raise ResumableError(
            "the part received so far is gone (it expired or was removed); start the upload again",
            status=410,
        ) from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResumableError(
                "another request is still sending to this upload; wait a moment and ask "
                "for the offset again",
                status=423,
            ) from None
        # Under the lock, the saved offset is the truth (another request may have moved it).
        partial.refresh_from_db()
        if partial.state != State.RECEIVING or offset != partial.offset:
            raise ResumableError(
                f"the upload moved on meanwhile (now at {partial.offset}); ask for the offset",
                status=409,
            )
        hasher = ResumableSha256.resume(partial.sha256_state, path)
        seek_clamped(handle, partial.offset)
        saved = partial.offset
        position = partial.offset
        limit = partial.length if declared is None else partial.offset + declared
        full = False
        try:
            while position < limit:
                try:
                    data = read(min(BLOCK_BYTES, limit - position))
                except Exception as exc:  # the client went away mid-piece: keep what arrived
                    log.info("upload %s: piece cut off at %s: %r", partial.key, position, exc)
                    break
                if not data:
                    break
                try:
                    _store_bytes(handle, data)
                except DiskFull:
                    full = True
                    break
                hasher.update(data)
                position += len(data)
                if position - saved >= CHECKPOINT_BYTES:
                    saved = _checkpoint(partial, handle, saved, position, hasher)
        finally:
            if position != saved:
                _checkpoint(partial, handle, saved, position, hasher)
        if full:
            # Keep what was received whole (the client resumes from the offset) and give
            # back at once the space of the piece that did not fit.
            handle.truncate(position)
            raise ResumableError(FULL_MESSAGE, status=507)
        if position == partial.length and partial_move(
            partial.pk, State.ASSEMBLING, expected=State.RECEIVING
        ):
            handle.truncate(partial.length)
            return partial_assemble(partial.pk)
    partial.refresh_from_db()
    return Received(partial)


def _checkpoint(partial: PartialUpload, handle, saved: int, position: int, hasher) -> int:
    """Save offset and hash state together, once the bytes are on disk; returns the new
    saved offset. Conditional on the offset saved before, so two writers cannot both."""
    os.fdatasync(handle.fileno())
    moved = PartialUpload.objects.filter(pk=partial.pk, state=State.RECEIVING, offset=saved).update(
        offset=position,
        sha256_state=hasher.state(),
        expires_at=_deadline(),
        updated_at=timezone.now(),
    )
    if not moved:
        raise ResumableError("the upload moved on meanwhile; ask for the offset", status=409)
    partial.offset = position
    return position


def partial_assemble(pk: int) -> Received:
    """Turn a fully received upload (state assembling) into an ``Upload`` through
    ``upload_store``. Safe to run again after a crash: an upload already stored with the
    archive's checksum is the result."""
    partial = PartialUpload.objects.select_related("owner").get(pk=pk)
    if partial.state == State.COMPLETE:
        return Received(partial, partial.upload)
    if partial.state != State.ASSEMBLING:
        raise ResumableError(not_receiving(partial), status=410)
    path = part_path(partial)
    try:
        # From the saved state: nothing is read again (unless the fallback must).
        sha256 = ResumableSha256.resume(partial.sha256_state, path).hexdigest()
    except (OSError, ValueError):
        sha256 = ""
    refused = ""
    if not path.exists():
        # A crash after the part was moved into storage: that upload is the result.
        upload = (
            Upload.objects.filter(owner=partial.owner, sha256=sha256).first() if sha256 else None
        )
        if upload is None:
            partial_move(
                pk,
                State.EXPIRED,
                expected=State.ASSEMBLING,
                error="the received archive was lost before it was stored; send it again",
            )
            raise ResumableError("the received archive was lost; send it again", status=410)
    else:
        try:
            created = upload_store(
                owner=partial.owner,
                path=path,
                sha256=sha256,
                size=partial.length,
                name=partial.filename,
                metadata=partial.metadata,
            )
            upload = created.upload
        except UploadRefused as exc:
            if exc.upload is None:
                raise
            upload, refused = exc.upload, str(exc)
    partial_move(pk, State.COMPLETE, expected=State.ASSEMBLING, upload=upload, error=refused)
    path.unlink(missing_ok=True)  # a duplicate leaves it; a stored one was moved away
    partial.refresh_from_db()
    return Received(partial, upload, refused)


def partial_terminate(partial: PartialUpload) -> bool:
    """The client gives up (tus termination): the part is removed. True when it was still
    receiving."""
    moved = partial_move(partial.pk, State.TERMINATED, expected=State.RECEIVING)
    if moved:
        part_path(partial).unlink(missing_ok=True)
    return moved


def not_receiving(partial: PartialUpload) -> str:
    return {
        State.ASSEMBLING: "the upload is complete and being stored",
        State.COMPLETE: "the upload is complete",
        State.EXPIRED: (
            "the upload expired (no bytes arrived for "
            f"{settings.UPLOAD_PARTIAL_TTL_S} s) and its part was removed; start it again"
        ),
        State.TERMINATED: "the upload was cancelled; start it again",
    }.get(partial.state, f"the upload is {partial.state}")


@dataclass
class PartialSweep:
    expired: int = 0
    assembled: int = 0
    parts_removed: int = 0


def partial_uploads_sweep(batch: int = 1000) -> PartialSweep:
    """End every partial upload past its deadline: receiving ones with no byte for
    ``MLEBOARD_UPLOAD_PARTIAL_TTL_S`` expire (their part is removed); assembling ones
    silent for ``MLEBOARD_STALE_AFTER_S`` (their process died) are assembled again; parts
    of finished ones still on disk are removed."""
    report = PartialSweep()
    now = timezone.now()
    for partial in PartialUpload.objects.filter(state=State.RECEIVING, expires_at__lt=now)[:batch]:
        if partial_move(
            partial.pk,
            State.EXPIRED,
            expected=State.RECEIVING,
            error=f"no bytes arrived for {settings.UPLOAD_PARTIAL_TTL_S} s",
        ):
            part_path(partial).unlink(missing_ok=True)
            report.expired += 1
    for pk in PartialUpload.objects.filter(
        state=State.ASSEMBLING, updated_at__lt=stale_before()
    ).values_list("pk", flat=True)[:batch]:
        # Claim it for this sweep (a fresh updated_at), so one sweeper assembles it.
        if PartialUpload.objects.filter(
            pk=pk, state=State.ASSEMBLING, updated_at__lt=stale_before()
        ).update(updated_at=timezone.now()):
            try:
                partial_assemble(pk)
                report.assembled += 1
            except Exception:
                log.warning("assembling partial upload %s failed", pk, exc_info=True)
    for partial in PartialUpload.objects.filter(
        state__in=list(work.kind_for("resumable_upload").final),
        updated_at__gt=now - dt.timedelta(days=2),
    ).only("key")[:batch]:
        path = part_path(partial)
        if path.exists():
            path.unlink(missing_ok=True)
            report.parts_removed += 1
    return report
