"""Failure drills: kill real processes of a running mleboard while it grades uploads, and
check that the database-owned work (``webapp.work``, ``webapp.ops.sweeper``) still ends with
every upload graded and every run holding exactly one current grade report.

Drills ``worker``, ``broker``, ``web``, ``database`` and ``disk``, on ``--backend pg-redis``
(default) or ``embedded``; what each does and checks is in docs/benchmarks.md. Run from the
repository root (``.venv/bin/python -m perf.drill --drill worker --seeds 2 --keep``). Every
process it starts is stopped on exit, by its own process group id. Exits 0 when every
invariant of every drill holds, else 1.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import signal
import sys
import time

from .disk import SmallDisk
from .drills import AFTER_FUNCS, DRILL_FUNCS, DRILLS, DrillResult
from .processes import REPO, exit_on_signal, log, stop_all
from .site import ACCESS_LOG, Site

REDIS_PORT = 6391


def finish(site: Site, result: DrillResult, restarted: float) -> None:
    """Wait for every upload to be graded, then check and record the invariants."""
    deadline = restarted + site.args.deadline
    last = None
    while True:
        uploads = site.db.uploads()
        states = [u[1] for u in uploads]
        if uploads and all(s == "graded" for s in states):
            result.seconds_to_graded = time.monotonic() - restarted
            break
        snapshot = (tuple(states), tuple(sorted(site.db.run_counts().items())))
        if snapshot != last:
            log(f"uploads {list(snapshot[0])}, runs {dict(snapshot[1])}")
            last = snapshot
        if time.monotonic() > deadline:
            result.failures.append(
                f"not every upload graded {site.args.deadline:.0f} s after the last restart: "
                f"{states}"
            )
            break
        time.sleep(1)
    # Let figures and the last sweep settle before reading the end state.
    time.sleep(2)
    check(site, result)
    wait_spool(site, result)


def check(site: Site, result: DrillResult) -> None:
    result.uploads = [(u[0], u[1]) for u in site.db.uploads()]
    result.runs = site.db.run_counts()
    reports = site.db.current_reports()
    result.bad_reports = [(run_id, n) for run_id, _status, n in reports if n != 1]
    total = sum(result.runs.values())
    graded = result.runs.get("graded", 0)
    failed = result.runs.get("failed", 0)
    if len(result.uploads) != result.uploads_expected:
        result.failures.append(
            f"expected {result.uploads_expected} upload(s), found {len(result.uploads)}"
        )
    for pk, status in result.uploads:
        if status != "graded":
            error = next((u[3] for u in site.db.uploads() if u[0] == pk), "")
            result.failures.append(f"upload {pk} is {status} ({error[:200]})")
    if total != result.runs_expected:
        result.failures.append(f"{total} runs, expected {result.runs_expected}")
    if graded != total or failed:
        result.failures.append(f"runs not all graded: {result.runs}")
    if result.bad_reports:
        shown = ", ".join(f"run {r}: {n}" for r, n in result.bad_reports[:10])
        result.failures.append(
            f"{len(result.bad_reports)} run(s) without exactly one current report ({shown})"
        )
    result.sweeps_active, result.sweeps_logged = site.sweeps()
    result.django_tmp_left = sum(1 for p in site.tmp.iterdir() if p.is_file())


def wait_spool(site: Site, result: DrillResult) -> None:
    """Spool files are removed by the sweeper once idle for max(STALE, 300) s: if any
    remain, wait (at most ``--spool-wait-max`` s) until that window and a sweep passed."""
    spool = site.spool_files()
    if spool and site.args.spool_wait_max > 0:
        window = max(site.args.stale_after, 300) + 2 * site.args.reaper_interval + 2
        newest = max(p.stat().st_mtime for p in spool if p.exists()) if spool else time.time()
        wait = min(site.args.spool_wait_max, max(0.0, newest + window - time.time()))
        log(f"{len(spool)} spool file(s) in the media root; waiting {wait:.0f} s for clean-up")
        time.sleep(wait)
        spool = site.spool_files()
    result.spool_left = len(spool)


def run_drill(args, drill: str) -> DrillResult:
    result = DrillResult(drill=drill, backend=args.backend)
    if drill == "broker" and args.backend == "embedded":
        result.skipped = "no broker process (embedded filesystem broker under var/)"
        log(f"drill {drill}: skipped, {result.skipped}")
        return result
    if drill == "database" and args.backend == "embedded":
        result.skipped = "no database server to stop (SQLite is a file under var/)"
        log(f"drill {drill}: skipped, {result.skipped}")
        return result
    if drill == "disk" and (refusal := SmallDisk.cannot_mount()):
        result.skipped = refusal
        log(f"drill {drill}: skipped, {refusal}")
        return result
    log(f"=== drill {drill} ({args.backend}) ===")
    site = Site(args, drill)
    result.var_dir = str(site.var)
    try:
        site.setup()
        site.start_all()
        restarted = DRILL_FUNCS[drill](site, result)
        finish(site, result, restarted)
        if drill in AFTER_FUNCS:
            AFTER_FUNCS[drill](site, result)
    except Exception as exc:  # a time-out, a process that exited, a refused upload
        result.failures.append(f"drill aborted: {type(exc).__name__}: {exc}")
        with contextlib.suppress(Exception):
            check(site, result)
    except BaseException:  # interrupted (Ctrl-C, SIGTERM): stop, keep the var dir, go on out
        log(f"drill {drill} interrupted; its var dir is kept: {site.var}")
        raise
    finally:
        site.stop()
    if result.failures:
        excerpt(site)
    elif not args.keep:
        shutil.rmtree(site.var, ignore_errors=True)
        result.var_dir = ""
    print_result(result)
    return result


def excerpt(site: Site) -> None:
    """Errors and tracebacks from the logs of a failed drill."""
    for path in sorted(site.logs.glob("*")):
        if path.name == ACCESS_LOG:
            continue
        lines = path.read_text(errors="replace").splitlines()
        hits = [
            line
            for line in lines
            if re.search(r"ERROR|CRITICAL|Traceback|Error:|WARNING/Main|sweep:", line)
            and "No hostname was supplied" not in line
        ]
        if hits:
            print(f"--- {path} ({len(hits)} notable lines, last 15) ---")
            for line in hits[-15:]:
                print(f"    {line[:240]}")


# --- output ---------------------------------------------------------------------------------


def print_result(r: DrillResult) -> None:
    if r.skipped:
        return
    print(f"--- drill {r.drill} ({r.backend}) ---")
    print(f"  uploads:                 {r.uploads}")
    total = sum(r.runs.values())
    print(
        f"  runs total/graded/failed: {total}/{r.runs.get('graded', 0)}/{r.runs.get('failed', 0)}"
        f" (expected {r.runs_expected}; all states {r.runs})"
    )
    print(f"  runs with != 1 current report: {len(r.bad_reports)}")
    secs = "-" if r.seconds_to_graded is None else f"{r.seconds_to_graded:.1f}"
    print(f"  seconds from last restart to all graded: {secs}")
    print(f"  sweeps that sent or took back work: {r.sweeps_active} (of {r.sweeps_logged} logged)")
    print(f"  upload-* spool files left in the media root: {r.spool_left}")
    print(f"  Django temporary upload files left (TMPDIR): {r.django_tmp_left}")
    for note in r.notes:
        print(f"  note: {note}")
    for failure in r.failures:
        print(f"  FAIL: {failure}")
    if r.var_dir:
        print(f"  var dir kept: {r.var_dir}")


def print_table(results: list[DrillResult]) -> None:
    header = (
        "drill",
        "backend",
        "upload",
        "runs",
        "graded",
        "failed",
        "!=1 current",
        "s to graded",
        "active sweeps",
        "spool left",
        "result",
    )
    rows = []
    for r in results:
        if r.skipped:
            rows.append((r.drill, r.backend, *(["-"] * 8), "skipped"))
            continue
        rows.append(
            (
                r.drill,
                r.backend,
                ",".join(status for _pk, status in r.uploads) or "-",
                str(sum(r.runs.values())),
                str(r.runs.get("graded", 0)),
                str(r.runs.get("failed", 0)),
                str(len(r.bad_reports)),
                "-" if r.seconds_to_graded is None else f"{r.seconds_to_graded:.1f}",
                str(r.sweeps_active),
                "-" if r.spool_left is None else str(r.spool_left),
                "FAIL" if r.failures else "ok",
            )
        )
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))
    for r in results:
        if r.skipped:
            print(f"{r.drill}: skipped, {r.skipped}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m perf.drill", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--backend", choices=("pg-redis", "embedded"), default="pg-redis")
    parser.add_argument(
        "--drill", action="append", choices=DRILLS, help="run only these (repeatable)"
    )
    parser.add_argument("--seeds", type=int, default=3, help="run groups (x 4 competitions)")
    parser.add_argument("--stale-after", type=int, default=20, help="MLEBOARD_STALE_AFTER_S")
    parser.add_argument("--reaper-interval", type=int, default=5, help="MLEBOARD_REAPER_INTERVAL_S")
    parser.add_argument("--fault-delay", type=float, default=2.0, help="seconds per grading")
    parser.add_argument("--broker-down", type=float, default=15.0, help="seconds redis is down")
    parser.add_argument(
        "--database-down", type=float, default=20.0, help="seconds PostgreSQL is stopped"
    )
    parser.add_argument("--pad-mb", type=float, default=50.0, help="random log in drill web")
    parser.add_argument(
        "--disk-mib", type=int, default=24, help="size of the media folder's tmpfs (drill disk)"
    )
    parser.add_argument(
        "--disk-min-free",
        type=int,
        default=1024**2,
        help="MLEBOARD_MEDIA_MIN_FREE_BYTES in drill disk (bytes)",
    )
    parser.add_argument("--big-mb", type=float, default=40.0, help="the upload drill disk refuses")
    parser.add_argument(
        "--fill-uploads", type=int, default=0, help="uploads at once that fill it (drill disk)"
    )
    parser.add_argument(
        "--after-uploads", type=int, default=2, help="ordinary uploads after it (drill disk)"
    )
    parser.add_argument("--deadline", type=float, default=240.0, help="s after the last restart")
    parser.add_argument(
        "--spool-wait-max",
        type=float,
        default=330.0,
        help="most seconds to wait for the sweeper's spool clean-up (0: do not wait)",
    )
    parser.add_argument(
        "--database-url", default="postgresql://postgres@127.0.0.1:5432/mleboard_drill"
    )
    parser.add_argument("--redis-port", type=int, default=REDIS_PORT)
    parser.add_argument("--redis-server", default="redis-server")
    parser.add_argument("--bin", default=str(REPO / ".venv" / "bin"), help="the venv's bin")
    parser.add_argument("--keep", action="store_true", help="keep every drill's var dir")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    if args.big_mb * 1e6 <= args.disk_mib * 1024**2:
        parser.error("--big-mb must be more than the filesystem of --disk-mib can hold")

    signal.signal(signal.SIGTERM, exit_on_signal)
    signal.signal(signal.SIGHUP, exit_on_signal)
    started = time.monotonic()
    print(
        f"mleboard drill: backend {args.backend}, STALE_AFTER_S={args.stale_after}, "
        f"REAPER_INTERVAL_S={args.reaper_interval}, fault delay {args.fault_delay} s, "
        f"{args.seeds} seeds x 4 competitions",
        flush=True,
    )
    results = []
    try:
        for drill in args.drill or DRILLS:
            results.append(run_drill(args, drill))
    finally:
        stop_all()
    print_table(results)
    failed = [r for r in results if r.failures]
    print(f"\ntotal time: {time.monotonic() - started:.0f} s")
    print("ALL INVARIANTS HOLD" if not failed else f"FAILED: {', '.join(r.drill for r in failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
