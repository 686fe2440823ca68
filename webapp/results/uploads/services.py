"""Uploads: store the archive untouched, refuse what is unsafe or unreadable with a
message a person can act on, turn what is good into an experiment whose runs are
graded by Celery - and never leave anything half-created."""

import hashlib
import logging
import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import IntegrityError, transaction
from django.db.models import F, Q

from benchmark.archive import ArchiveLimits, ArchiveRefused, extract_archive, inspect_archive
from benchmark.upload_layout import UploadLayoutError, read_upload
from webapp import work
from webapp.competitions.models import Competition
from webapp.core import changes
from webapp.results import disclosure, extensions
from webapp.results.grading.aggregates import figures_due
from webapp.results.models import Experiment, Run, Upload
from webapp.results.services import (
    ReportedRunGroup,
    agent_get_or_create,
    experiment_create_from_reports,
)
from webapp.results.uploads.quota import quota_refusal
from webapp.work import heartbeat, new_token, send_on_commit, stale_before

log = logging.getLogger(__name__)

EXPERIMENT_FIELDS = (
    "hardware",
    "runtime_hours",
    "internet_access",
    "test_feedback",
    "source_url",
    "obfuscated_descriptions",
    "knowledge_cutoff",
)


def archive_limits() -> ArchiveLimits:
    return ArchiveLimits(
        max_members=settings.UPLOAD_MAX_MEMBERS,
        max_total_bytes=settings.UPLOAD_MAX_TOTAL_BYTES,
        max_file_bytes=settings.UPLOAD_MAX_FILE_BYTES,
        max_ratio=settings.UPLOAD_MAX_RATIO,
    )


class UploadRefused(ValueError):
    """The upload cannot be accepted; ``upload`` is the failed record, when one was kept."""

    def __init__(self, message: str, upload: Upload | None = None):
        super().__init__(message)
        self.upload = upload


class UploadThrottled(UploadRefused):
    """Past the owner's daily upload quota (``upload_quota``); retry after ``retry_after`` s."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class UploadCreated:
    upload: Upload
    duplicate: bool
    resumed: bool = False  # a duplicate whose earlier upload failed or stalled, sent again
    # A duplicate of an upload refused for what the archive is: the same bytes fail the
    # same way, so it is not processed again.
    refused: bool = False
    # A duplicate sent with other metadata: the earlier upload's metadata is kept.
    metadata_ignored: bool = False

    @property
    def note(self) -> str:
        """What to tell the person about a duplicate, or ""."""
        if not self.duplicate:
            return ""
        if self.refused:
            text = (
                "You uploaded this archive before and it was refused: "
                f"{self.upload.error.rstrip('.')}. The same file fails the same way: fix the archive, "
                "then upload the new one."
            )
        elif self.resumed:
            text = (
                "You uploaded this archive before and it did not finish: it is being "
                "processed again."
            )
        else:
            text = "You uploaded this archive before (same checksum): here is that upload."
        if self.metadata_ignored:
            text += (
                " The metadata sent now differs from that upload's and was not applied: the "
                "earlier metadata is kept (edit the experiment to change it)."
            )
        return text


def _spool(uploaded_file) -> tuple[Path, str, int]:
    """Copy the incoming file to a temporary file, hashing it on the way."""
    digest = hashlib.sha256()
    size = 0
    handle = tempfile.NamedTemporaryFile(delete=False, prefix="upload-", dir=settings.MEDIA_ROOT)
    try:
        with handle:
            for chunk in uploaded_file.chunks():
                size += len(chunk)
                if size > settings.UPLOAD_MAX_BYTES:
                    raise UploadRefused(
                        "the archive is larger than the upload limit of "
                        f"{settings.UPLOAD_MAX_BYTES:,} bytes"
                    )
                digest.update(chunk)
                handle.write(chunk)
    except BaseException:  # refused, or the disk filled: no partial copy is left behind
        Path(handle.name).unlink(missing_ok=True)
        raise
    return Path(handle.name), digest.hexdigest(), size


def upload_create(*, owner, uploaded_file, metadata: dict) -> UploadCreated:
    """Store the archive of a one-request upload untouched with its checksum, then inspect
    it (``upload_store``)."""
    Path(settings.MEDIA_ROOT).mkdir(parents=True, exist_ok=True)
    temp, sha256, size = _spool(uploaded_file)
    try:
        if not Upload.objects.filter(owner=owner, sha256=sha256).exists():
            refusal = quota_refusal(owner, incoming_bytes=size)
            if refusal is not None:
                raise UploadThrottled(refusal.message, refusal.retry_after)
        name = getattr(uploaded_file, "name", "") or "archive"
        return upload_store(
            owner=owner, path=temp, sha256=sha256, size=size, name=name, metadata=metadata
        )
    finally:
        temp.unlink(missing_ok=True)


class _ArchiveOnDisk(File):
    """An archive already on disk: the storage moves it into place instead of copying."""

    def temporary_file_path(self) -> str:
        return self.file.name


def upload_store(
    *, owner, path: Path, sha256: str, size: int, name: str, metadata: dict
) -> UploadCreated:
    """The one way an archive becomes an upload, whichever way it arrived (one request, or
    in pieces, ``webapp.results.uploads.resumable``): ``path`` holds it, with the checksum computed
    as it arrived. A re-upload of the same archive by the same owner returns the earlier
    upload (and leaves ``path``); otherwise the file is moved into storage and inspected.
    An archive refused by the inspection is kept as a failed upload and UploadRefused is
    raised."""
    existing = Upload.objects.filter(owner=owner, sha256=sha256).first()
    if existing is not None:
        refused = _refused_for_its_archive(existing)
        return UploadCreated(
            existing,
            duplicate=True,
            resumed=not refused and upload_resume(existing),
            refused=refused,
            metadata_ignored=(metadata or {}) != (existing.metadata or {}),
        )
    name = Path(name or "archive").name or "archive"
    upload = Upload(
        owner=owner,
        original_name=_shortened(name, 255),
        size=size,
        sha256=sha256,
        metadata=metadata,
    )
    with open(path, "rb") as handle:
        # Well under the 255 bytes a file name may take on disk.
        upload.archive.save(_shortened(name, 100), _ArchiveOnDisk(handle), save=False)
    try:
        upload.save()
    except IntegrityError:  # the same archive arrived twice at once
        upload.archive.delete(save=False)
        existing = Upload.objects.get(owner=owner, sha256=sha256)
        return UploadCreated(
            existing,
            duplicate=True,
            metadata_ignored=(metadata or {}) != (existing.metadata or {}),
        )
    except BaseException:  # no row, so no file either
        upload.archive.delete(save=False)
        raise
    try:
        inspect_archive(Path(upload.archive.path), archive_limits())
    except ArchiveRefused as exc:
        upload_fail(upload.pk, str(exc))
        upload.refresh_from_db()
        raise UploadRefused(str(exc), upload) from None

    send_on_commit("upload", upload.pk)
    return UploadCreated(upload, duplicate=False)


def _refused_for_its_archive(upload: Upload) -> bool:
    """A failed upload whose archive the inspection refuses (not an archive, unsafe,
    over a limit): sending the same bytes again cannot succeed."""
    if upload.status != Upload.Status.FAILED or not upload.archive:
        return False
    try:
        inspect_archive(Path(upload.archive.path), archive_limits())
    except ArchiveRefused:
        return True
    except OSError:  # the stored file is gone: let the resume say what it finds
        return False
    return False


def _shortened(name: str, max_bytes: int) -> str:
    """``name`` cut to ``max_bytes`` bytes of UTF-8, keeping its suffix (".zip", ".tar.gz")."""
    if len(name.encode()) <= max_bytes:
        return name
    suffix = "".join(Path(name).suffixes[-2:])
    if len(suffix) > 12:
        suffix = ""
    room = max_bytes - len(suffix.encode())
    stem = name[: len(name) - len(suffix)].encode()[:room].decode("utf-8", "ignore")
    return stem + suffix


def upload_resume(upload: Upload) -> bool:
    """A person sent an archive again: if its earlier upload failed or stalled (a claim
    gone silent, or never picked up), start it over; runs of its experiment that failed
    are graded again. True when something was resumed."""

    silent = Q(heartbeat_at__lt=stale_before()) | Q(heartbeat_at__isnull=True)
    uploads, grading = work.kind_for("upload"), work.kind_for("grading")
    with transaction.atomic():
        if upload.experiment_id is None:
            restarted = work.restart(
                uploads,
                [upload.pk],
                where=Q(experiment__isnull=True)
                & (
                    Q(status=Upload.Status.FAILED)
                    | Q(status=Upload.Status.QUEUED, dispatched_at__lt=stale_before())
                    | Q(status=Upload.Status.PROCESSING) & silent
                ),
            )
            if restarted:
                send_on_commit("upload", upload.pk)
        else:
            failed = list(
                Run.objects.filter(
                    experiment_id=upload.experiment_id, status=Run.Status.FAILED
                ).values_list("pk", flat=True)
            )
            restarted = work.restart(grading, failed)
            if failed:
                # Its runs are the work now: the upload waits on them, unclaimed.
                work.restart(uploads, [upload.pk], Upload.Status.PROCESSING, attempts=F("attempts"))
            for run_id in failed:
                send_on_commit("grading", run_id)
    upload.refresh_from_db()
    return bool(restarted)


def upload_fail(upload_id: int, message: str, token: str = "") -> bool:
    """Fail an upload with a message for its owner; with ``token``, only while that claim
    holds it. Its extracted files are removed (``upload_ended``)."""
    return work.fail(work.kind_for("upload"), upload_id, message, token=token or None)


def upload_ended(upload_ids: list[int], status: str) -> None:
    """The end hook of reading an upload (registered by the results app): a failed one's
    extracted files are removed."""
    if status == Upload.Status.FAILED:
        for upload_id in upload_ids:
            shutil.rmtree(
                Path(settings.MEDIA_ROOT) / "extracted" / str(upload_id), ignore_errors=True
            )


def extraction_dir(upload: Upload) -> Path:
    return Path(settings.MEDIA_ROOT) / "extracted" / str(upload.pk)


def upload_process(upload_id: int, *, token: str = "") -> Upload | None:
    """Unpack and read a queued upload under the claim ``token`` and create its
    experiment and runs in one transaction, which also ends the claim: an upload is
    read at most once. Refusals are final (the upload is failed with the reason and the
    extracted files are removed); returns None if another task holds the upload."""

    token = token or new_token()
    uploads = work.kind_for("upload")
    if not work.claim(uploads, upload_id, token, where=Q(experiment__isnull=True)):
        return None
    upload = Upload.objects.select_related("owner").get(pk=upload_id)
    dest = extraction_dir(upload)
    try:
        with heartbeat(Upload, upload_id, token):
            if dest.exists():  # a previous attempt died half-way
                shutil.rmtree(dest)
            extract_archive(Path(upload.archive.path), dest, archive_limits())
            known = set(Competition.objects.filter(retired=False).values_list("slug", flat=True))
            contents = read_upload(dest, known_competitions=known, seeds=_seeds(upload.metadata))
        with transaction.atomic():
            experiment = _experiment_from(upload, contents)
            done = contents.kind == "reports"
            read = {
                "experiment": experiment,
                "kind": contents.kind,
                "warnings": [*contents.warnings, *_nan_score_warnings(contents)],
            }
            # Reports need no grading: the upload ends; else its runs are the work now.
            held = (
                work.finish(uploads, upload_id, token=token, **read)
                if done
                else work.holding(uploads, upload_id, token).update(claimed_by="", **read)
            )
            if not held:  # the claim was taken back meanwhile: another attempt reads it
                transaction.set_rollback(True)
                return None
            if done:
                figures_due([experiment.pk])
            for run_id in Run.objects.filter(experiment=experiment).values_list("pk", flat=True):
                send_on_commit("grading", run_id)
    except (ArchiveRefused, UploadLayoutError, UnicodeDecodeError, ValueError) as exc:
        upload_fail(upload.pk, str(exc), token)
        return Upload.objects.get(pk=upload.pk)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return Upload.objects.get(pk=upload.pk)


def _nan_score_warnings(contents) -> list[str]:
    """Reported NaN scores are stored as no score (null), as MLE-bench writes a missing
    one: JSON cannot carry NaN, and a NaN would sort above every real score."""
    nan = sorted(
        f"{r.competition_id} (seed {g.seed})"
        for g in contents.reported
        for r in g.reports
        if r.score is not None and math.isnan(r.score)
    )
    if not nan:
        return []
    shown = ", ".join(nan[:5]) + (f" and {len(nan) - 5} more" if len(nan) > 5 else "")
    return [f"{len(nan)} report(s) give the score NaN, stored as no score (null): {shown}"]


def _seeds(metadata: dict) -> dict[str, int] | None:
    seeds = metadata.get("seeds")
    return {str(k): int(v) for k, v in seeds.items()} if isinstance(seeds, dict) and seeds else None


def _seeds_in(contents) -> int | None:
    """The most seeds any one competition has in the upload."""
    pairs = [(r.competition_id, r.seed) for r in contents.runs] + [
        (r.competition_id, g.seed) for g in contents.reported for r in g.reports
    ]
    per_competition: dict[str, set[int]] = {}
    for competition, seed in pairs:
        per_competition.setdefault(competition, set()).add(seed)
    return max((len(s) for s in per_competition.values()), default=None)


def _experiment_from(upload: Upload, contents) -> Experiment:
    meta = upload.metadata
    agent = agent_get_or_create(
        meta.get("scaffold", ""), meta.get("model", ""), meta.get("agent_version", "")
    )
    fields = {k: meta[k] for k in EXPERIMENT_FIELDS if meta.get(k) not in (None, "")}
    fields["source_available"] = bool(meta.get("source_url"))
    fields.update(
        disclosure.attributes(
            disclosure.upload_disclosure(meta, contents.disclosure, seeds_seen=_seeds_in(contents))
        )
    )
    name = meta.get("name") or f"{agent.scaffold} × {agent.model} (upload {upload.pk})"
    if contents.kind == "reports":
        groups = [ReportedRunGroup(g.run_group, g.seed, list(g.reports)) for g in contents.reported]
        return experiment_create_from_reports(
            name=name,
            agent=agent,
            run_groups=groups,
            source=Experiment.Source.REPORTED,
            owner=upload.owner,
            **fields,
        )
    experiment = Experiment.objects.create(
        name=name,
        agent=agent,
        source=Experiment.Source.GRADED,
        owner=upload.owner,
        llm_usage=meta.get("usage"),
        **fields,
    )
    competitions = {c.slug: c for c in Competition.objects.all()}
    time_limit_s = experiment.runtime_hours * 3600 if experiment.runtime_hours else None
    created = Run.objects.bulk_create(
        [
            Run(
                experiment=experiment,
                competition=competitions[run.competition_id],
                seed=run.seed,
                run_group=run.run_group,
                submission_path=str(run.submission_path) if run.submission_path else "",
                llm_usage=run.usage,
                facts={**run.facts, "time_limit_s": time_limit_s} if run.facts else None,
            )
            for run in contents.runs
        ]
    )
    # What the run folders carry beyond the runs (snapshots, ``webapp.runs``).
    extensions.runs_uploaded(experiment, contents.runs, created)
    return experiment


def upload_finish_if_done(experiment_id: int) -> bool:
    """Mark the experiment's upload graded once no run is waiting or grading (runs that
    failed are listed on its page with their reasons); True then."""
    pending = Run.objects.filter(
        experiment_id=experiment_id, status__in=[Run.Status.QUEUED, Run.Status.RUNNING]
    ).exists()
    if not pending:
        uploads = work.kind_for("upload")
        for upload_id in Upload.objects.filter(
            experiment_id=experiment_id, status=Upload.Status.PROCESSING
        ).values_list("pk", flat=True):
            work.finish(uploads, upload_id, where=Q(experiment_id=experiment_id))
    return not pending


def experiment_regrade(experiment: Experiment, by=None) -> int:
    """Queue every run of an experiment graded here for grading again (after a grader fix).
    Each new report records its grader version; earlier reports stay, not current. ``by``:
    who asked (the corrections log gives their role)."""

    if experiment.source not in (Experiment.Source.GRADED, Experiment.Source.REPRODUCED):
        raise ValueError(
            "only experiments graded here can be re-graded; reported ones are kept as reported"
        )
    with transaction.atomic():
        run_ids = list(
            Run.objects.filter(experiment=experiment)
            .exclude(status=Run.Status.RUNNING)
            .values_list("pk", flat=True)
        )
        work.restart(work.kind_for("grading"), run_ids)
        work.restart(
            work.kind_for("upload"),
            Upload.objects.filter(experiment=experiment).values_list("pk", flat=True),
            Upload.Status.PROCESSING,
            attempts=F("attempts"),
        )
        for run_id in run_ids:
            send_on_commit("grading", run_id)
        changes.correction(
            "regrade",
            experiment_id=experiment.pk,
            reason=f"{len(run_ids)} run{'' if len(run_ids) == 1 else 's'} graded again with "
            "the current graders.",
            by=by,
        )
    return len(run_ids)
