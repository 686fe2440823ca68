"""Pages of the integrity checks: a run's check (its findings, and its code side by side
with the most similar reference or other owner's run, shared fragments highlighted), the
review queue of flagged runs, and a reviewer's decision.

Each part is shown as the viewer may see it (``webapp.integrity.reasons``): reference code
to whom may read reference corpora, another owner's run to whom may see that run; the
others read the figures and "a run you cannot see". Deciding takes
``integrity.review_runcheck``."""

from __future__ import annotations

from urllib.parse import quote

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from benchmark.integrity.detectors import check_label
from benchmark.integrity.winnowing import source_text
from webapp.core.visibility import Perm, has_perm, may
from webapp.integrity import services
from webapp.integrity.forms import RunCheckDecisionForm
from webapp.integrity.models import RunCheck
from webapp.integrity.reasons import Viewer, peer_for, reasons_for
from webapp.runs import run_files

SIDE_MAX_LINES = 3000
FRAGMENT_COLOURS = 6
# A shared fragment is coloured in the code when it spans at least this many lines on
# each side: a low similarity is many one-line matches (imports, ``pd.read_csv``) that
# would colour almost every line and hide what is actually shared. Shorter ones are
# counted under the code.
FRAGMENT_MIN_LINES = 3


def _spans(fragment: dict) -> bool:
    (a0, a1), (b0, b1) = fragment["a_lines"], fragment["b_lines"]
    return a1 - a0 + 1 >= FRAGMENT_MIN_LINES and b1 - b0 + 1 >= FRAGMENT_MIN_LINES


def _numbered(text: str, ranges: list[tuple[int, int]]) -> list[dict]:
    """Lines of ``text`` (1-based numbers) with the index of the fragment covering each,
    for highlighting; cut at ``SIDE_MAX_LINES``."""
    lines = text.split("\n")[:SIDE_MAX_LINES]
    marks: dict[int, int] = {}
    for index, (start, end) in enumerate(ranges):
        for number in range(start, min(end, len(lines)) + 1):
            marks.setdefault(number, index)
    return [
        {
            "n": n,
            "text": line,
            "fragment": marks.get(n),
            "colour": None if marks.get(n) is None else marks[n] % FRAGMENT_COLOURS,
        }
        for n, line in enumerate(lines, 1)
    ]


def _run_code(folder, rel: str) -> str:
    if folder is None or not rel:
        return ""
    try:
        path = run_files.safe_file(folder, rel)
    except run_files.PathRefused:
        return ""
    with path.open("rb") as handle:
        data = handle.read(services.CODE_MAX_BYTES)
    return source_text(rel, data.decode("utf-8", errors="replace"))


def _side_by_side(ours: str, theirs: str, fragments: list[dict]) -> dict:
    """Both files numbered, the fragments of ``FRAGMENT_MIN_LINES`` lines or more coloured;
    ``short``: how many shorter ones were left uncoloured."""
    shown = [f for f in fragments if _spans(f)]
    return {
        "left": _numbered(ours, [tuple(f["a_lines"]) for f in shown]),
        "right": _numbered(theirs, [tuple(f["b_lines"]) for f in shown]),
        "fragments": [
            {**f, "index": i, "colour": i % FRAGMENT_COLOURS} for i, f in enumerate(shown)
        ],
        "short": len(fragments) - len(shown),
        "min_lines": FRAGMENT_MIN_LINES,
    }


def _findings(check, run_page_url: str) -> list[dict]:
    """The rule checks' findings with their label and a link to the file in the run's
    code viewer."""
    if check is None:
        return []
    return [
        {
            **f,
            "label": check_label(f.get("check", "")),
            "code_url": f"{run_page_url}#code={quote(f.get('file', ''))}",
        }
        for f in check.findings or []
    ]


def _check_or_404(user, run_id: int):
    ref = run_files.run_ref_for(user, "result", run_id)
    if ref is None:
        raise Http404("No such run.")
    check = (
        services.run_checks_visible_to(user)
        .filter(run_id=run_id)
        .select_related("reference__corpus", "decided_by", "corpus")
        .first()
    )
    return ref, check


@require_http_methods(["GET", "POST"])
def run_check_page(request, run_id: int):
    ref, check = _check_or_404(request.user, run_id)
    if request.method == "POST":
        return _decide(request, ref, check)
    viewer = Viewer(request.user)
    reference = side_by_side = None
    if check is not None and check.reference is not None and viewer.references:
        reference = _side_by_side(
            _run_code(ref.folder, check.similarity_file),
            source_text(check.reference.path, check.reference.text),
            check.fragments,
        )
    peer = peer_for(check, viewer)
    if peer is not None and peer["visible"]:
        peer_ref = run_files.run_ref_for(request.user, "result", peer["run"])
        if peer_ref is not None:
            side_by_side = _side_by_side(
                _run_code(ref.folder, check.peer_file),
                _run_code(peer_ref.folder, check.peer_run_file),
                check.peer_fragments,
            )
    return render(
        request,
        "integrity/run_check.html",
        {
            "ref": ref,
            "run": ref.run,
            "check": check,
            "reasons": reasons_for(check, viewer),
            "findings": _findings(check, reverse("run-page-result", args=[ref.run.pk])),
            "sees_references": viewer.references,
            "sees_all_runs": viewer.all_runs,
            "may_review": may(request.user, "review", ref.run),
            "reference": reference,
            "peer": peer,
            "peer_side_by_side": side_by_side,
            "llm": (check.llm_review if check else {})
            or {"configured": services.llm_judge_config() is not None},
            "threshold": services.similarity_threshold(),
            "decisions": [
                (RunCheck.Status.REVIEWED_OK, "Reviewed: ok"),
                (RunCheck.Status.DISQUALIFIED, "Disqualify"),
            ],
        },
    )


def _decide(request, ref, check):
    if not may(request.user, "review", ref.run):
        raise PermissionDenied("Deciding on a run takes the permission to review run checks.")
    form = RunCheckDecisionForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        messages.error(request, f"Nothing was decided: {problems}")
        return redirect("integrity-run", run_id=ref.run.pk)
    decision = form.cleaned_data["decision"]
    if decision == "recheck":
        services.check_due([ref.run.pk])
        messages.success(request, "The checks will run again in a moment.")
        return redirect("integrity-run", run_id=ref.run.pk)
    if check is None:
        check = services.run_check_of(ref.run)
    try:
        services.run_check_decide(
            check.pk,
            decision=decision,
            reason=form.cleaned_data["reason"],
            user=request.user,
        )
    except services.DecisionRefused as exc:
        messages.error(request, str(exc))
        return redirect("integrity-run", run_id=ref.run.pk)
    messages.success(
        request,
        "Decision saved; the experiment's figures are being recomputed."
        if decision != "reopen"
        else "The decision was withdrawn.",
    )
    return redirect("integrity-run", run_id=ref.run.pk)


def review_queue(request):
    if not has_perm(request.user, Perm.REVIEW):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        raise PermissionDenied("The review queue is for reviewers.")
    page = Paginator(services.review_queue(request.user), 50).get_page(request.GET.get("page"))
    viewer = Viewer(request.user)
    for check in page.object_list:
        check.shown_reasons = reasons_for(check, viewer)
    checks = services.run_checks_visible_to(request.user)
    decided = (
        checks.filter(status__in=[RunCheck.Status.REVIEWED_OK, RunCheck.Status.DISQUALIFIED])
        .select_related("run__competition", "run__experiment", "decided_by")
        .order_by("-decided_at")[:20]
    )
    counts = {status.label: checks.filter(status=status).count() for status in RunCheck.Status}
    return render(
        request,
        "integrity/review_queue.html",
        {
            "page": page,
            "decided": decided,
            "counts": counts,
            "waiting": services.checks_waiting(request.user),
            "llm_configured": services.llm_judge_config() is not None,
            "threshold": services.similarity_threshold(),
        },
    )
