"""A page per run - "see what the agent did": its grade and medal position, the first
rows of its submission, its validation calls, its logs (paged and searched), its code
(highlighted), AIDE's search tree, and a zip of everything; with the JSON API behind it.

Runs are named ``result/<id>`` (a graded ``results.Run``: uploaded or from a launch) or
``agent/<id>`` (an ``AgentRun``, graded or not). Visibility follows the run's experiment
(``experiments_visible_to``) or launch (``agent_runs_visible_to``); anything else is 404,
as is any path outside the run's folder.

A graded run's page shows its integrity checks, so it lives in the app at the top of the
apps' direction (``tests/test_import_arrows.py``), which may read both kinds of run."""

from __future__ import annotations

from dataclasses import asdict

from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.core.formatting import format_scores_alike
from webapp.integrity.models import RunCheck
from webapp.integrity.reasons import Viewer, reasons_for
from webapp.integrity.services import run_checks_visible_to
from webapp.liveness.services import GRADING_QUEUE, no_worker_note
from webapp.results.models import Run
from webapp.results.selectors import medal_of
from webapp.runs import run_files, selectors
from webapp.runs.run_files import PathRefused, RunRef

KINDS = ("result", "agent")


def _ref_or_404(user, kind: str, pk: int) -> RunRef:
    ref = run_files.run_ref_for(user, kind, pk) if kind in KINDS else None
    if ref is None:
        raise Http404("No such run.")
    return ref


def _file_or_404(ref: RunRef, rel: str):
    if ref.folder is None:
        raise Http404("This run has no files here.")
    try:
        return run_files.safe_file(ref.folder, rel)
    except PathRefused:
        raise Http404("No such file in this run.") from None


def grade_of(ref: RunRef) -> dict | None:
    """The current grade of the run: score, thresholds, medal, percentile."""
    if ref.run is None:
        return None
    report = ref.run.reports.filter(is_current=True).order_by("-recorded_at").first()
    if report is None:
        return {
            "status": ref.run.status,
            "error": ref.run.error,
            "no_worker": no_worker_note(GRADING_QUEUE)
            if ref.run.status == Run.Status.QUEUED
            else "",
        }
    return {
        "status": ref.run.status,
        "score": report.score,
        "thresholds": {
            "gold": report.gold_threshold,
            "silver": report.silver_threshold,
            "bronze": report.bronze_threshold,
            "median": report.median_threshold,
        },
        # As pages print them (no float noise, all to the same decimals); the API keeps
        # the raw values above.
        "thresholds_text": dict(
            zip(
                ("gold", "silver", "bronze", "median"),
                format_scores_alike(
                    (
                        report.gold_threshold,
                        report.silver_threshold,
                        report.bronze_threshold,
                        report.median_threshold,
                    )
                ),
                strict=True,
            )
        ),
        "medal": medal_of(report),
        "above_median": report.above_median,
        "percentile": report.percentile,
        "is_lower_better": report.is_lower_better,
        "submission_exists": report.submission_exists,
        "valid_submission": report.valid_submission,
        "error": report.error,
        "grader_version": report.grader_version,
    }


def integrity_of(ref: RunRef, user) -> dict | None:
    """The run's integrity status (``webapp.integrity``), or None for a run not graded.
    Its reasons are told as ``user`` may read them (``webapp.integrity.reasons``)."""
    if ref.run is None:
        return None
    check = run_checks_visible_to(user).filter(run_id=ref.run.pk).first()
    if check is None:
        return {
            "status": RunCheck.Status.NOT_CHECKED,
            "label": "not checked",
            "reasons": [],
            "note": "no check has run on it (runs are checked after they are graded here)",
        }
    return {
        "status": check.status,
        "label": check.get_status_display(),
        "reasons": reasons_for(check, Viewer(user)),
        "checking": check.due_since is not None,
        "note": check.note,
        "similarity": check.similarity,
        "peer_similarity": check.peer_similarity,
        "findings": len(check.findings),
        "decision_reason": check.decision_reason,
        "url": reverse("integrity-run", args=[ref.run.pk]),
    }


def llm_usage_of(ref: RunRef) -> dict | None:
    """What the run asked of its model: metered at the bridge (an agent run's, also kept
    with its graded run) or declared by its upload (``"source"``); None: not known."""
    from benchmark.cost import METERED

    if ref.run is not None and ref.run.llm_usage:
        return ref.run.llm_usage
    if ref.agent_run is not None and ref.agent_run.llm_usage is not None:
        return {**ref.agent_run.llm_usage, "source": METERED}
    return None


def run_summary(ref: RunRef, user) -> dict:
    files, cut = run_files.list_files(ref.folder) if ref.folder else ([], False)
    agent = ref.agent_run
    base = _api_base(ref)
    grade = grade_of(ref)
    agent_note = selectors.agent_run_no_worker(agent) if agent else ""
    return {
        "kind": ref.kind,
        "id": ref.pk,
        "competition_id": ref.competition_id,
        "seed": ref.seed,
        "experiment": ref.run.experiment_id if ref.run else None,
        "run_group": ref.run.run_group if ref.run else "",
        "grade": grade,
        # What the run waits for, when no worker answers (webapp.liveness): its start, or
        # its grading.
        "no_worker": (grade or {}).get("no_worker") or agent_note,
        "agent_run": {
            "id": agent.pk,
            "status": agent.status,
            "message": agent.message,
            "exit_code": agent.exit_code,
            "duration_s": agent.duration_s,
            "validation_counts": agent.validation_counts,
            "llm_usage": agent.llm_usage,
            "confinement": agent.confinement,
            "no_worker": agent_note,
        }
        if agent
        else None,
        "llm_usage": llm_usage_of(ref),
        "files": files,
        "files_truncated": cut,
        "validation_calls": _validation_calls(ref, files),
        "integrity": integrity_of(ref, user),
        "urls": {
            "files": base + "files/",
            "search": base + "search",
            "trajectory": base + "trajectory/",
            "timeline": base + "timeline",
            "download": reverse(f"run-page-download-{ref.kind}", args=[ref.pk]),
        },
    }


def _validation_calls(ref: RunRef, files: list[dict]) -> dict | None:
    """The run's recorded validation calls (the last 500, oldest first), or None when the
    run has no ``validation_calls.jsonl``."""
    if ref.folder is None:
        return None
    # An agent run's record is the harness's own, at the top of its output folder.
    rel = run_files.find_validation_calls(ref.folder, files, agent=ref.agent_run is not None)
    return run_files.validation_calls(ref.folder, rel) if rel else None


def _api_base(ref: RunRef) -> str:
    return reverse(f"api-run-{ref.kind}", args=[ref.pk])


def run_page(request, pk: int, kind: str):
    ref = _ref_or_404(request.user, kind, pk)
    summary = run_summary(ref, request.user)
    journal_rel = run_files.find_journal(ref.folder) if ref.folder else None
    logs = [f for f in summary["files"] if f["kind"] == "log"]
    timeline_file = ""
    if journal_rel is None:
        for f in logs:
            if f["path"].endswith((".jsonl", ".ndjson")) or f["path"].endswith("events.json"):
                path = run_files.safe_file(ref.folder, f["path"])
                if run_files.looks_like_timeline(path):
                    timeline_file = f["path"]
                    break
    experiment = ref.run.experiment if ref.run else None
    return render(
        request,
        "runs/run_page.html",
        {
            "ref": ref,
            "summary": summary,
            "grade": summary["grade"],
            "experiment": experiment,
            "launch": ref.agent_run.launch if ref.agent_run else None,
            "head": run_files.submission_head(ref.folder) if ref.folder else None,
            "journal": journal_rel,
            "timeline_file": timeline_file,
            "logs": logs,
            "code": [f for f in summary["files"] if f["kind"] == "code"],
            "validation_files": [
                f for f in summary["files"] if "validation" in f["path"].rsplit("/", 1)[-1]
            ],
            "others": [f for f in summary["files"] if f["kind"] in ("other", "submission")],
            "highlight_css": run_files.highlight_css(),
            "download_max": run_files.ZIP_MAX_BYTES,
        },
    )


def run_download(request, pk: int, kind: str):
    ref = _ref_or_404(request.user, kind, pk)
    if ref.folder is None:
        raise Http404("This run has no files here.")
    if run_files.zip_size(ref.folder) > run_files.ZIP_MAX_BYTES:
        return HttpResponse(
            f"This run's files are over {run_files.ZIP_MAX_BYTES:,} bytes; download them "
            "one by one.",
            status=413,
            content_type="text/plain",
        )
    name = f"{ref.competition_id}-seed{ref.seed}-{kind}{pk}"
    response = StreamingHttpResponse(
        run_files.zip_stream(ref.folder, name), content_type="application/zip"
    )
    response["Content-Disposition"] = f'attachment; filename="{name}.zip"'
    return response


class RunFileEntry(serializers.Serializer):
    path = serializers.CharField()
    size = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["log", "code", "submission", "other"])


class RunDetailApi(APIView):
    @extend_schema(
        summary="A run's grade, files and validation calls",
        description="`kind` is `result` at /api/runs/<id>/ (a graded run) or `agent` at "
        "/api/runs/agent/<id>/ (an agent run). Visible as the run's experiment or launch is. "
        "`validation_calls` holds the last 500 recorded calls of `validation_calls.jsonl` "
        "(at, elapsed_s, status, valid, message, bytes), oldest first, or null without one.",
        responses={
            200: inline_serializer(
                "RunDetail",
                {
                    "kind": serializers.CharField(),
                    "id": serializers.IntegerField(),
                    "competition_id": serializers.CharField(),
                    "seed": serializers.IntegerField(),
                    "grade": serializers.JSONField(allow_null=True),
                    "no_worker": serializers.CharField(
                        help_text='"no grading worker has answered for N s" (or "no run '
                        'worker (runs.cpu) ...") while the run waits for one and none '
                        "answers; empty otherwise"
                    ),
                    "agent_run": serializers.JSONField(allow_null=True),
                    "files": RunFileEntry(many=True),
                    "files_truncated": serializers.BooleanField(),
                    "validation_calls": serializers.JSONField(allow_null=True),
                    "urls": serializers.DictField(child=serializers.CharField()),
                },
            )
        },
    )
    def get(self, request, pk: int, kind: str = "result"):
        return Response(run_summary(_ref_or_404(request.user, kind, pk), request.user))


class RunFileApi(APIView):
    @extend_schema(
        summary="A page of one of a run's files",
        description="Bytes `offset` to `offset+length` (64 KB by default, 1 MiB at most) as "
        "text, with `next_offset` for the next page; `highlight=1` gives a code file (up "
        "to 512 KB) as HTML highlighted by Pygments instead. Paths outside the run's "
        "folder, with `..`, absolute or through symlinks are 404.",
        parameters=[
            OpenApiParameter("offset", OpenApiTypes.INT, required=False),
            OpenApiParameter("length", OpenApiTypes.INT, required=False),
            OpenApiParameter("highlight", OpenApiTypes.BOOL, required=False),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, pk: int, path: str, kind: str = "result"):
        ref = _ref_or_404(request.user, kind, pk)
        target = _file_or_404(ref, path)
        if request.query_params.get("highlight") in ("1", "true"):
            return Response({"path": path, **run_files.highlighted(target)})
        offset = _int(request.query_params.get("offset"), 0)
        length = _int(request.query_params.get("length"), run_files.PAGE_BYTES)
        return Response({"path": path, **run_files.read_page(target, offset, length)})


def _int(value, default: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return max(0, min(number, 2**62))


MAX_QUERY = 200  # characters of a search


class RunSearchApi(APIView):
    @extend_schema(
        summary="Search one of a run's files",
        description="Lines holding `q` (case-insensitive, at most 200 characters), read in "
        "1 MiB chunks: line numbers, byte offsets and snippets, at most 200 hits.",
        parameters=[
            OpenApiParameter("file", OpenApiTypes.STR, required=True),
            OpenApiParameter(
                "q", OpenApiTypes.STR, required=True, pattern=f"^[^\\x00]{{1,{MAX_QUERY}}}$"
            ),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, pk: int, kind: str = "result"):
        ref = _ref_or_404(request.user, kind, pk)
        query = request.query_params.get("q", "")
        if not query or len(query) > MAX_QUERY or "\x00" in query:
            return Response({"detail": f"give q, 1 to {MAX_QUERY} characters"}, status=400)
        target = _file_or_404(ref, request.query_params.get("file", ""))
        return Response(
            {"file": request.query_params["file"], **run_files.search_file(target, query)}
        )


class RunTrajectoryApi(APIView):
    @extend_schema(
        summary="AIDE's search tree of a run",
        description="The nodes of the first `journal.json` under the run's `logs/`: id, "
        "step, parent, kind (draft/debug/improve), plan, code, term_out, exec_time, metric, "
        "is_buggy, ctime, on_best_path; the best node and the best-so-far curve. With "
        "`node=<id>` only that node, its code highlighted as `code_html`. 404 without a "
        "journal; 422 when it cannot be read, with why. `compact=1` leaves out the texts.",
        parameters=[
            OpenApiParameter("node", OpenApiTypes.STR, required=False),
            OpenApiParameter("compact", OpenApiTypes.BOOL, required=False),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, pk: int, kind: str = "result"):
        ref = _ref_or_404(request.user, kind, pk)
        if ref.folder is None:
            raise Http404("This run has no files here.")
        rel, tree, error = run_files.trajectory_of(ref.folder)
        if rel is None:
            raise Http404("This run's logs hold no journal.json.")
        if tree is None:
            return Response({"journal": rel, "detail": error}, status=422)
        node_id = request.query_params.get("node")
        if node_id is not None:
            node = next((n for n in tree.nodes if n.id == node_id), None)
            if node is None:
                raise Http404("No such node.")
            return Response({**asdict(node), "code_html": run_files.highlight_code(node.code)})
        data = tree.as_dict()
        if request.query_params.get("compact") in ("1", "true"):
            for node in data["nodes"]:  # the drawing needs no text: ?node= gives it
                for key in ("plan", "code", "term_out", "analysis"):
                    node[key] = node[key][:200] if key == "plan" else ""
        return Response({"journal": rel, **data})


class RunTimelineApi(APIView):
    @extend_schema(
        summary="A JSON-lines log as a timeline of steps",
        description="Events (type/action/observation records) from byte `offset`, at most "
        "200 per call, with `next_offset`.",
        parameters=[
            OpenApiParameter("file", OpenApiTypes.STR, required=True),
            OpenApiParameter("offset", OpenApiTypes.INT, required=False),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, pk: int, kind: str = "result"):
        ref = _ref_or_404(request.user, kind, pk)
        target = _file_or_404(ref, request.query_params.get("file", ""))
        offset = _int(request.query_params.get("offset"), 0)
        return Response(run_files.timeline_page(target, offset))
