"""Familiarity (the paper's Figure 5): a base model's mean token probability over each
competition's texts, measured by ``benchmark.familiarity`` and stored per model,
competition and version of the texts.

The texts are a competition's description (imported from MLE-bench) and those an operator
adds (``manage.py add_familiarity_text`` or the admin), such as its most-read discussion
posts. A measurement is work the database owns (``webapp.work``; its states in
docs/lifecycle.md). Asking again for texts already measured does nothing (one row per
model, competition and version); a failure keeps its reason until it is asked again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from benchmark.familiarity import Endpoint, FamiliarityError, competition_familiarity, score_text
from webapp import work
from webapp.competitions.models import Competition, Familiarity, FamiliarityText
from webapp.work import heartbeat, new_token, send_on_commit

Status = Familiarity.Status
MAX_TEXT_BYTES = 2 * 1024**2
DESCRIPTION = "description.md"  # how a competition's description is named among its texts
NOT_CONFIGURED = (
    "no familiarity endpoint is configured: set MLEBOARD_FAMILIARITY_BASE_URL (an "
    "OpenAI-compatible completions endpoint with prompt log-probabilities) and "
    "MLEBOARD_FAMILIARITY_MODEL"
)
NOTHING_TO_MEASURE = (
    "nothing to measure: no description is imported (manage.py import_mlebench) and no "
    "text was added (manage.py add_familiarity_text)"
)


class FamiliarityRefused(ValueError):
    """A request that cannot be met; the message says what to do."""


def endpoint_from_settings() -> Endpoint | None:
    """The configured endpoint, or None when MLEBOARD_FAMILIARITY_* leave it off."""
    if not (settings.MLEBOARD_FAMILIARITY_BASE_URL and settings.MLEBOARD_FAMILIARITY_MODEL):
        return None
    try:
        return Endpoint(
            base_url=settings.MLEBOARD_FAMILIARITY_BASE_URL,
            model=settings.MLEBOARD_FAMILIARITY_MODEL,
            api_key=settings.MLEBOARD_FAMILIARITY_API_KEY,
            timeout_s=float(settings.MLEBOARD_FAMILIARITY_TIMEOUT_S),
            max_tokens=settings.MLEBOARD_FAMILIARITY_MAX_TOKENS,
        )
    except FamiliarityError as exc:
        raise FamiliarityRefused(f"MLEBOARD_FAMILIARITY_*: {exc}") from None


def competition_texts(competition: Competition) -> list[tuple[str, str]]:
    """(name, text) of what a competition's familiarity is measured on, in a fixed order:
    its description, then the added texts by name."""
    texts = []
    if competition.description.strip():
        texts.append((DESCRIPTION, competition.description))
    texts += list(competition.familiarity_texts.order_by("name").values_list("name", "text"))
    return texts


def texts_version(texts: list[tuple[str, str]]) -> str:
    """A digest of the texts' names and contents: the version a measurement is of."""
    digest = hashlib.sha256()
    for name, text in texts:
        digest.update(f"{name}\0{hashlib.sha256(text.encode('utf-8')).hexdigest()}\n".encode())
    return digest.hexdigest()


# ---------------------------------------------------------------- writes


def familiarity_text_add(competition: Competition, name: str, data: bytes) -> FamiliarityText:
    """Add (or replace, by name) a further text of ``competition``: UTF-8, no NUL, at most
    MAX_TEXT_BYTES. Raises FamiliarityRefused saying what is wrong with it."""
    name = (name or "").strip()
    if not name or len(name) > 200 or any(ord(c) < 32 or c in "/\\" for c in name):
        raise FamiliarityRefused(
            "a text needs a name of 1-200 characters without slashes or control characters"
        )
    if name == DESCRIPTION:
        raise FamiliarityRefused(f"{DESCRIPTION} is the competition's own description")
    if len(data) > MAX_TEXT_BYTES:
        raise FamiliarityRefused(
            f"{name}: {len(data):,} bytes, more than {MAX_TEXT_BYTES // 1024**2} MiB"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FamiliarityRefused(f"{name}: not UTF-8 text (byte {exc.start})") from None
    if "\x00" in text:
        raise FamiliarityRefused(f"{name}: holds a NUL character, so it is not a text file")
    if not text.strip():
        raise FamiliarityRefused(f"{name}: empty")
    row, _ = FamiliarityText.objects.update_or_create(
        competition=competition,
        name=name,
        defaults={"text": text, "sha256": hashlib.sha256(data).hexdigest()},
    )
    return row


@dataclass
class Requested:
    """What asking for one competition's familiarity did: its measurement row (new, queued
    again, or already there) or why there is none."""

    competition_id: str
    row: Familiarity | None = None
    reason: str = ""


def familiarity_request(
    slugs: list[str] | None = None, *, dispatch: bool = True
) -> list[Requested]:
    """Ask for the familiarity of the named competitions (all when none is named) with
    the configured model: one row per competition at its texts' current version, queued
    unless it was measured already; a failed one is queued again. With ``dispatch`` the
    rows are sent to the workers after commit. Raises FamiliarityRefused when no endpoint
    is configured or a name is not a competition."""
    endpoint = endpoint_from_settings()
    if endpoint is None:
        raise FamiliarityRefused(NOT_CONFIGURED)
    competitions = Competition.objects.order_by("slug")
    if slugs:
        competitions = competitions.filter(slug__in=slugs)
        unknown = sorted(set(slugs) - set(competitions.values_list("slug", flat=True)))
        if unknown:
            raise FamiliarityRefused(f"not competitions of this site: {', '.join(unknown[:10])}")
    out = []
    for competition in competitions.prefetch_related("familiarity_texts"):
        texts = competition_texts(competition)
        if not texts:
            out.append(Requested(competition.slug, reason=NOTHING_TO_MEASURE))
            continue
        with transaction.atomic():
            row, _ = Familiarity.objects.get_or_create(
                competition=competition,
                model=endpoint.model,
                texts_version=texts_version(texts),
            )
            if row.status == Status.FAILED:
                work.restart(work.kind_for("familiarity"), [row.pk], where=Q(status=Status.FAILED))
                row.refresh_from_db()
            if dispatch and row.status == Status.QUEUED:
                send_on_commit("familiarity", row.pk)
        out.append(Requested(competition.slug, row=row))
    return out


def familiarity_measure(pk: int, token: str | None = None) -> Familiarity | None:
    """Measure one queued row: claim it, score each text, store the value (done) or the
    reason it could not be measured (failed). None when another worker holds it or it
    is not waiting."""
    token = token or new_token()
    if not work.claim(work.kind_for("familiarity"), pk, token, reclaim_own=True):
        return None
    row = Familiarity.objects.select_related("competition").get(pk=pk)
    try:
        endpoint = endpoint_from_settings()
    except FamiliarityRefused as exc:
        return familiarity_fail(pk, token, str(exc))
    if endpoint is None:
        return familiarity_fail(pk, token, NOT_CONFIGURED)
    if endpoint.model != row.model:
        return familiarity_fail(
            pk,
            token,
            f"the endpoint is now set to model {endpoint.model!r}, not {row.model!r}: ask "
            "again to measure with the model configured",
        )
    texts = competition_texts(row.competition)
    if texts_version(texts) != row.texts_version:
        return familiarity_fail(
            pk, token, "the competition's texts changed since this was asked for: ask again"
        )
    scored = []
    with heartbeat(Familiarity, pk, token):
        for name, text in texts:
            try:
                scored.append((name, score_text(text, endpoint)))
            except FamiliarityError as exc:
                return familiarity_fail(pk, token, f"{name}: {exc}")
    done = work.finish(
        work.kind_for("familiarity"),
        pk,
        token=token,
        value=competition_familiarity([score for _, score in scored]),
        tokens=sum(score.tokens for _, score in scored),
        texts=[
            {
                "name": name,
                "value": score.value,
                "tokens": score.tokens,
                "chunks": len(score.chunks),
            }
            for name, score in scored
        ],
        error="",
        computed_at=timezone.now(),
    )
    if done:
        _pages_changed()
    return Familiarity.objects.get(pk=pk)


def familiarity_fail(pk: int, token: str, reason: str) -> Familiarity:
    """End a claimed measurement as failed, with ``reason``."""
    if work.fail(work.kind_for("familiarity"), pk, reason, token=token, computed_at=timezone.now()):
        _pages_changed()
    return Familiarity.objects.get(pk=pk)


def _pages_changed() -> None:
    from webapp.core import changes

    changes.catalogue_changed()


# ---------------------------------------------------------------- reads


def familiarity_by_model(slugs) -> dict[str, dict[str, float]]:
    """model -> competition slug -> its newest measured familiarity (any version of the
    texts: a newer one replaces it once measured)."""
    out: dict[str, dict[str, float]] = {}
    rows = (
        Familiarity.objects.filter(status=Status.DONE, competition__slug__in=list(slugs))
        .order_by("model", "competition__slug", "-computed_at", "-pk")
        .values_list("model", "competition__slug", "value")
    )
    for model, slug, value in rows:
        out.setdefault(model, {}).setdefault(slug, value)
    return out


def competition_familiarity_rows(competition: Competition) -> list[dict]:
    """What the competition's page and API show, per model: the measurement of the texts
    as they are now (whatever its status, a failure with its reason), or else the newest
    done one of earlier texts (``current``: False)."""
    version = texts_version(competition_texts(competition))
    chosen: dict[str, Familiarity] = {}
    for row in competition.familiarity.order_by("model", "-created_at", "-pk"):
        held = chosen.get(row.model)
        if held is None or (
            held.texts_version != version
            and (
                row.texts_version == version
                or (held.status != Status.DONE and row.status == Status.DONE)
            )
        ):
            chosen[row.model] = row
    return [
        {
            "model": row.model,
            "value": row.value if row.status == Status.DONE else None,
            "tokens": row.tokens if row.status == Status.DONE else None,
            "status": row.status,
            "error": row.error,
            "current": row.texts_version == version,
            "texts": row.texts,
            "computed_at": row.computed_at,
        }
        for row in sorted(chosen.values(), key=lambda r: r.model)
    ]
