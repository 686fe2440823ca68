"""Integrity checks on the site: reference corpora stored in versions, each graded run
checked after grading (similarity to the competition's references and to other owners'
runs, the rule-violation detectors, the optional LLM judge), flagged runs reviewed by a
person, and a disqualified run counted as no medal in the figures."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max, Q
from django.utils import timezone

from benchmark.integrity.common_code import shared_code_filter, template_fingerprints
from benchmark.integrity.detectors import scan_run
from benchmark.integrity.winnowing import CorpusMatch, best_match, file_fingerprints, language_of
from runner.spec import CODE_DIR, LOGS_DIR
from webapp import work
from webapp.competitions.models import Competition
from webapp.core import changes
from webapp.core.visibility import visible_to
from webapp.integrity.models import ReferenceCorpus, ReferenceFile, RunCheck, ScaffoldTemplate
from webapp.integrity.reasons import llm_fact, peer_fact, reference_fact, rule_fact
from webapp.integrity.references import ReferenceEntry
from webapp.results.models import Run
from webapp.work import send, send_on_commit

log = logging.getLogger(__name__)

CODE_MAX_BYTES = 2 * 1024**2  # a code file is compared up to this many bytes
MAX_CODE_FILES = 200  # per run
MAX_PEER_RUNS = 200  # other owners' runs compared with, most recent first
Status = RunCheck.Status


# ---------------------------------------------------------------- settings


def similarity_threshold() -> float:
    return float(settings.MLEBOARD_SIMILARITY_THRESHOLD)


def llm_judge_config() -> dict | None:
    """The LLM judge's endpoint, or None when it is not configured (the default)."""
    base_url = settings.MLEBOARD_INTEGRITY_LLM_BASE_URL
    model = settings.MLEBOARD_INTEGRITY_LLM_MODEL
    if not base_url or not model:
        return None
    return {
        "base_url": base_url,
        "api_key": settings.MLEBOARD_INTEGRITY_LLM_API_KEY,
        "model": model,
    }


# ---------------------------------------------------------------- reference corpora


@transaction.atomic
def corpus_create(
    competition: Competition,
    entries: list[ReferenceEntry],
    *,
    source_name: str = "",
    note: str = "",
    user=None,
) -> ReferenceCorpus:
    """Store ``entries`` as the competition's next reference version and make it the
    current one; earlier versions stay. Graded runs of the competition are checked
    again against it."""
    Competition.objects.select_for_update().filter(pk=competition.pk).first()
    version = (competition.reference_corpora.aggregate(v=Max("version"))["v"] or 0) + 1
    competition.reference_corpora.update(is_current=False)
    corpus = ReferenceCorpus.objects.create(
        competition=competition,
        version=version,
        source_name=source_name[:300],
        note=note,
        created_by=user,
    )
    ReferenceFile.objects.bulk_create(
        [
            ReferenceFile(
                corpus=corpus,
                path=e.path[:500],
                source=e.source,
                language=e.language,
                text=e.text,
                lines=e.lines,
            )
            for e in entries
        ]
    )
    check_due(
        Run.objects.filter(competition=competition, status=Run.Status.GRADED).values_list(
            "pk", flat=True
        )
    )
    return corpus


def corpus_import_folder(
    competition_id: str, folder: Path, note: str = "", user=None
) -> tuple[ReferenceCorpus | None, bool]:
    """The reference code under ``folder`` as the competition's current corpus: a new
    version when it differs from the current one (True), else the current one (False).
    None when the competition is unknown."""
    from webapp.integrity.references import read_references_folder

    competition = Competition.objects.filter(slug=competition_id).first()
    if competition is None:
        return None, False
    entries = read_references_folder(folder, note or f"from {folder.name}/ of the checkout")
    current = current_corpus(competition.pk)
    if current is not None:
        stored = sorted(current.files.values_list("path", "source", "text"))
        if stored == sorted((e.path, e.source, e.text) for e in entries):
            return current, False
    corpus = corpus_create(competition, entries, source_name=str(folder.name), note=note, user=user)
    return corpus, True


@transaction.atomic
def scaffold_template_store(
    scaffold, path: str, text: str, *, note: str = "", user=None, template=None
) -> ScaffoldTemplate:
    """Store (or replace) a scaffold's template code; the scaffold's graded runs are
    checked again, since their peer comparisons change."""
    template = template or ScaffoldTemplate(scaffold=scaffold, created_by=user)
    template.scaffold, template.path, template.text, template.note = scaffold, path, text, note
    template.save()
    check_scaffold_again(scaffold.pk)
    return template


def check_scaffold_again(scaffold_id: int) -> int:
    """Ask again for the checks of the scaffold's graded runs."""
    return check_due(
        Run.objects.filter(
            experiment__agent__scaffold_id=scaffold_id, status=Run.Status.GRADED
        ).values_list("pk", flat=True)
    )


def current_corpus(competition_id: int) -> ReferenceCorpus | None:
    return ReferenceCorpus.objects.filter(competition_id=competition_id, is_current=True).first()


# ---------------------------------------------------------------- asking for checks


def check_due(run_ids) -> int:
    """Ask for the checks of these runs (after grading, a new corpus, an admin's
    request): each is marked due and sent after commit. Decisions already taken stay."""

    now = timezone.now()
    count = 0
    for run_id in list(run_ids):
        check, created = RunCheck.objects.get_or_create(run_id=run_id)
        if not created and check.due_since is not None:
            # Already asked for, perhaps running now: a new mark tells that check to go
            # round once more when it ends (the sweeper sees to a lost one).
            if RunCheck.objects.filter(pk=check.pk, due_since__isnull=False).update(due_since=now):
                continue
        RunCheck.objects.filter(pk=check.pk).update(due_since=now, attempts=0)
        send_on_commit("integrity_check", run_id)
        count += 1
    return count


def checks_after_grading(run_ids: list[int], status: str) -> None:
    """The end hook of grading (registered by the integrity app): a graded run's checks
    are asked for."""
    if status == Run.Status.GRADED:
        check_due(run_ids)


def sweep_checks(batch: int = 1000) -> int:
    """Send again the checks that stayed due past ``MLEBOARD_STALE_AFTER_S`` (their
    task was lost with its worker or never left); after ``MLEBOARD_MAX_ATTEMPTS`` sends
    the check is given up with a note, and the run stays "not checked"."""

    budget = work.kind_for("integrity_check").budget  # work.attempts_spent, as a query
    late = RunCheck.objects.filter(due_since__lt=work.stale_before())
    late.filter(attempts__gte=budget).update(
        due_since=None,
        note=f"the check was sent {budget} times and never finished; "
        "ask for it again from the review page",
    )
    sent = 0
    for check in late.exclude(attempts__gte=budget)[:batch]:
        if not send("integrity_check", check.run_id):
            break
        RunCheck.objects.filter(pk=check.pk).update(
            due_since=timezone.now(), attempts=F("attempts") + 1
        )
        sent += 1
    return sent


# ---------------------------------------------------------------- the check


def run_folder(run: Run) -> Path | None:
    from webapp.runs.run_files import result_run_folder

    return result_run_folder(run)


def code_files(folder: Path) -> dict[str, str]:
    """The run's code as compared: ``.py``, ``.ipynb`` and ``.R`` files under ``code/``
    (symlinks not followed), each read up to ``CODE_MAX_BYTES``, at most
    ``MAX_CODE_FILES`` of them."""
    root = folder / CODE_DIR
    files: dict[str, str] = {}
    if not root.is_dir() or root.is_symlink():
        return files
    for path in sorted(root.rglob("*")):
        if len(files) >= MAX_CODE_FILES:
            break
        if path.is_symlink() or not path.is_file() or language_of(path.name) is None:
            continue
        if any(part.startswith(".") or part == "__pycache__" for part in path.parts[-4:]):
            continue
        with path.open("rb") as handle:
            data = handle.read(CODE_MAX_BYTES)
        files[path.relative_to(folder).as_posix()] = data.decode("utf-8", errors="replace")
    return files


def peer_fraction() -> float:
    return float(settings.MLEBOARD_PEER_MAX_FINGERPRINT_PERCENTAGE)


def _owner_key(run: Run) -> tuple[str, int]:
    """Whose work a run is: its owner, or (no owner: an imported experiment) its
    experiment."""
    owner_id = run.experiment.owner_id
    return ("owner", owner_id) if owner_id is not None else ("experiment", run.experiment_id)


def _competition_runs(run: Run) -> list[tuple[Run, dict[str, str]]]:
    """The competition's other graded runs with code (the most recent
    ``MAX_PEER_RUNS``, any owner), each with its code files."""
    others = (
        Run.objects.filter(competition_id=run.competition_id, status=Run.Status.GRADED)
        .exclude(pk=run.pk)
        .select_related("experiment__agent", "competition")
        .order_by("-pk")[:MAX_PEER_RUNS]
    )
    found = []
    for other in others:
        folder = run_folder(other)
        theirs = code_files(folder) if folder is not None else {}
        if theirs:
            found.append((other, theirs))
    return found


def _templates(scaffold_ids) -> dict[int, frozenset[int]]:
    """Each scaffold's template fingerprints (``ScaffoldTemplate``)."""
    by_scaffold: dict[int, dict[str, str]] = {}
    for scaffold_id, path, text in ScaffoldTemplate.objects.filter(
        scaffold_id__in=set(scaffold_ids)
    ).values_list("scaffold_id", "path", "text"):
        by_scaffold.setdefault(scaffold_id, {})[path] = text
    return {sid: template_fingerprints(files) for sid, files in by_scaffold.items()}


def _always(submission_first: bool):
    """``best_match``'s order when all of one side's files are given to Dolos first."""
    return lambda submission, reference: submission_first


def _best_peer(run: Run, code: dict[str, str]) -> tuple[tuple[Run, CorpusMatch] | None, dict]:
    """The other owner's run most similar to ``code``, and what was set aside: code in
    more than ``MLEBOARD_PEER_MAX_FINGERPRINT_PERCENTAGE`` of the owners with runs on the
    competition (one document per owner, so one owner's seeds count once and a copy
    repeated over seeds cannot make itself look common; not applied while fewer owners
    than it takes to keep what two of them share), and the templates of both runs'
    scaffolds. A pair's figure is Dolos' with the older run's files given first."""
    runs = _competition_runs(run)
    mine = _owner_key(run)
    documents: dict[tuple[str, int], list] = {mine: []}
    for name, text in code.items():
        documents[mine].append(file_fingerprints(name, text))
    for other, theirs in runs:
        prints = documents.setdefault(_owner_key(other), [])
        prints.extend(file_fingerprints(name, text) for name, text in theirs.items())
    shared = shared_code_filter(list(documents.values()), peer_fraction())
    templates = _templates(
        [run.experiment.agent.scaffold_id] + [o.experiment.agent.scaffold_id for o, _ in runs]
    )
    own_template = templates.get(run.experiment.agent.scaffold_id, frozenset())
    best = None
    for other, theirs in runs:
        if _owner_key(other) == mine:
            continue
        ignored = shared.ignored | own_template
        ignored |= templates.get(other.experiment.agent.scaffold_id, frozenset())
        # With fingerprints ignored, Dolos' figure depends on which file it is given
        # first: the older run's, so that both runs' checks give the pair one figure.
        left = _always(run.pk < other.pk)
        match = best_match(code, theirs, ignored=ignored, left=left)
        if match is not None and (best is None or match.similarity > best[1].similarity):
            best = (other, match)
    used = own_template | (
        templates.get(best[0].experiment.agent.scaffold_id, frozenset()) if best else frozenset()
    )
    facts = {
        **shared.as_dict(),
        "template_fingerprints": len(used),
        "owners": len(documents),
        "runs": len(runs) + 1,
    }
    return best, facts


def _llm_review(folder: Path) -> dict:
    from benchmark.integrity.llm_judge import JudgeError, judge

    config = llm_judge_config()
    if config is None:
        return {"configured": False}
    try:
        return {"configured": True, **judge(folder, **config)}
    except JudgeError as exc:
        return {"configured": True, "model": config["model"], "error": str(exc)}


def _fragments(match: CorpusMatch) -> list[dict]:
    return [f.as_dict() for f in match.fragments[:200]]


def run_check(run_id: int) -> RunCheck | None:
    """Check one graded run and store the outcome. A decision already taken by a person
    is kept (the evidence is refreshed); the experiment's figures are marked due."""
    from webapp.results.grading.aggregates import figures_due

    run = Run.objects.select_related("experiment__agent", "competition").filter(pk=run_id).first()
    if run is None:
        return None
    check, _ = RunCheck.objects.get_or_create(run=run)
    asked_at = check.due_since
    if run.status != Run.Status.GRADED:
        RunCheck.objects.filter(pk=check.pk).update(
            due_since=None, note="the run is not graded (yet): nothing to check"
        )
        return check
    threshold = similarity_threshold()
    folder = run_folder(run)
    code = code_files(folder) if folder else {}
    findings = [f.as_dict() for f in scan_run(folder)] if folder else []
    fields: dict = {
        "checked_at": timezone.now(),
        "threshold": threshold,
        "files_checked": len(code),
        "findings": findings[:500],
        "similarity": None,
        "similarity_file": "",
        "reference": None,
        "fragments": [],
        "peer_similarity": None,
        "peer_file": "",
        "peer_run": None,
        "peer_run_file": "",
        "peer_fragments": [],
        "peer_filter": {},
        "corpus": None,
        "note": "",
        "llm_review": {"configured": llm_judge_config() is not None},
    }
    has_material = folder is not None and (code or (folder / LOGS_DIR).is_dir())
    if not has_material and not findings:
        fields["note"] = "no code or logs are stored for this run: nothing to check"
        status = Status.NOT_CHECKED
        reasons: list[dict] = []
    else:
        reasons = []
        corpus = current_corpus(run.competition_id)
        fields["corpus"] = corpus
        if corpus is not None and code:
            refs = {f.path: f for f in corpus.files.all()}
            match = best_match(code, {path: f.text for path, f in refs.items()})
            if match is not None:
                fields.update(
                    similarity=match.similarity,
                    similarity_file=match.submission,
                    reference=refs[match.reference],
                    fragments=_fragments(match),
                )
                if match.similarity >= threshold:
                    reasons.append(reference_fact(match.similarity, threshold, match.reference))
        if code:
            peer, fields["peer_filter"] = _best_peer(run, code)
            if peer is not None:
                other, match = peer
                fields.update(
                    peer_similarity=match.similarity,
                    peer_file=match.submission,
                    peer_run=other,
                    peer_run_file=match.reference,
                    peer_fragments=_fragments(match),
                )
                if match.similarity >= threshold:
                    reasons.append(peer_fact(match.similarity, threshold, other.pk))
        checks = sorted({f["check"] for f in findings})
        for name in checks:
            reasons.append(rule_fact(name, sum(1 for f in findings if f["check"] == name)))
        if folder is not None:
            review = _llm_review(folder)
            fields["llm_review"] = review
            yes = [k for k, v in review.get("answers", {}).items() if v["answer"] == "yes"]
            reasons.extend(llm_fact(name) for name in yes)
        status = Status.FLAGGED if reasons else Status.CLEAN

    with transaction.atomic():
        current = RunCheck.objects.select_for_update().get(pk=check.pk)
        if current.decided:
            status = current.status
        # Asked for again while this ran (a new corpus, say): stay due and go round again.
        again = current.due_since is not None and current.due_since != asked_at
        work.move(
            work.kind_for("integrity_check"),
            check.pk,
            status,
            reasons=reasons,
            due_since=current.due_since if again else None,
            **fields,
        )
        if again:
            send_on_commit("integrity_check", run.pk)
        figures_due([run.experiment_id])
    return RunCheck.objects.get(pk=check.pk)


# ---------------------------------------------------------------- review


class DecisionRefused(ValueError):
    pass


@transaction.atomic
def run_check_decide(check_id: int, *, decision: str, reason: str, user) -> RunCheck:
    """A person's decision on a checked run: ``reviewed_ok`` or ``disqualified``, with a
    reason. ``reopen`` puts a decided run back to flagged. The figures follow."""
    from webapp.results.grading.aggregates import figures_due

    check = RunCheck.objects.select_for_update().select_related("run").get(pk=check_id)
    reason = (reason or "").strip()
    if decision not in (Status.REVIEWED_OK, Status.DISQUALIFIED, "reopen"):
        raise DecisionRefused("decide reviewed_ok, disqualified or reopen")
    if decision != "reopen" and not reason:
        raise DecisionRefused("say why: the reason is shown with the decision")
    if check.status == Status.NOT_CHECKED and decision != Status.DISQUALIFIED:
        raise DecisionRefused("this run has not been checked yet")
    checks = work.kind_for("integrity_check")
    was_disqualified = check.status == Status.DISQUALIFIED
    if decision == "reopen":
        work.move(
            checks,
            check.pk,
            Status.FLAGGED if check.reasons else Status.CLEAN,
            decided_by=None,
            decided_at=None,
            decision_reason="",
        )
    else:
        work.move(
            checks,
            check.pk,
            decision,
            decided_by=user,
            decided_at=timezone.now(),
            decision_reason=reason,
        )
    if (decision == Status.DISQUALIFIED) != was_disqualified:
        changes.correction(
            "disqualified" if decision == Status.DISQUALIFIED else "reinstated",
            experiment_id=check.run.experiment_id,
            reason=reason,
            by=user,
            detail={"run_id": check.run_id},
        )
    figures_due([check.run.experiment_id])
    return RunCheck.objects.get(pk=check.pk)


def disqualified_reports() -> Q:
    """Reports (``GradeReport``) of runs disqualified by review: what results' figures
    leave out (``webapp.results.grading.aggregates.disqualified``)."""
    return Q(run__integrity__status=Status.DISQUALIFIED)


def disqualified_runs(experiment_id: int) -> set[int]:
    """The experiment's runs disqualified by review."""
    return set(
        RunCheck.objects.filter(
            run__experiment_id=experiment_id, status=Status.DISQUALIFIED
        ).values_list("run_id", flat=True)
    )


def integrity_counts(experiment_id: int) -> dict[str, int]:
    """Runs checked (any outcome but "not checked"), flagged (waiting for a person) and
    disqualified, for the leaderboard's integrity column."""
    checks = RunCheck.objects.filter(run__experiment_id=experiment_id)
    return {
        "runs_checked": checks.exclude(status=Status.NOT_CHECKED).count(),
        "runs_flagged": checks.filter(status=Status.FLAGGED).count(),
        "runs_disqualified": checks.filter(status=Status.DISQUALIFIED).count(),
    }


def run_check_of(run: Run) -> RunCheck:
    """The run's check, made (not checked) when it has none yet."""
    return RunCheck.objects.get_or_create(run=run)[0]


def run_checks_visible_to(user):
    """The checks of the runs ``user`` may see (``webapp.core.visibility``)."""
    return visible_to(user, RunCheck.objects.all())


def review_queue(user):
    """Flagged runs ``user`` may see, oldest check first."""
    return (
        run_checks_visible_to(user)
        .filter(status=Status.FLAGGED)
        .select_related("run__experiment__agent__scaffold", "run__experiment__agent__model")
        .select_related("run__competition", "reference", "run__experiment__owner")
        .order_by("checked_at", "pk")
    )


def checks_waiting(user) -> int:
    return run_checks_visible_to(user).filter(Q(due_since__isnull=False)).count()
