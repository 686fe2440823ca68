"""Uploads: store the archive untouched, refuse what is unsafe or unreadable with a
message a person can act on, turn what is good into an experiment whose runs are
graded by Celery - and never leave anything half-created."""

import hashlib
import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import IntegrityError, transaction

from benchmark.archive import ArchiveLimits, ArchiveRefused, extract_archive, inspect_archive
from benchmark.upload_layout import UploadLayoutError, read_upload
from webapp.competitions.models import Competition
from webapp.results.models import Experiment, Run, Upload
from webapp.results.services import (
    ReportedRunGroup,
    agent_get_or_create,
    experiment_create_from_reports,
)

log = logging.getLogger(__name__)

EXPERIMENT_FIELDS = ("hardware", "runtime_hours", "internet_access", "test_feedback", "source_url")


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


@dataclass
class UploadCreated:
    upload: Upload
    duplicate: bool


def _spool(uploaded_file) -> tuple[Path, str, int]:
    """Copy the incoming file to a temporary file, hashing it on the way."""
    digest = hashlib.sha256()
    size = 0
    handle = tempfile.NamedTemporaryFile(delete=False, prefix="upload-", dir=settings.MEDIA_ROOT)
    with handle:
        for chunk in uploaded_file.chunks():
            size += len(chunk)
            if size > settings.UPLOAD_MAX_BYTES:
                handle.close()
                Path(handle.name).unlink(missing_ok=True)
                raise UploadRefused(
                    f"the archive is larger than the upload limit of {settings.UPLOAD_MAX_BYTES:,} bytes"
                )
            digest.update(chunk)
            handle.write(chunk)
    return Path(handle.name), digest.hexdigest(), size


def upload_create(*, owner, uploaded_file, metadata: dict) -> UploadCreated:
    """Store the archive untouched with its checksum, then inspect it. A re-upload of the
    same archive by the same owner returns the earlier upload. An archive refused by
    the inspection is kept as a failed upload and UploadRefused is raised."""
    Path(settings.MEDIA_ROOT).mkdir(parents=True, exist_ok=True)
    temp, sha256, size = _spool(uploaded_file)
    try:
        existing = Upload.objects.filter(owner=owner, sha256=sha256).first()
        if existing is not None:
            return UploadCreated(existing, duplicate=True)
        name = Path(getattr(uploaded_file, "name", "") or "archive").name[:200] or "archive"
        upload = Upload(
            owner=owner, original_name=name, size=size, sha256=sha256, metadata=metadata
        )
        with open(temp, "rb") as handle:
            upload.archive.save(name, File(handle), save=False)
        try:
            upload.save()
        except IntegrityError:  # the same archive arrived twice at once
            upload.archive.delete(save=False)
            return UploadCreated(Upload.objects.get(owner=owner, sha256=sha256), duplicate=True)
    finally:
        temp.unlink(missing_ok=True)
    try:
        inspect_archive(Path(upload.archive.path), archive_limits())
    except ArchiveRefused as exc:
        upload_fail(upload.pk, str(exc))
        upload.refresh_from_db()
        raise UploadRefused(str(exc), upload) from None
    from webapp.results.tasks import process_upload_task

    process_upload_task.delay_on_commit(upload.pk)
    return UploadCreated(upload, duplicate=False)


def upload_fail(upload_id: int, message: str) -> None:
    Upload.objects.filter(pk=upload_id).update(status=Upload.Status.FAILED, error=message)


def extraction_dir(upload: Upload) -> Path:
    return Path(settings.MEDIA_ROOT) / "extracted" / str(upload.pk)


def upload_process(upload_id: int) -> Upload | None:
    """Unpack and read a queued upload and create its experiment and runs in one
    transaction. Refusals are final (the upload is failed with the reason, and the
    extracted files are removed); returns None if another task holds the upload."""
    claimed = Upload.objects.filter(pk=upload_id, status=Upload.Status.QUEUED).update(
        status=Upload.Status.PROCESSING
    )
    if not claimed:
        return None
    upload = Upload.objects.select_related("owner").get(pk=upload_id)
    dest = extraction_dir(upload)
    try:
        if dest.exists():  # a previous attempt died half-way
            shutil.rmtree(dest)
        extract_archive(Path(upload.archive.path), dest, archive_limits())
        known = set(Competition.objects.filter(retired=False).values_list("slug", flat=True))
        contents = read_upload(dest, known_competitions=known, seeds=_seeds(upload.metadata))
        with transaction.atomic():
            experiment = _experiment_from(upload, contents)
            Upload.objects.filter(pk=upload.pk).update(
                experiment=experiment, kind=contents.kind, warnings=list(contents.warnings)
            )
    except (ArchiveRefused, UploadLayoutError, UnicodeDecodeError, ValueError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        upload_fail(upload.pk, str(exc))
        return Upload.objects.get(pk=upload.pk)
    except Exception:
        # Not the upload's fault (storage or database trouble): hand it back for a retry.
        shutil.rmtree(dest, ignore_errors=True)
        Upload.objects.filter(pk=upload.pk, status=Upload.Status.PROCESSING).update(
            status=Upload.Status.QUEUED
        )
        raise
    upload.refresh_from_db()
    if contents.kind == "reports":
        Upload.objects.filter(pk=upload.pk).update(status=Upload.Status.GRADED)
        from webapp.results.tasks import refresh_experiment_aggregate_task

        refresh_experiment_aggregate_task.delay_on_commit(upload.experiment_id)
    else:
        from webapp.results.tasks import grade_run_task

        for run_id in Run.objects.filter(experiment=upload.experiment).values_list("pk", flat=True):
            grade_run_task.delay_on_commit(run_id)
    return upload


def _seeds(metadata: dict) -> dict[str, int] | None:
    seeds = metadata.get("seeds")
    return {str(k): int(v) for k, v in seeds.items()} if isinstance(seeds, dict) and seeds else None


def _experiment_from(upload: Upload, contents) -> Experiment:
    meta = upload.metadata
    agent = agent_get_or_create(
        meta.get("scaffold", ""), meta.get("model", ""), meta.get("agent_version", "")
    )
    fields = {k: meta[k] for k in EXPERIMENT_FIELDS if meta.get(k) not in (None, "")}
    fields["source_available"] = bool(meta.get("source_url"))
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
        name=name, agent=agent, source=Experiment.Source.VERIFIED, owner=upload.owner, **fields
    )
    competitions = {c.slug: c for c in Competition.objects.all()}
    Run.objects.bulk_create(
        [
            Run(
                experiment=experiment,
                competition=competitions[run.competition_id],
                seed=run.seed,
                run_group=run.run_group,
                submission_path=str(run.submission_path) if run.submission_path else "",
            )
            for run in contents.runs
        ]
    )
    return experiment


def upload_finish_if_done(experiment_id: int) -> bool:
    """Mark the experiment's upload graded once no run is waiting or grading; True then."""
    pending = Run.objects.filter(
        experiment_id=experiment_id, status__in=[Run.Status.QUEUED, Run.Status.RUNNING]
    ).exists()
    if not pending:
        Upload.objects.filter(experiment_id=experiment_id, status=Upload.Status.PROCESSING).update(
            status=Upload.Status.GRADED
        )
    return not pending


def experiment_regrade(experiment: Experiment) -> int:
    """Queue every run of a verified experiment for grading again (after a grader fix).
    Each new report records its grader version; earlier reports stay, not current."""
    from webapp.results.tasks import grade_run_task

    if experiment.source != Experiment.Source.VERIFIED:
        raise ValueError(
            "only experiments graded here can be re-graded; reported ones are kept as reported"
        )
    with transaction.atomic():
        run_ids = list(
            Run.objects.filter(experiment=experiment)
            .exclude(status=Run.Status.RUNNING)
            .values_list("pk", flat=True)
        )
        Run.objects.filter(pk__in=run_ids).update(status=Run.Status.QUEUED, claimed_by="", error="")
        Upload.objects.filter(experiment=experiment).update(status=Upload.Status.PROCESSING)
        for run_id in run_ids:
            grade_run_task.delay_on_commit(run_id)
    return len(run_ids)
