"""Submitted agents: receive an archive (checked before anything is kept), review it, build
it offline on a run host (``runner.agent_submission``), and offer the built ones to the
runs app as agents it can launch. Reproductions: ``webapp.agentsubs.reproductions``."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import logging
import shutil
import tempfile
from pathlib import Path

import yaml
from django.conf import settings
from django.core.files import File
from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.utils import timezone

from benchmark.archive import extract_archive
from benchmark.archive_rules import ArchiveLimits, ArchiveRefused, human_size
from runner.agent_definition import AgentConfigError, AgentDefinition, load_agent
from runner.agent_submission import AgentRefused, check_dockerfile, read_hashed_pins
from runner.backend import HarnessError
from webapp import work
from webapp.agentsubs.models import AgentSubmission
from webapp.core.visibility import has_perm
from webapp.results.models import Experiment

log = logging.getLogger(__name__)

SUBMIT = "agentsubs.submit_agents"
APPROVE = "agentsubs.approve_agents"
MAX_FILES = 2000
BUILD_LOG_MAX_CHARS = 200_000


class SubmissionInvalid(ValueError):
    """Bad input: ``field`` names what is wrong, the message says how."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def _kind():
    return work.kind_for("agent_build")


def _limits() -> ArchiveLimits:
    cap = settings.MLEBOARD_AGENT_ARCHIVE_MAX_BYTES
    return ArchiveLimits(
        max_members=MAX_FILES, max_total_bytes=cap, max_file_bytes=cap, max_ratio=200.0
    )


def _spool(uploaded_file) -> Path:
    cap = settings.MLEBOARD_AGENT_ARCHIVE_MAX_BYTES
    Path(settings.MEDIA_ROOT).mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(delete=False, prefix="upload-", dir=settings.MEDIA_ROOT)
    size = 0
    try:
        with handle:
            for chunk in uploaded_file.chunks():
                size += len(chunk)
                if size > cap:
                    raise SubmissionInvalid(
                        "archive", f"the archive is larger than this site's {human_size(cap)}"
                    )
                handle.write(chunk)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    return Path(handle.name)


def _agent_root(folder: Path) -> Path:
    """The folder holding agent.yaml: the archive's top, or its one top folder."""
    if (folder / "agent.yaml").is_file():
        return folder
    children = [p for p in folder.iterdir()]
    if len(children) == 1 and children[0].is_dir() and (children[0] / "agent.yaml").is_file():
        return children[0]
    raise SubmissionInvalid(
        "archive", "no agent.yaml at the archive's top (or in its one top folder)"
    )


def contents_sha256(root: Path) -> str:
    """The sha256 of an agent folder's files, names and contents, in name order: the same
    agent sent as a zip or a tar has the same."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def read_submission(root: Path) -> tuple[AgentDefinition, str]:
    """The agent in ``root`` and its requirements' text, or ``SubmissionInvalid`` saying
    what a submitted agent must have that it lacks."""
    try:
        agent = load_agent(root)
    except AgentConfigError as exc:
        message = str(exc).replace(str(root) + "/", "").replace(str(root), "the archive")
        raise SubmissionInvalid("archive", message) from None
    if agent.egress or agent.build_network:
        raise SubmissionInvalid(
            "archive",
            "a submitted agent runs and builds with no network: egress and build_network "
            "must be false",
        )
    if not agent.wheels:
        raise SubmissionInvalid(
            "archive",
            "agent.yaml must name a hash-pinned requirements file (wheels: requirements.txt)",
        )
    requirements = (root / agent.wheels).read_text(errors="replace")
    try:
        read_hashed_pins(requirements)
        check_dockerfile((root / "Dockerfile").read_text(errors="replace"))
    except AgentRefused as exc:
        field = "requirements" if exc.reason == "requirements" else "dockerfile"
        raise SubmissionInvalid(field, str(exc)) from None
    return agent, requirements


def submission_create(*, owner, uploaded_file, claims: int | None = None) -> AgentSubmission:
    """Check the archive (size, zip bombs, traversal, links, special files; agent.yaml, a
    hash-pinned requirements file, a Dockerfile FROM the base image) and keep it as the
    next version of its agent. Raises ``SubmissionInvalid`` with nothing kept."""
    if not has_perm(owner, SUBMIT):
        raise PermissionError("you do not have the permission to submit agents")
    claimed = None
    if claims is not None:
        from webapp.results.selectors import experiments_visible_to

        claimed = experiments_visible_to(owner).filter(pk=claims).first()
        if claimed is None:
            raise SubmissionInvalid("experiment", f"no experiment {claims} that you can see")
    spooled = _spool(uploaded_file)
    name = Path(getattr(uploaded_file, "name", "") or "agent.tar.gz").name[:255]
    scratch = Path(tempfile.mkdtemp(prefix="agent-check-", dir=settings.MEDIA_ROOT))
    try:
        try:
            extract_archive(spooled, scratch / "agent", _limits(), filename=name)
        except ArchiveRefused as exc:
            raise SubmissionInvalid("archive", str(exc)) from None
        root = _agent_root(scratch / "agent")
        agent, requirements = read_submission(root)
        files = [
            {"name": p.relative_to(root).as_posix(), "size": p.stat().st_size}
            for p in sorted(root.rglob("*"))
            if p.is_file()
        ]
        sha256 = contents_sha256(root)
        definition = yaml.safe_load((root / "agent.yaml").read_text()) or {}
        for _attempt in range(3):  # two submissions of one name at once: the next version
            version = (
                AgentSubmission.objects.filter(name=agent.name).aggregate(v=Max("version"))["v"]
                or 0
            ) + 1
            submission = AgentSubmission(
                owner=owner,
                name=agent.name,
                version=version,
                sha256=sha256,
                original_name=name,
                files=files,
                definition=_plain(definition),
                requirements=requirements,
                claims=claimed,
            )
            with open(spooled, "rb") as handle:
                submission.archive.save(name[:100], File(handle), save=False)
            try:
                with transaction.atomic():
                    submission.save()
                return submission
            except IntegrityError:
                submission.archive.delete(save=False)
        raise SubmissionInvalid("archive", "too many versions of this agent at once; send again")
    finally:
        spooled.unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)


def _plain(value):
    """agent.yaml's values as JSON can hold them (YAML dates and the like as text)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def submission_review(submission: AgentSubmission, *, by, approve: bool, reason: str) -> bool:
    """Approve (its build is sent) or refuse ``submission`` with ``reason``, which its
    submitter sees. False when it was no longer waiting for review."""
    if not has_perm(by, APPROVE):
        raise PermissionError("you do not have the permission to approve agents")
    reason = reason.strip()
    if not approve and not reason:
        raise SubmissionInvalid("reason", "say why it is refused: the submitter sees it")
    S = AgentSubmission.Status
    now = timezone.now()
    fields = {"reason": reason, "reviewed_by": by, "reviewed_at": now, "status_since": now}
    waiting = Q(status=S.SUBMITTED)
    with transaction.atomic():
        if approve:
            moved = work.move(_kind(), submission.pk, S.APPROVED, where=waiting, **fields)
            if moved:
                work.send_on_commit(_kind(), submission.pk)
        else:
            moved = work.finish(_kind(), submission.pk, S.REFUSED, where=waiting, **fields)
    return moved


def submission_folder(submission: AgentSubmission) -> Path:
    """Where a built submission's files are, for its runs (the media folder is shared by
    the site and its run hosts)."""
    return Path(settings.MEDIA_ROOT) / "agent-builds" / submission.site_name / "agent"


def submission_build(submission_id: int, token: str) -> None:
    """Build an approved submission on this host: unpack it, resolve its wheels, build its
    image with no network. Ends built, refused (nothing left behind: no image, no folder)
    or, after the engine failed past the attempts, failed."""
    kind = _kind()
    if not work.claim(kind, submission_id, token, reclaim_own=True):
        return
    submission = AgentSubmission.objects.get(pk=submission_id)
    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)

    folder = submission_folder(submission)
    with work.heartbeat(AgentSubmission, submission_id, token):
        try:
            image = _build(submission, folder, say)
        except AgentRefused as exc:
            shutil.rmtree(folder.parent, ignore_errors=True)
            say(f"refused: {exc}")
            work.finish(
                kind,
                submission_id,
                AgentSubmission.Status.REFUSED,
                token=token,
                reason=f"the build refused it: {exc}",
                refusal=exc.reason,
                build_log=_log_text(lines),
                status_since=timezone.now(),
            )
            return
        except (HarnessError, OSError, Exception) as exc:  # the engine or the host's
            log.warning("build of submission %s failed", submission_id, exc_info=True)
            shutil.rmtree(folder.parent, ignore_errors=True)
            say(f"the host failed: {exc}")
            work.holding(kind, submission_id, token).update(build_log=_log_text(lines))
            work.retry_or_fail(kind, submission_id, token, "transient", error=str(exc)[:500])
            return
    work.finish(
        kind,
        submission_id,
        token=token,
        image_ref=image.ref,
        image_bytes=image.size_bytes,
        build_seconds=image.seconds,
        build_log=_log_text(lines),
        reason=submission.reason,
        status_since=timezone.now(),
    )


def _build(submission: AgentSubmission, folder: Path, say):
    import docker

    from runner.agent_submission import build_submitted_image

    shutil.rmtree(folder.parent, ignore_errors=True)  # what a dead attempt left
    say(f"unpacking {submission.original_name} (sha256 of its files {submission.sha256})")
    with (
        submission.archive.open("rb") as source,
        tempfile.NamedTemporaryFile(dir=settings.MEDIA_ROOT, prefix="upload-") as copy,
    ):
        shutil.copyfileobj(source, copy)
        copy.flush()
        try:
            extract_archive(
                Path(copy.name),
                folder.parent / "unpacked",
                _limits(),
                filename=submission.original_name,
            )
        except ArchiveRefused as exc:
            raise AgentRefused(str(exc), "archive") from None
    _agent_root(folder.parent / "unpacked").rename(folder)
    shutil.rmtree(folder.parent / "unpacked", ignore_errors=True)
    agent = dataclasses.replace(load_agent(folder), name=submission.site_name)
    return build_submitted_image(
        docker.from_env(),
        agent,
        agent.wheels,
        max_bytes=settings.MLEBOARD_AGENT_IMAGE_MAX_BYTES,
        log=say,
    )


def _log_text(lines: list[str]) -> str:
    text = "\n".join(lines)
    return text[-BUILD_LOG_MAX_CHARS:]


def submitted_agents() -> dict[str, AgentDefinition]:
    """The built submissions this site can run, by their site names."""
    agents = {}
    for submission in AgentSubmission.objects.filter(status=AgentSubmission.Status.BUILT):
        folder = submission_folder(submission)
        if not (folder / "agent.yaml").is_file():
            continue
        try:
            agents[submission.site_name] = dataclasses.replace(
                load_agent(folder), name=submission.site_name
            )
        except AgentConfigError:
            log.warning("built submission %s no longer loads", submission.pk, exc_info=True)
    return agents


def agents_sweep(batch: int) -> int:
    """Submissions past their state's deadline fail, saying which: not reviewed within
    ``MLEBOARD_AGENT_REVIEW_DAYS``, not built within ``MLEBOARD_AGENT_BUILD_DEADLINE_S`` of
    the approval (waiting or building). Returns how many."""
    S = AgentSubmission.Status
    now = timezone.now()
    kind = _kind()
    review = now - dt.timedelta(days=settings.MLEBOARD_AGENT_REVIEW_DAYS)
    build = now - dt.timedelta(seconds=settings.MLEBOARD_AGENT_BUILD_DEADLINE_S)
    ended = 0
    for status, before, why in (
        (S.SUBMITTED, review, "nobody reviewed it in time; submit it again"),
        (S.APPROVED, build, "no run host built it in time; submit it again"),
        (S.BUILDING, build, "its build did not finish in time; submit it again"),
    ):
        pks = AgentSubmission.objects.filter(status=status, status_since__lt=before).values_list(
            "pk", flat=True
        )[:batch]
        for pk in pks:
            ended += work.fail(kind, pk, why, where=None, status_since=now)
    return ended


def experiment_claimable(user, pk: int) -> Experiment | None:
    from webapp.results.selectors import experiments_visible_to

    return experiments_visible_to(user).filter(pk=pk).first()
