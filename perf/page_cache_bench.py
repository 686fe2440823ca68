"""The page cache's bounds, measured on a running site (``perf.drill``'s ``Site``) with the
cache in a private ``redis-server``: its memory under many distinct addresses, and how
often private grading makes public pages render again (method: docs/benchmarks.md).

    .venv/bin/python perf/page_cache_bench.py [--backend embedded|pg-redis]
        [--database-url postgresql://postgres@127.0.0.1:5432/mleboard_cache_bench]
        [--urls 10000] [--searches 2000] [--since 5000] [--uploads 8]
        [--cache-max-bytes 16m]

Every process it starts is stopped on exit, and its var dir removed (``--keep`` keeps it);
the database named by ``--database-url`` (pg-redis) is dropped and created, never ``mleboard``.
"""

import argparse
import asyncio
import datetime as dt
import http.client
import os
import random
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import load_bench  # noqa: E402
from drill.archive import build_archive  # noqa: E402
from drill.processes import REPO, Proc, free_port, wait_for  # noqa: E402
from drill.site import Site  # noqa: E402

from config.parsers import parse_size  # noqa: E402

# The parameter each address reads (kept), and junk it does not.
PUBLIC = [
    ("/", "clean=1"),
    ("/competitions/", "category=nlp"),
    ("/competitions/spaceship-titanic/", ""),
    ("/api/leaderboard/", "clean=1"),
    ("/api/competitions/", "complexity=low"),
    ("/api/experiments/", ""),
]
ACCEPTS = [
    "*/*",
    "application/json",
    "application/json, text/plain, */*",
    "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "application/*;q=0.9",
]


def junk_address(i: int, rng: random.Random) -> tuple[str, str]:
    path, kept = PUBLIC[i % len(PUBLIC)]
    params = [f"utm_source=s{i}", f"_={rng.randrange(10**9)}"] + ([kept] if kept else [])
    if i % 3 == 0 and kept:
        params.append(kept)  # repeated
    rng.shuffle(params)
    return f"{path}?{'&'.join(params)}", ACCEPTS[i % len(ACCEPTS)]


def get(port: int, path: str, accept: str = "*/*", cookie: str = "") -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Accept": accept, "Accept-Encoding": "gzip"}
    if cookie:
        headers["Cookie"] = cookie
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("X-Page-Cache") or "-"
    finally:
        conn.close()


def many(port: int, addresses: list[tuple], threads: int = 8) -> dict[str, int]:
    """GET every address (``threads`` at once); counts of the answers' cache states."""
    states: dict[str, int] = {}
    lock = threading.Lock()

    def one(address):
        status, state = get(port, *address)
        key = state if status == 200 else f"status {status}"
        with lock:
            states[key] = states.get(key, 0) + 1

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, addresses))
    return states


def sign_in(port: int, manage, name: str = "since-bench") -> str:
    """A session cookie for a person made here (through the sign-in form, CSRF and all)."""
    manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model\n"
        f"get_user_model().objects.create_user({name!r}, password='pw-since-bench-1')",
    )
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/accounts/login/")
    response = conn.getresponse()
    body = response.read().decode()
    csrf = response.getheader("Set-Cookie").split("csrftoken=", 1)[1].split(";", 1)[0]
    token = body.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    form = f"csrfmiddlewaretoken={token}&username={name}&password=pw-since-bench-1"
    conn.request(
        "POST",
        "/accounts/login/",
        body=form,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"csrftoken={csrf}",
            "Referer": f"http://127.0.0.1:{port}/accounts/login/",
        },
    )
    response = conn.getresponse()
    response.read()
    cookies = response.getheader("Set-Cookie") or ""
    if "sessionid=" not in cookies:
        raise RuntimeError(f"could not sign in: {response.status}")
    session = cookies.split("sessionid=", 1)[1].split(";", 1)[0]
    return f"sessionid={session}"


def web_rss_mb(pgid: int) -> list[float]:
    """The resident memory of each gunicorn worker of process group ``pgid`` (MB)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not (proc.name.isascii() and proc.name.isdigit()):
            continue
        try:
            if os.getpgid(int(proc.name)) != pgid:
                continue
            status = (proc / "status").read_text()
            if int(status.split("PPid:", 1)[1].split()[0]) == pgid:  # a worker, not the master
                rss = int(status.split("VmRSS:", 1)[1].split()[0])
                found.append(rss / 1024)
        except (OSError, IndexError, ValueError):
            continue
    return sorted(found)


def since_addresses(n: int, cookie: str) -> list[tuple[str, str, str]]:
    start = dt.date(1990, 1, 1)
    out = []
    for i in range(n):
        day = (start + dt.timedelta(days=i * 3)).isoformat()
        path = "/" if i % 2 else "/api/leaderboard/"
        out.append((f"{path}?since={day}", "*/*", cookie if i % 4 < 2 else ""))
    return out


def redis_memory(client) -> dict:
    info = client.info()
    return {
        "used_memory_mb": info["used_memory"] / 1024**2,
        "keys": client.dbsize(),
        "evicted": info.get("evicted_keys", 0),
        "maxmemory_mb": int(client.config_get("maxmemory")["maxmemory"]) / 1024**2,
        "policy": client.config_get("maxmemory-policy")["maxmemory-policy"],
    }


def show(label: str, memory: dict) -> None:
    print(
        f"  {label:44} used_memory {memory['used_memory_mb']:7.2f} MB  keys {memory['keys']:6d}"
        f"  evicted {memory['evicted']:6d}  (maxmemory {memory['maxmemory_mb']:.0f} MB, "
        f"{memory['policy']})",
        flush=True,
    )


class VersionChanges(threading.Thread):
    """Counts writes of the page cache's version keys (keyspace notifications)."""

    def __init__(self, client) -> None:
        super().__init__(daemon=True)
        client.config_set("notify-keyspace-events", "K$")
        self.pubsub = client.pubsub()
        self.pubsub.psubscribe("__keyspace@0__:*mleboard:pages:version*")
        self.counts: dict[str, int] = {}
        self.running = True

    def run(self) -> None:
        while self.running:
            message = self.pubsub.get_message(timeout=0.2)
            if message and message["type"] == "pmessage":
                key = message["channel"].decode().split("mleboard:pages:version", 1)[1]
                scope = key.lstrip(":") or "catalogue"
                scope = scope.split(":", 1)[0] + ":*" if ":" in scope else scope
                self.counts[scope] = self.counts.get(scope, 0) + 1

    def stop(self) -> tuple[dict[str, int], dict[str, int]]:
        """The changes of public pages' versions, and of signed-in people's own
        (``webapp.edge.viewer_pages``: their private work, their class)."""
        self.running = False
        self.join(5)
        public = {k: n for k, n in self.counts.items() if k in PUBLIC_SCOPES}
        return public, {k: n for k, n in self.counts.items() if k not in PUBLIC_SCOPES}


# The version keys of anonymous (public) pages; the others belong to signed-in pages.
PUBLIC_SCOPES = ("catalogue", "listings", "experiment:*")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("pg-redis", "embedded"), default="embedded")
    parser.add_argument(
        "--database-url", default="postgresql://postgres@127.0.0.1:5432/mleboard_cache_bench"
    )
    parser.add_argument("--experiments", type=int, default=30)
    parser.add_argument("--urls", type=int, default=10_000)
    parser.add_argument("--searches", type=int, default=2_000)
    parser.add_argument("--since", type=int, default=5_000)
    parser.add_argument("--uploads", type=int, default=8)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10, help="`/` at rest")
    parser.add_argument("--cache-max-bytes", default="16m", help="MLEBOARD_CACHE_MAX_BYTES")
    parser.add_argument("--redis-server", default="redis-server")
    parser.add_argument("--bin", default=str(REPO / ".venv" / "bin"))
    parser.add_argument("--keep", action="store_true", help="keep the site's var dir")
    args = parser.parse_args(argv)
    load_bench.refuse_default_database(args.database_url)
    cache_max = parse_size(args.cache_max_bytes)

    site_args = argparse.Namespace(
        backend=args.backend,
        database_url=args.database_url,
        stale_after=20,
        reaper_interval=5,
        fault_delay=0.0,
        redis_port=free_port(),
        redis_server=args.redis_server,
        bin=args.bin,
        seeds=1,
    )
    site = Site(site_args, "cache")
    cache_port = free_port()
    pages_redis = Proc(
        "pages-redis",
        [
            args.redis_server,
            "--port",
            str(cache_port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(site.var),
        ],  # fmt: skip
        site.env,
        site.logs / "pages-redis.log",
    )
    cache_env = {
        "MLEBOARD_CACHE_URL": f"redis://127.0.0.1:{cache_port}/0",
        "MLEBOARD_CACHE_MAX_BYTES": str(cache_max),
        "MLEBOARD_PAGE_CACHE": "1",
    }
    # Every process: the worker's changes must reach the pages' Redis too.
    for env in (site.env, site.web.env, site.worker.env, site.beat.env):
        env.update(cache_env)
    import redis

    try:
        pages_redis.start()
        client = redis.Redis(port=cache_port)
        wait_for("the pages' redis-server", client.ping, 30)
        site.setup()
        load_bench.fill(site.env, site.var, args.experiments, 1, set_up=False)
        site.start_all()
        port = site.port
        print(f"site on port {port}: {args.backend}, {args.experiments} published experiments")

        print(f"\n1. memory (MLEBOARD_CACHE_MAX_BYTES={args.cache_max_bytes})", flush=True)
        many(port, [(path, "*/*") for path, _ in PUBLIC])  # the pages themselves, once
        show("after the public pages, once", before := redis_memory(client))
        rng = random.Random(0)
        started = time.perf_counter()
        states = many(port, [junk_address(i, rng) for i in range(args.urls)])
        elapsed = time.perf_counter() - started
        show(f"after {args.urls} distinct junk addresses", after := redis_memory(client))
        print(
            f"  answers {states} in {elapsed:.0f} s; memory added "
            f"{after['used_memory_mb'] - before['used_memory_mb']:+.2f} MB, keys added "
            f"{after['keys'] - before['keys']:+d}"
        )
        started = time.perf_counter()
        states = many(port, [(f"/competitions/?q=s{i}", "*/*") for i in range(args.searches)])
        show(f"after {args.searches} distinct searches", searched := redis_memory(client))
        print(f"  answers {states} in {time.perf_counter() - started:.0f} s")
        bounded = searched["used_memory_mb"] <= searched["maxmemory_mb"]

        cookie = sign_in(port, site.manage)
        pgid = site.web.popen.pid
        many(port, [("/", "*/*", cookie), ("/api/leaderboard/", "*/*", "")])
        rss_before, keys_before = web_rss_mb(pgid), client.dbsize()
        started = time.perf_counter()
        states = many(port, since_addresses(args.since, cookie))
        rss_after, keys_after = web_rss_mb(pgid), client.dbsize()
        print(
            f"  after {args.since} distinct ?since= days (half signed in) in "
            f"{time.perf_counter() - started:.0f} s: answers {states}\n"
            f"  web workers' RSS {', '.join(f'{m:.0f}' for m in rss_before)} MB -> "
            f"{', '.join(f'{m:.0f}' for m in rss_after)} MB; Redis keys "
            f"{keys_before} -> {keys_after}"
        )

        print(f"\n2. `/` while {args.uploads} private uploads are graded", flush=True)
        paths = ["/"]
        get(port, "/")
        rest = asyncio.run(load_bench.load(port, paths, args.clients, 2, args.seconds))
        print(f"  at rest:      p50 {rest['p50']:6.1f} ms  p99 {rest['p99']:6.1f} ms")
        archives = [
            build_archive(site.data, seeds=1, salt=f"cache-{i}")[0] for i in range(args.uploads)
        ]
        changes = VersionChanges(redis.Redis(port=cache_port))
        changes.start()
        done = threading.Event()
        graded_after: list[float] = []

        def upload_and_wait() -> None:
            started = time.monotonic()
            for i, archive in enumerate(archives):
                site.upload(archive, f"private-{i}.zip")
            wait_for(
                "every upload graded",
                lambda: (
                    len(u := site.db.uploads()) == args.uploads
                    and all(row[1] == "graded" for row in u)
                ),
                600,
                every=0.5,
            )
            graded_after.append(time.monotonic() - started)
            done.set()

        uploader = threading.Thread(target=upload_and_wait, daemon=True)
        uploader.start()
        during = []
        while not done.is_set() and uploader.is_alive():
            during.append(asyncio.run(load_bench.load(port, paths, args.clients, 0, 3)))
        uploader.join(5)
        time.sleep(1)  # the last commit's version change, if any, reaches the counter
        counted, own = changes.stop()
        latencies = [r for r in during if r["requests"]]
        n = sum(r["requests"] for r in latencies)
        worst = max((r["p99"] for r in latencies), default=float("nan"))
        print(
            f"  during grading ({graded_after[0] if graded_after else float('nan'):.0f} s, "
            f"{n} requests): p99 of each 3 s window, worst {worst:6.1f} ms; windows "
            + ", ".join(f"{r['p99']:.0f}" for r in latencies)
        )
        print(f"  public page version changes while grading: {counted or 'none'}")
        print(f"  the uploader's own (signed-in) versions changed: {own or 'none'}")
        print(f"  runs: {site.db.run_counts()}")
        print(
            f"\nsummary: {args.urls} junk addresses added "
            f"{after['used_memory_mb'] - before['used_memory_mb']:+.2f} MB / "
            f"{after['keys'] - before['keys']:+d} keys; memory bounded: {bounded}; "
            f"`/` p99 {rest['p99']:.0f} ms at rest, {worst:.0f} ms worst window while "
            f"{args.uploads} private uploads were graded; public versions changed: "
            f"{sum(counted.values())}"
        )
        return 0 if bounded and not counted and graded_after else 1
    finally:
        site.stop()
        pages_redis.stop()
        if not args.keep:
            shutil.rmtree(site.var, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
