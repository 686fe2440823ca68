"""Each drill: what it sends, what it kills and when, and the checks of its own (the disk's);
what a drill found is its ``DrillResult``."""

from __future__ import annotations

import concurrent.futures
import http.client
import re
import threading
import time
from dataclasses import dataclass, field

from .archive import build_archive, multipart_body
from .disk import DISK_SLACK, DiskSnapshot, MiB
from .processes import DrillAbort, log, wait_for
from .site import ACCESS_LOG, Site
from .uploads import METADATA, SlowSender, post_answer_early

DRILLS = ("worker", "broker", "web", "database", "disk")


@dataclass
class DrillResult:
    drill: str
    backend: str
    skipped: str = ""
    uploads: list[tuple] = field(default_factory=list)
    runs_expected: int = 0
    uploads_expected: int = 1
    runs: dict[str, int] = field(default_factory=dict)
    bad_reports: list[tuple] = field(default_factory=list)
    seconds_to_graded: float | None = None
    sweeps_active: int = 0
    sweeps_logged: int = 0
    spool_left: int | None = None
    django_tmp_left: int | None = None
    disk_before: DiskSnapshot | None = None
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    var_dir: str = ""


def wait_runs(site: Site, status: str, at_least: int = 1, timeout: float = 120) -> dict:
    return wait_for(
        f"{at_least} run(s) {status}",
        lambda: (c := site.db.run_counts()).get(status, 0) >= at_least and c,
        timeout,
        every=0.1,
    )


def drill_worker(site: Site, result: DrillResult) -> float:
    archive, runs = build_archive(site.data, seeds=site.args.seeds, salt="worker")
    result.runs_expected = runs
    site.upload(archive, "drill-worker.zip")
    counts = wait_runs(site, "running")
    site.worker.kill()
    result.notes.append(f"worker group SIGKILLed with runs {counts}")
    log(f"worker SIGKILLed (pid group {site.worker.popen.pid}); runs then: {counts}")
    time.sleep(3)
    site.start_worker()
    log("worker restarted")
    return time.monotonic()


def drill_broker(site: Site, result: DrillResult) -> float:
    archive, runs = build_archive(site.data, seeds=site.args.seeds, salt="broker")
    result.runs_expected = runs
    site.upload(archive, "drill-broker.zip")
    counts = wait_runs(site, "graded")
    site.redis.kill()
    result.notes.append(f"redis SIGKILLed for {site.args.broker_down:.0f} s with runs {counts}")
    log(f"redis-server SIGKILLed; runs then: {counts}; down for {site.args.broker_down} s")
    time.sleep(site.args.broker_down)
    log(f"runs while the broker was down: {site.db.run_counts()}")
    site.start_redis()
    log("redis-server restarted (empty)")
    return time.monotonic()


def drill_web(site: Site, result: DrillResult) -> float:
    archive, runs = build_archive(
        site.data, seeds=site.args.seeds, salt="web", pad_bytes=int(site.args.pad_mb * 1024**2)
    )
    result.runs_expected = runs
    sender = SlowSender(site.port, site.token, archive, "drill-web.zip")
    sender.start()
    if not sender.reached.wait(timeout=60):
        raise DrillAbort("the slow upload never got under way")
    sent_at_kill = sender.sent
    site.web.kill()
    sender.join(timeout=60)
    total = len(sender.body)
    log(
        f"gunicorn SIGKILLed with {sent_at_kill / 1e6:.1f} of {total / 1e6:.1f} MB of the body "
        f"sent; sender: {sender.outcome}"
    )
    result.notes.append(
        f"gunicorn SIGKILLed at {sent_at_kill / 1e6:.1f}/{total / 1e6:.1f} MB sent "
        f"({sender.outcome})"
    )
    if sent_at_kill >= total:
        result.failures.append("drill: the kill did not land while the body was being sent")
    rows = site.db.uploads()
    result.notes.append(f"upload rows after the kill: {len(rows)}")
    site.start_web()
    restarted = time.monotonic()
    log("gunicorn restarted; sending the same archive again")
    answer = site.upload(archive, "drill-web.zip")
    result.notes.append(
        f"re-send: duplicate={answer.get('duplicate')} resumed={answer.get('resumed')} "
        f"id={answer.get('id')}"
    )
    return restarted


def probe(port: int, method: str, path: str, token: str = "", body: bytes = b"", ctype=""):
    """(status, Retry-After) of one request; status 0 for a broken connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Token {token}"} if token else {}
    if ctype:
        headers["Content-Type"] = ctype
    try:
        conn.request(method, path, body=body or None, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("Retry-After")
    except (OSError, http.client.HTTPException):
        return 0, None
    finally:
        conn.close()


def drill_database(site: Site, result: DrillResult) -> float:
    archive, runs = build_archive(site.data, seeds=site.args.seeds, salt="database")
    result.runs_expected = runs
    answer = site.upload(archive, "drill-database.zip")
    anonymous = ["/", "/api/leaderboard/"]
    # Into the page cache of each gunicorn worker (each keeps its own copies when no Redis
    # holds the pages): asked four at a time, while the first renders the others wait for
    # another worker.
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for path in anonymous * 2:
            list(pool.map(probe, [site.port] * 4, ["GET"] * 4, [path] * 4))
    counts = wait_runs(site, "graded")
    site.pg.stop()
    log(f"PostgreSQL stopped; runs then: {counts}; down for {site.args.database_down} s")
    extra, _ = build_archive(site.data, seeds=1, salt="database-during")
    body, ctype = multipart_body({"metadata": METADATA}, "archive", "during.zip", extra)
    asks = [("GET", path, "", b"", "") for path in anonymous + ["/api/experiments/"]] + [
        ("GET", f"/api/uploads/{answer.get('id')}/", site.token, b"", ""),
        ("POST", "/api/uploads/", site.token, body, ctype),
    ]
    seen: dict[tuple[str, int], int] = {}
    bad: list[str] = []
    down_until = time.monotonic() + site.args.database_down
    while time.monotonic() < down_until:
        for method, path, token, data, kind in asks:
            status, retry_after = probe(site.port, method, path, token, data, kind)
            name = f"{method} {path.split('?')[0]}"
            seen[(name, status)] = seen.get((name, status), 0) + 1
            if status not in (200, 503) or (status == 503 and not retry_after):
                bad.append(f"{name}: {status} (Retry-After {retry_after})")
        time.sleep(0.5)  # a client's pace, not a flood
    answers = ", ".join(f"{name} {status} x{n}" for (name, status), n in sorted(seen.items()))
    log(f"answers while the database was away: {answers}")
    result.notes.append(f"while away: {answers}")
    if bad:
        result.failures.append(
            f"{len(bad)} answer(s) neither a cached page nor a 503 with Retry-After: "
            + "; ".join(sorted(set(bad))[:10])
        )
    site.pg.start()
    log("PostgreSQL started again")
    return time.monotonic()


def drill_disk(site: Site, result: DrillResult) -> float:
    args, disk = site.args, site.disk
    archive, runs = build_archive(site.data, seeds=args.seeds, salt="disk")
    result.runs_expected = runs
    result.uploads_expected = 1 + args.after_uploads
    site.upload(archive, "drill-disk.zip")
    counts = wait_runs(site, "running")
    before = disk.snapshot()
    result.disk_before = before
    big, _ = build_archive(site.data, seeds=1, salt="disk-big", pad_bytes=int(args.big_mb * 1e6))
    body, ctype = multipart_body({"metadata": METADATA}, "archive", "drill-disk-big.zip", big)
    log(
        f"runs {counts}; {before.free / MiB:.2f} MiB free; posting {len(body) / 1e6:.1f} MB "
        f"to a {args.disk_mib} MiB filesystem"
    )
    status, answer, sent, ended = post_answer_early(site.port, site.token, body, ctype)
    after = disk.snapshot()
    message = answer[:160].decode(errors="replace")
    log(f"big upload: {status} after {sent / 1e6:.1f} of {len(body) / 1e6:.1f} MB sent: {message}")
    result.notes.append(
        f"big upload ({len(body) / 1e6:.1f} MB): {status or 'no answer'} with "
        f"{sent / 1e6:.1f} MB of it sent ({ended}): {message}"
    )
    if status != 507:
        result.failures.append(f"the big upload was answered {status or 'nothing'}, not 507")
    elif b"storage" not in answer:
        result.failures.append(f"the 507 says nothing of the storage: {message}")
    grown = after.held - before.held
    result.notes.append(
        f"free space: {before.free / MiB:.2f} MiB before the big upload, "
        f"{after.free / MiB:.2f} MiB after its refusal (files grading wrote meanwhile: "
        f"{grown / MiB:+.2f} MiB)"
    )
    if after.free < before.free - max(grown, 0) - DISK_SLACK:
        result.failures.append(
            f"free space not back after the refusal: {before.free} B before, {after.free} B "
            f"after, of which the files written meanwhile take {grown} B"
        )
    check_disk(site, result, before, after, "after the refusal")
    fill_at_once(site, result)
    for number in range(args.after_uploads):
        extra, n = build_archive(site.data, seeds=1, salt=f"disk-after-{number}")
        result.runs_expected += n
        site.upload(extra, f"drill-disk-after-{number}.zip")  # raises unless 202
    return time.monotonic()


def fill_at_once(site: Site, result: DrillResult) -> None:
    """``--fill-uploads`` uploads at once, each 0.4 of the room above the margin: together
    they do not fit. Each must be answered 202 or 507; the accepted ones are graded."""
    count = site.args.fill_uploads
    if count < 1:
        return
    space = site.disk.snapshot()
    size = int(0.4 * (space.free - site.args.disk_min_free))
    bodies = []
    for number in range(count):
        archive, runs = build_archive(
            site.data, seeds=1, salt=f"disk-fill-{number}", pad_bytes=size
        )
        body = multipart_body(
            {"metadata": METADATA}, "archive", f"drill-disk-fill-{number}.zip", archive
        )
        bodies.append((body, runs))
    start = threading.Barrier(count)
    answers: list[tuple] = [()] * count

    def send(number: int) -> None:
        (body, ctype), _runs = bodies[number]
        start.wait()
        answers[number] = post_answer_early(site.port, site.token, body, ctype)

    threads = [threading.Thread(target=send, args=(n,), daemon=True) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    statuses = []
    for number, answer in enumerate(answers):
        status, text, sent, _ended = answer or (0, b"", 0, "")
        (body, _ctype), runs = bodies[number]
        whole = "whole body sent" if sent >= len(body) else f"{sent / 1e6:.1f} MB sent"
        statuses.append(f"{status or 'no answer'} ({whole})")
        if status == 202:
            result.uploads_expected += 1
            result.runs_expected += runs
        elif status != 507:
            result.failures.append(
                f"an upload filling the disk got {status or 'no answer'}, not 202 or 507: "
                f"{text[:160].decode(errors='replace')}"
            )
    log(f"{count} uploads of {size / MiB:.1f} MiB at once: {', '.join(statuses)}")
    refused = [f"drill-disk-fill-{n}.zip" for n, a in enumerate(answers) if a and a[0] == 507]
    now = site.disk.snapshot()
    left = sorted(path for path in now.files if path.endswith(tuple(refused)))
    if left:
        result.failures.append(f"refused uploads left files in the media folder: {left}")
    check_disk(site, result, result.disk_before, now, "after the uploads at once", big=False)
    result.notes.append(f"{count} uploads of {size / MiB:.1f} MiB at once: {', '.join(statuses)}")
    if not any(a and a[0] == 507 for a in answers):
        result.failures.append("drill: the uploads at once all fit, the disk never filled")


def check_disk(
    site: Site,
    result: DrillResult,
    before: DiskSnapshot,
    now: DiskSnapshot,
    when: str,
    big: bool = True,
) -> None:
    """No partial file in the media folder (with ``big``: no new file of 1 MiB or more,
    which only accepted uploads of ``--fill-uploads`` may add), no space held by a removed
    file, no 500."""
    new_big = sorted(
        f"{path} ({size / MiB:.1f} MiB)"
        for path, size in now.files.items()
        if big and size >= MiB and before.files.get(path) != size
    )
    if new_big:
        result.failures.append(f"{when}: a file of 1 MiB or more appeared: {new_big}")
    incoming = sorted(path for path in now.files if path.startswith("incoming/"))
    if incoming:
        result.failures.append(f"{when}: files left in incoming/: {incoming[:5]}")
    if now.unaccounted > before.unaccounted + DISK_SLACK:
        result.failures.append(
            f"{when}: the filesystem holds {now.unaccounted / MiB:.2f} MiB no file accounts "
            f"for ({before.unaccounted / MiB:.2f} MiB before): a removed file still open"
        )
    access = site.logs / ACCESS_LOG
    codes: dict[str, int] = {}
    if access.exists():
        for match in re.finditer(r'" (\d{3}) ', access.read_text(errors="replace")):
            codes[match.group(1)] = codes.get(match.group(1), 0) + 1
    errors = {code: n for code, n in codes.items() if code >= "500" and code != "507"}
    if errors:
        result.failures.append(f"{when}: answers of 500 or above (507 aside): {errors}")
    result.notes.append(
        f"{when}: {now.free / MiB:.2f} MiB free, {now.unaccounted / 1024:.0f} KiB held by no "
        f"file, {len(now.files)} files, answers {dict(sorted(codes.items()))}"
    )


def after_disk(site: Site, result: DrillResult) -> None:
    end = site.disk.snapshot()
    big = not site.args.fill_uploads
    check_disk(site, result, result.disk_before, end, "at the end", big=big)


DRILL_FUNCS = {
    "worker": drill_worker,
    "broker": drill_broker,
    "web": drill_web,
    "database": drill_database,
    "disk": drill_disk,
}
# Checks after every upload is graded, for the drills that have them.
AFTER_FUNCS = {"disk": after_disk}
