"""The house rules, each a declaration the engine (``engine.py``) runs and checks against
its examples. A rule's ``why`` is what a person reads when it fails."""

from __future__ import annotations

import ast
import re

from tools.house_rules import finders
from tools.house_rules.engine import ROOT, Files, Rule

TESTS = Files(roots=("tests",), exclude=("tests/agents/*",))  # agents' programs run as agents
CODE = ("webapp", "benchmark", "graders", "runner", "cli", "config")
WEBAPP = Files(roots=("webapp",))
TEMPLATES = Files(roots=("templates", "webapp/jinja2"), names=("*.html",))
SOURCE_ROOTS = ("graders", "benchmark", "runner", "cli", "webapp", "perf", "tools", "scripts")


def _governed() -> list[str]:
    """The models the visibility rule governs, read from ``webapp.core.visibility.SEE``
    (read, not imported: the rules need no Django)."""
    tree = ast.parse((ROOT / "webapp" / "core" / "visibility.py").read_text(encoding="utf-8"))
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign):
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "SEE":
            return sorted({key.value.split(".")[1] for key in node.value.keys})
    raise LookupError("webapp/core/visibility.py declares no SEE")


# A path of the machine the project was written on, spelled in pieces so that this file
# does not name one itself: the top folder "work" where no path of the repository's own
# precedes it.
MACHINE_PATH = re.compile(r"(?<![\w.-])/" + "work" + r"/|" + re.escape(str(ROOT)))
# Fields that hold floats: a score, a medal line, a percentage, a rate, a statistic.
FLOAT_FIELDS = (
    r"score|mean|standard_error|percentile|\w*_rate|similarity|\w*threshold|ci_lower|ci_upper"
    r"|difference|any_medal\w*"
)

RULES = (
    # --- tests ----------------------------------------------------------------------
    Rule(
        name="fixed-sleep-in-tests",
        why="time.sleep in a test makes it slow on an idle machine and flaky on a busy one: "
        "backdate the heartbeat or timestamp, inject the clock, or poll the condition with "
        "tests.support.polling.wait_until",
        files=TESTS,
        find=finders.sleep_calls,
        allowed={
            ("tests/support/polling.py", "wait_until"): "the polling helper: bounded by its "
            "deadline",
            (
                "tests/webapp/runs/test_hosts.py",
                "test_no_gpu_is_held_twice_under_concurrent_claims.worker",
            ): "random jitter that interleaves concurrent claims in many orders",
        },
        bad=(
            "import time\ndef test_a():\n    time.sleep(5)\n",
            "import time as clock\nclass TestB:\n    def test_b(self):\n        clock.sleep(1)\n",
            "from time import sleep as nap\ndef test_c():\n    nap(2)\n",
        ),
        good=("CODE = 'import time; time.sleep(60)'  # an agent's program, as text\n",),
        example_path="tests/test_example.py",
    ),
    Rule(
        name="measured-speed-asserted",
        why="a speed asserted in a test fails on a busy machine: print the figure (and "
        "measure it in perf/), or allow a deadline the system promises, with why",
        files=TESTS,
        find=finders.timed_assertions,
        allowed={
            (
                "tests/runner/test_adversary.py",
                "test_a_huge_sparse_submission_is_never_copied_and_ends_the_run",
            ): "the run ends at its time limit (20 s) instead of copying 10 GiB",
            (
                "tests/runner/test_adversary.py",
                "test_slow_snapshots_never_delay_the_time_limit",
            ): "slow snapshots never delay the time limit",
            (
                "tests/runner/test_docker_backend.py",
                "test_sleeping_past_the_time_limit_is_killed_and_timed_out",
            ): "a run is killed at its time limit",
            (
                "tests/runner/test_docker_backend.py",
                "test_cancel_stops_the_container_within_seconds",
            ): "a cancel stops the run within seconds",
            (
                "tests/runner/test_docker_backend.py",
                "test_a_reaper_can_remove_a_run_container_by_name",
            ): "the reaper removes a run's container at once, not after its time limit",
            (
                "tests/runner/test_local_backend.py",
                "test_sleeping_past_the_limit_is_timed_out_and_the_group_killed",
            ): "a run is killed at its time limit",
            (
                "tests/runner/test_local_backend.py",
                "test_cancel_stops_the_agent_within_seconds",
            ): "a cancel stops the run within seconds",
            (
                "tests/runner/test_local_backend.py",
                "test_a_huge_sparse_submission_is_never_copied_and_ends_the_run",
            ): "the run ends at its limit instead of copying 10 GiB",
            (
                "tests/runner/test_validation_service.py",
                "test_stop_is_prompt_with_connections_open",
            ): "open connections never hold the validation service's stop",
        },
        bad=(
            "def test_a():\n    assert render_ms < 1000 and total_ms < 1000\n",
            "def test_b():\n    assert elapsed < 5\n",
            "import time\ndef test_c():\n    assert 2 > time.monotonic() - started\n",
            "def test_d():\n    assert page.took <= 3\n",
        ),
        good=(
            "def test_e():\n    assert size < 5 and count == 2\n",  # not a time
            "def test_f():\n    assert elapsed == 5\n",  # not an ordering
        ),
        example_path="tests/test_example.py",
    ),
    Rule(
        name="skipped-test",
        why="a skipped test passes for one that proved nothing: call "
        "tests.support.services.missing(what), which fails",
        files=TESTS,
        find=finders.skips,
        bad=(
            "import pytest\n@pytest.mark.skipif(True, reason='r')\ndef test_a():\n    pass\n",
            "import pytest\ndef test_a():\n    pytest.skip('r')\n",
            "import pytest\ndef test_b():\n    pytest.xfail('r')\n",
            "from pytest import importorskip as imp\n",
            "import unittest\nclass T(unittest.TestCase):\n    def test_c(self):\n"
            "        self.skipTest('r')\n",
        ),
        good=("import pytest\ndef test_d():\n    skip = 1\n    pytest.fail('not a skip')\n",),
        example_path="tests/test_example.py",
    ),
    # --- text the project ships -------------------------------------------------------
    Rule(
        name="machine-path",
        why="a path of the machine the project was written on means nothing on a newcomer's: "
        "name a package by its module (webapp.work), a file relative to the repository",
        files=Files(tracked=True, exclude=("tools/dolos/*",)),
        pattern=MACHINE_PATH,
        bad=("see " + "/work" + "/main/docs/x.md\n", "cd " + str(ROOT) + "/docs\n"),
        good=("tests/webapp/ops/test_sweeper.py and the module webapp.work.lifecycle\n",),
        example_path="docs/example.md",
    ),
    # --- the code ------------------------------------------------------------------------
    Rule(
        name="non-ascii-digit-test",
        why="a digit test that takes '²' (int() refuses it; an Upload-Length of ² was a "
        "500): ask x.isascii() and x.isdigit(), or match [0-9]",
        files=Files(roots=CODE),
        find=finders.unguarded_digit_tests,
        bad=(
            "ok = s.isdigit()\n",
            "ok = s.strip().isnumeric()\n",
            "ok = t.isascii() and s.isdigit()\n",
        ),
        good=(
            "ok = s.isascii() and s.isdigit()\n",
            "ok = not (p[1].isascii() and p[1].isdecimal())\n",
        ),
        example_path="webapp/example.py",
    ),
    Rule(
        name="error-class-from-text",
        why="why a submission is invalid is the class the grader returns (graders.ErrorClass, "
        "GradeReport.error_class), never read back out of the message: messages are for "
        "people and change with their wording",
        files=WEBAPP,
        find=finders.error_text_reads,
        bad=(
            "Run.objects.filter(error__icontains='missing')\n",
            "invalid = 'rows missing' in report.error\n",
        ),
        good=("Run.objects.filter(error_class=ErrorClass.MISSING_ROWS)\n",),
        example_path="webapp/example.py",
    ),
    Rule(
        name="unclamped-seek",
        why="seek to a computed offset with benchmark.file_seek.seek_clamped: an offset a "
        "person gave (?offset= on the timeline) past the end or past what the system can "
        "seek to was a 500. The command-line client seeks in its own files and is left out",
        files=Files(
            roots=("webapp", "benchmark", "runner", "graders"), exclude=("benchmark/file_seek.py",)
        ),
        find=finders.raw_seeks,
        bad=("def f(h, n):\n    h.seek(n)\n",),
        good=("import os\ndef f(h):\n    h.seek(0, 2)\n    h.seek(0, os.SEEK_END)\n",),
        example_path="webapp/example.py",
    ),
    Rule(
        name="status-written-outside-work",
        why="write statuses through webapp.work (claim, finish, fail, release, "
        "retry_or_fail, restart, move) so that the declared transition tables hold",
        files=Files(roots=("webapp",), exclude=("webapp/work*",)),  # the work package itself
        find=finders.status_writes,
        allowed={
            # A run host's up/down is its liveness (its runs' statuses move through
            # webapp.work).
            ("webapp/runs/hosts.py", "state="): "a host's liveness, not a lifecycle of work",
        },
        bad=(
            "Run.objects.filter(pk=1).update(status='queued')\n",
            "Run.objects.filter(pk=1).update(error='', state=State.DONE)\n",
            "Run.objects.update_or_create(pk=1, defaults={'status': 'queued'})\n",
            "Run.objects.filter(pk=1).update(**{'status': 'queued'})\n",
            "Run.objects.bulk_update(rows, ['status'])\n",
            "def f(run):\n    run.status = 'graded'\n    run.save()\n",
            "cursor.execute('UPDATE results_run SET error = %s, status = %s WHERE id = %s')\n",
        ),
        good=(
            "Run.objects.filter(status='queued').update(dispatched_at=None)\n",
            "Response({'error': 'no'}, status=400)\n",
            "def __init__(self, status):\n    self.status = status\n",
            "cursor.execute('SELECT status FROM results_run')\n",
        ),
        example_path="webapp/example.py",
    ),
    Rule(
        name="disqualification-read-elsewhere",
        why="which runs count is decided in webapp/results/grading/aggregates.py "
        "(disqualified, disqualified_run_ids, counted_reports); reading disqualification "
        "anywhere else recomputes a figure its own way (compare once counted a disqualified "
        "gold the other pages did not)",
        files=Files(
            roots=("webapp",),
            exclude=("webapp/results/grading/aggregates.py", "webapp/integrity/*"),
        ),
        pattern=re.compile(
            r"Status\.DISQUALIFIED"
            r"|integrity__status\s*=\s*[\"']disqualified"
            r"|integrity__status__in"
            r"|def disqualified_run_ids"
        ),
        bad=(
            '    disqualified = Q(run__integrity__status="disqualified")\n',
            "RunCheck.objects.filter(status=RunCheck.Status.DISQUALIFIED)\n",
        ),
        good=("from webapp.results.grading.aggregates import disqualified\n",),
        example_path="webapp/example.py",
    ),
    Rule(
        name="posted-text-read-directly",
        why="read posted text through a form or a serializer: they refuse NUL, which "
        "PostgreSQL cannot store, and enforce lengths",
        # Where the value goes straight into a form or serializer: the upload API's metadata
        # (validated by UploadMetadataInput), the upload page's re-displayed values.
        files=Files(
            roots=("webapp",),
            exclude=("webapp/results/uploads/api.py", "webapp/results/uploads/views.py"),
        ),
        find=finders.posted_reads,
        bad=(
            "def v(request):\n    a = request.POST.get('x')\n",
            "def v(request):\n    b = request.data['y']\n",
        ),
        good=("def v(request):\n    form = UploadForm(request.POST)\n",),
        example_path="webapp/example.py",
    ),
    # --- what people see: the visibility rule (webapp/core/visibility.py) asked everywhere -
    Rule(
        name="staff-flag-decides",
        why="the staff flag decides nothing: ask webapp.core.visibility (has_perm, may, "
        "visible_to); a staff member with no permission may see and do no more than anyone",
        files=(WEBAPP, TEMPLATES),
        pattern=re.compile(r"\bis_staff\b|\bis_superuser\b|staff_member_required|IsAdminUser"),
        allowed={
            # Django's admin lets only staff in: the link to it is for them; and a signed-in
            # page is not served from the cache once a bulk update changed the flags.
            (
                "templates/viewer_nav.html",
                "{% if user.is_staff %}<a href=\"{% url 'admin:index' %}\">",
            ): "the admin's link, for those the admin lets in",
            (
                "webapp/edge/viewer_pages.py",
                'ROW_FLAGS = ("is_staff", "is_superuser")',
            ): "a cached page is not served once the flags changed",
        },
        bad=("if request.user.is_staff:\n", "{% if user.is_superuser %}\n"),
        good=("if may(request.user, Perm.SEE_ALL_EXPERIMENTS):\n",),
        example_path="webapp/example.py",
    ),
    Rule(
        name="stored-reasons-rendered-raw",
        why="a check's stored reasons are facts: render them with webapp.integrity.reasons "
        "(reasons_for), which tells each viewer only what they may see",
        files=(
            Files(
                roots=("webapp",),
                exclude=("webapp/integrity/reasons.py", "webapp/integrity/services.py"),
            ),
            TEMPLATES,
        ),
        # A comparability class's reasons (benchmark.disclosure) are public, not a check's.
        pattern=re.compile(r"(?<!integrity)(?<!comparability)\.reasons\b"),
        allowed={
            # The run page's summary is the run API's, whose reasons reasons_for rendered.
            ("templates/runs/run_page.html", "{% if integ.reasons %}"): "rendered by the API",
        },
        bad=("{% for r in check.reasons %}\n", "text = check.reasons[0]['sentence']\n"),
        good=(
            "from webapp.integrity.reasons import reasons_for\n",
            "{{ conditions.comparability.reasons|join:', ' }}\n",
        ),
        example_path="webapp/example.py",
    ),
    Rule(
        name="permission-named-twice",
        why="permissions are named once, in webapp.core.visibility.Perm (templates read `can`)",
        files=(Files(roots=("webapp",), exclude=("webapp/core/visibility.py",)), TEMPLATES),
        pattern=re.compile(r"has_perm\(\s*['\"]|\{%[^%]*\bperms\.|\{\{[^}]*\bperms\."),
        bad=(
            "user.has_perm('results.see_all_experiments')\n",
            "{% if perms.results.see_all_experiments %}\n",
        ),
        good=("user.has_perm(Perm.SEE_ALL_EXPERIMENTS)\n", "{% if can.review %}\n"),
        example_path="webapp/example.py",
    ),
    Rule(
        name="view-queries-governed-model",
        why="views and APIs do not query an object the visibility rule governs: ask a "
        "selector or service that applies visible_to",
        files=Files(
            roots=("webapp",),
            names=("views.py", "api.py", "run_pages.py", "upload_views.py", "upload_api.py"),
        ),
        pattern=re.compile(r"\b(?:" + "|".join(_governed()) + r")\.objects\b"),
        bad=("experiment = Experiment.objects.get(pk=pk)\n",),
        good=("experiment = experiment_for(request.user, pk)\n",),
        example_path="webapp/results/views.py",
    ),
    Rule(
        name="float-printed-raw",
        why="print scores with |score, percentages with |pct or |percent, fractions with "
        "|rate, statistics with |stat ({% load numbers_format %}): one format per kind of "
        "number, declared in webapp/core/formatting.py",
        files=Files(roots=("templates", "webapp"), names=("*.html",)),
        pattern=re.compile(
            # "{{ x.score }}" printed as text (not an attribute's value, which scripts read
            # raw), or floatformat to a fixed number of places: a precision of its own.
            r'(?<!=")\{\{\s*[\w.]*\b(' + FLOAT_FIELDS + r")\s*\}\}"
            r"|\b(" + FLOAT_FIELDS + r')\|floatformat(:\s*"?-?\d+"?)?'
        ),
        allowed={
            # Already text, formatted by webapp.core.formatting in Python.
            (
                "templates/results/_contamination.html",
                "{{ row.cutoff.difference }}",
            ): "formatted in webapp/results/pages/contamination.py",
        },
        bad=(
            "<td>{{ grade.score }}</td>\n",
            "{{ board.median_threshold }}\n",
            "{{ row.a_medal_rate|floatformat:2 }}\n",
            "{{ v.mean|floatformat:1 }}\n",
        ),
        good=(
            '<td data-value="{{ row.a_medal_rate }}">\n',
            "{{ grade.score|score }}\n",
            "{{ r.duration_s|floatformat:1 }}\n",
        ),
        example_path="templates/example.html",
    ),
    # --- prose ---------------------------------------------------------------------------
    Rule(
        name="long-module-docstring",
        why=f"module docstrings over {finders.MODULE_DOCSTRING_MAX_LINES} lines: keep what "
        "the module is and why; move design to docs/",
        files=Files(roots=SOURCE_ROOTS),
        find=finders.long_module_docstring,
        bad=('"""' + "\n".join(["A line."] * 13) + '"""\n',),
        good=('"""' + "\n".join(["A line."] * 12) + '"""\n', "x = 1\n"),
        example_path="webapp/example.py",
    ),
    Rule(
        name="history-in-comments",
        why="history in a comment or docstring: state the present reason (the history goes "
        "in the commit message)",
        files=Files(roots=(*SOURCE_ROOTS, "tests")),
        find=finders.history_phrases,
        bad=(
            "# previously this read the whole file\n",
            "# Formerly a thread per request.\n",
            "# Before this change the cache kept stale pages.\n",
            "# It used to crash on empty input.\n",
            "# The limit used to be 10.\n",
            "# We replaced the lock with a rename.\n",
            "# the old implementation sorted twice\n",
            "# keeps the previous behaviour for old clients\n",
            "# was a list, now a dict\n",
            "# now reads the header instead of the body\n",
            "# see issue 33\n",
            "# fixes #123\n",
            "# (PR 45) adds retries\n",
            "# Historically the grader ran in the web process.\n",
            "x.join(1.0)  # with the fix it waits for the lock\n",
            "# Until recently the cache was per process.\n",
            '"""Reads the rows in chunks (this commit made it stream)."""\n',
        ),
        good=(
            "# validation cannot be used to probe the answers\n",
            "# a seed used to draw the bootstrap samples\n",
            "# containers that should no longer exist\n",
            "# the old one stays for the record\n",
            "# A sentence stored by an earlier version: it may name a field\n",
            "# the state as the database holds it now\n",
            "# a row that was written now counts\n",
            "# a hash-mark #anchor and a colour #fff\n",
            "# renamed into place, so readers need no lock\n",
            "# issues a token\n",
            "# step 2 of 3\n",
            "# fix the seed so the draws repeat\n",
        ),
        example_path="webapp/example.py",
    ),
)
