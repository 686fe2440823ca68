"""Every environment variable mleboard reads, declared once: its name, parser, default,
meaning and whether it is internal (set by mleboard itself, or a contract between its own
parts, not for operators).

Everything asks this declaration: the settings, the runner, the command line, the process
launcher (``webapp/ops/processes.py``), and the docs' configuration table, which
``mleboard config --write docs/configuration.md`` renders from it.
``tests/config/test_configuration.py`` fails when a name read anywhere (Python, scripts,
compose.yaml) is not declared here, or when the page's table differs from the rendering.

Add a variable by adding a ``Variable`` below (in its section), then read it with
``config.env(NAME)`` and rerun ``mleboard config --write docs/configuration.md``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config import parsers as p
from config.parsers import ConfigurationError

# Where the repository (or the installed packages) is: `var/` beside it by default.
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Computed:
    """A default computed when read, from the other variables (``read(name)``) or the
    machine."""

    compute: Callable[[Callable[[str], Any]], Any]


@dataclass(frozen=True)
class Variable:
    name: str
    parse: Callable[[str], Any]
    # The value when unset (or set to an empty string, unless ``empty_is_unset`` is off);
    # ``Computed`` for defaults that depend on the machine or on other variables.
    default: Any
    # The configuration page's "default" column, in Markdown.
    shown: str
    # The configuration page's "meaning" column, in Markdown.
    meaning: str
    section: str
    # Set by mleboard for its own processes, or a contract between its parts (the agent's
    # container, a test's switch): declared so that reading it is allowed, not documented
    # for operators.
    internal: bool = False
    # A variable where "set to nothing" means something other than "unset"
    # (MLEBOARD_HOST_GPUS= : no GPUs, while unset: ask the machine).
    empty_is_unset: bool = True


SITE = "The site"
SECURITY = "HTTPS and logins"
ACCOUNTS = "Accounts and mail"
SERVICES = "Database, broker and caches"
PROCESSES = "Processes (`make run`, compose)"
UPLOADS = "Uploads and grading"
SWEEPER = "Work that outlives its worker"
RUNS = "Agent runs"
HOSTS = "Run hosts"
VALIDATION = "The validation service agents call"
LLM = "Agents that need a model"
INTEGRITY = "Integrity checks"
CONTAMINATION = "Contamination (familiarity)"
CLI = "The command line (`mleboard submit`, `mleboard login`)"
TESTS = "Tests"
AGENT = "Inside an agent's run (set by the harness or the agent's agent.yaml)"
SYSTEM = "The operating system's"

SECTIONS = (
    SITE,
    SECURITY,
    ACCOUNTS,
    SERVICES,
    PROCESSES,
    UPLOADS,
    SWEEPER,
    RUNS,
    HOSTS,
    VALIDATION,
    LLM,
    INTEGRITY,
    CONTAMINATION,
    CLI,
    TESTS,
    AGENT,
    SYSTEM,
)


def _memory_bytes(_read) -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _var(path: str) -> Computed:
    return Computed(lambda read: read("MLEBOARD_VAR_DIR") / path)


def _wheelhouse(read) -> Path:
    cache = read("XDG_CACHE_HOME").strip() or str(Path.home() / ".cache")
    return Path(cache) / "mleboard" / "wheelhouse"


RUN_QUEUE_NAMES = ("runs.cpu", "runs.gpu")

VARIABLES: tuple[Variable, ...] = (
    # --- the site -----------------------------------------------------------------------
    Variable(
        "MLEBOARD_VAR_DIR",
        p.parse_path,
        Computed(lambda read: ROOT / "var"),
        "`var`",
        "where the SQLite file, broker folders, media, logs and static files go",
        SITE,
    ),
    Variable(
        "MLEBOARD_DATA_DIR",
        p.parse_path,
        _var("data"),
        "`var/data`",
        "prepared competition data: `<dir>/<competition>/prepared/{public,private}` (also "
        "the default `--data-dir` of the `mleboard` commands)",
        SITE,
    ),
    Variable(
        "MLEBOARD_MEDIA_ROOT",
        p.parse_path,
        _var("media"),
        "`var/media`",
        "uploaded archives and agent runs' outputs",
        SITE,
    ),
    Variable(
        "SECRET_KEY",
        p.parse_str,
        "",
        "the key in `var/secret_key`",
        "Django's signing key. `make run` writes a random one to `$MLEBOARD_VAR_DIR/secret_key` "
        "once (mode 0600) and keeps it; set `SECRET_KEY` on any other deployment. With `DEBUG` "
        "off and neither set, the site refuses to start rather than use its built-in "
        "development key",
        SITE,
    ),
    Variable(
        "DEBUG",
        p.parse_bool,
        False,
        "off",
        "Django's debug pages; also lets the site start with the built-in key (local "
        "development only)",
        SITE,
    ),
    Variable(
        "ALLOWED_HOSTS",
        p.list_of(),
        ["localhost", "127.0.0.1", "[::1]", "testserver"],
        "`localhost,127.0.0.1,[::1],testserver`",
        "host names the site answers, `,`-separated",
        SITE,
    ),
    Variable(
        "CSRF_TRUSTED_ORIGINS",
        p.list_of(),
        [],
        "unset",
        "origins allowed to post forms, `,`-separated, e.g. `https://mleboard.example.org`",
        SITE,
    ),
    Variable(
        "LOG_LEVEL",
        lambda text: p.one_of(("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))(text.upper()),
        "INFO",
        "`INFO`",
        "the site's log level (`DEBUG`, `INFO`, `WARNING`, `ERROR`, `CRITICAL`)",
        SITE,
    ),
    # --- HTTPS and logins -----------------------------------------------------------------
    Variable(
        "MLEBOARD_BEHIND_TLS_PROXY",
        p.parse_bool,
        False,
        "off",
        "`1` behind a proxy that terminates TLS and sets `X-Forwarded-Proto` (overwriting any "
        "a client sends): requests it marks `https` count as secure",
        SECURITY,
    ),
    Variable("SECURE_SSL_REDIRECT", p.parse_bool, False, "off", "redirect http to https", SECURITY),
    Variable(
        "SESSION_COOKIE_SECURE",
        p.parse_bool,
        False,
        "off",
        "send the session cookie over https only",
        SECURITY,
    ),
    Variable(
        "CSRF_COOKIE_SECURE",
        p.parse_bool,
        False,
        "off",
        "send the CSRF cookie over https only",
        SECURITY,
    ),
    Variable(
        "SECURE_HSTS_SECONDS",
        p.parse_non_negative_int,
        0,
        "0 (no HSTS)",
        "Strict-Transport-Security max-age, e.g. 31536000; start small, browsers remember it",
        SECURITY,
    ),
    Variable(
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        p.parse_bool,
        False,
        "off",
        "HSTS for subdomains too",
        SECURITY,
    ),
    Variable("SECURE_HSTS_PRELOAD", p.parse_bool, False, "off", "allow HSTS preloading", SECURITY),
    Variable(
        "MLEBOARD_LOGIN_LOCKOUT",
        p.parse_bool,
        True,
        "on",
        "lock a username out from one address after repeated failed logins (django-axes, the "
        "site's and the admin's login); the admin's *Access attempts* lists lockouts, "
        "`manage.py axes_reset` lifts them. Behind a proxy every client has the proxy's "
        "address, so the lockout is per username",
        SECURITY,
    ),
    Variable(
        "MLEBOARD_LOGIN_FAILURE_LIMIT",
        p.parse_positive_int,
        5,
        "5",
        "failed logins before the lockout",
        SECURITY,
    ),
    Variable(
        "MLEBOARD_LOGIN_COOLOFF_MINUTES",
        p.parse_non_negative_int,
        15,
        "15",
        "how long a lockout lasts, in minutes (0: until an admin lifts it)",
        SECURITY,
    ),
    Variable(
        "MLEBOARD_UPLOAD_RATE",
        p.parse_rate,
        "30/hour",
        "`30/hour`",
        "uploads per user, the API and the upload page together (`N/sec`, `N/min`, `N/hour`, "
        "`N/day`, or `off`); past it: 429 with when to retry",
        SECURITY,
    ),
    Variable(
        "MLEBOARD_REGRADE_RATE",
        p.parse_rate,
        "10/hour",
        "`10/hour`",
        "experiment re-grades per user through the API (same format)",
        SECURITY,
    ),
    # --- accounts and mail ----------------------------------------------------------------
    Variable(
        "MLEBOARD_SIGNUP",
        p.one_of(("closed", "invite", "open")),
        "closed",
        "`closed` (`make run`: `open`)",
        "who may make an account: `closed` (the operator only), `invite` (a link staff make "
        "under *Admin › Invites*, mailed to the address) or `open` (anyone, with email "
        "verification)",
        ACCOUNTS,
    ),
    Variable(
        "MLEBOARD_INVITE_DAYS",
        p.parse_positive_int,
        14,
        "14",
        "how many days an invite link works",
        ACCOUNTS,
    ),
    Variable(
        "MLEBOARD_EMAIL_BACKEND",
        p.one_of(("console", "smtp", "file")),
        "console",
        "`console`",
        "where mail (verification, password reset, invites) goes: `console` (the web "
        "process's output: `make run`'s terminal), `smtp` (the `EMAIL_*` variables below) or "
        "`file` (`var/mail/`)",
        ACCOUNTS,
    ),
    Variable("EMAIL_HOST", p.parse_str, "localhost", "`localhost`", "the SMTP server", ACCOUNTS),
    Variable("EMAIL_PORT", p.parse_positive_int, 25, "25", "its port", ACCOUNTS),
    Variable("EMAIL_HOST_USER", p.parse_str, "", "unset", "the SMTP user name", ACCOUNTS),
    Variable("EMAIL_HOST_PASSWORD", p.parse_str, "", "unset", "its password", ACCOUNTS),
    Variable("EMAIL_USE_TLS", p.parse_bool, False, "off", "STARTTLS to the SMTP server", ACCOUNTS),
    Variable(
        "DEFAULT_FROM_EMAIL",
        p.parse_str,
        "mleboard <noreply@localhost>",
        "`mleboard <noreply@localhost>`",
        "the sender of the site's mail",
        ACCOUNTS,
    ),
    # --- services -------------------------------------------------------------------------
    Variable(
        "DATABASE_URL",
        p.parse_str,
        Computed(lambda read: f"sqlite:///{read('MLEBOARD_VAR_DIR') / 'mleboard.sqlite3'}"),
        "`sqlite:///var/mleboard.sqlite3`",
        "e.g. `postgresql://user@127.0.0.1:5432/mleboard`",
        SERVICES,
    ),
    Variable(
        "DATABASE_CONN_MAX_AGE",
        p.parse_whole_seconds,
        0,
        "0",
        "seconds a process keeps its database connection between requests (0: one per "
        "request; see `docs/scaling.md`)",
        SERVICES,
    ),
    Variable(
        "CELERY_BROKER_URL",
        p.parse_str,
        "filesystem://",
        "`filesystem://` (embedded)",
        "e.g. `redis://127.0.0.1:6379/0`; the embedded broker keeps its messages under "
        "`$MLEBOARD_VAR_DIR/broker/`",
        SERVICES,
    ),
    Variable(
        "CELERY_VISIBILITY_TIMEOUT",
        p.parse_positive_whole_seconds,
        26 * 3600,
        "26h",
        "Redis re-delivers a task not acknowledged for this long: longer than any task (an "
        "agent run may take the paper's 24 hours)",
        SERVICES,
    ),
    Variable(
        "CACHE_URL",
        p.url_with_scheme("redis", "rediss"),
        "",
        "unset: a folder `var/cache`",
        "where the throttles count requests; `redis://127.0.0.1:6379/1` shares the counts "
        "between hosts",
        SERVICES,
    ),
    Variable(
        "MLEBOARD_CACHE_URL",
        p.url_with_scheme("redis", "rediss"),
        "",
        "unset: each web process's memory (at most 64 MiB)",
        "where public pages are cached, whole for anonymous visitors and around their own "
        "navigation for people signed in: a Redis of their own "
        "(compose's `pagecache`), bounded by `MLEBOARD_CACHE_MAX_BYTES` with least recently "
        "used pages evicted. Refused when it is the broker's or `CACHE_URL`'s Redis "
        "(eviction would drop their keys)",
        SERVICES,
    ),
    Variable(
        "MLEBOARD_CACHE_MAX_BYTES",
        p.parse_size,
        256 * 1024**2,
        "256m",
        "the memory of `MLEBOARD_CACHE_URL`'s Redis: the site sets its `maxmemory` to this "
        "and `maxmemory-policy` to `allkeys-lru` when it first uses it (a Redis that refuses "
        "`CONFIG SET` must be configured so by hand)",
        SERVICES,
    ),
    Variable(
        "MLEBOARD_PAGE_CACHE",
        p.parse_bool,
        True,
        "on",
        "serve the public pages from the page cache: whole to anonymous visitors, and to "
        "people signed in as their class of viewers sees them around their own navigation",
        SERVICES,
    ),
    # --- processes ------------------------------------------------------------------------
    Variable(
        "HOST",
        p.parse_str,
        "127.0.0.1",
        "`127.0.0.1`",
        "the address `make run` serves the site on",
        PROCESSES,
    ),
    Variable(
        "PORT",
        p.parse_positive_int,
        8000,
        "8000",
        "the port `make run` serves the site on (compose: 8000 inside the container)",
        PROCESSES,
    ),
    Variable(
        "WEB_CONCURRENCY",
        p.parse_positive_int,
        2,
        "2",
        "gunicorn's worker processes",
        PROCESSES,
    ),
    Variable(
        "WORKER_CONCURRENCY",
        p.parse_positive_int,
        2,
        "2",
        "processes of the grading worker",
        PROCESSES,
    ),
    Variable(
        "MLEBOARD_SHUTDOWN_GRACE_S",
        p.parse_whole_seconds,
        10,
        "10s",
        "on SIGTERM or Ctrl-C, how long gunicorn lets requests finish (workers hand their "
        "work back at once: it waits again and is done at the next start); `make run`'s "
        "supervisor kills what is still alive a few seconds later",
        PROCESSES,
    ),
    Variable(
        "MLEBOARD_LOG_TO_FILES",
        p.parse_bool,
        False,
        "off",
        "set by `make run`'s supervisor: workers and beat log to files under `var/log/`",
        PROCESSES,
        internal=True,
    ),
    Variable(
        "MLEBOARD_HOST_DIR",
        p.parse_path,
        Path("/srv/mleboard"),
        "`/srv/mleboard`",
        "compose only: the host folder holding data and media, mounted at the same path in "
        "every service",
        PROCESSES,
    ),
    Variable(
        "DOCKER_GID",
        p.parse_non_negative_int,
        999,
        "999",
        "compose only: the group id of the host's Docker socket, for the runs worker",
        PROCESSES,
    ),
    Variable(
        "MLEBOARD_BASE_IMAGE",
        p.parse_str,
        "python:3.11-slim-bookworm",
        "`python:3.11-slim-bookworm`",
        "compose only: the image the site's image is built on (the `Dockerfile`'s "
        "`BASE_IMAGE`); `mleboard images --stack` prints one made from Debian's packages",
        PROCESSES,
    ),
    Variable(
        "MLEBOARD_JS_IMAGE",
        p.parse_str,
        "node:20-bookworm-slim",
        "`node:20-bookworm-slim`",
        "compose only: the image the `Dockerfile`'s JavaScript stage runs in (`JS_IMAGE`); "
        "one without npm takes the bundle `npm ci --prefix web` installed on the host",
        PROCESSES,
    ),
    Variable(
        "MLEBOARD_POSTGRES_IMAGE",
        p.parse_str,
        "postgres:15",
        "`postgres:15`",
        "compose only: the PostgreSQL image (`mleboard images --stack`: from Debian's packages)",
        PROCESSES,
    ),
    Variable(
        "MLEBOARD_REDIS_IMAGE",
        p.parse_str,
        "redis:7",
        "`redis:7`",
        "compose only: the Redis image of the broker and the page cache (`mleboard images "
        "--stack`: from Debian's packages)",
        PROCESSES,
    ),
    Variable(
        "DOCKERD_LOG",
        p.parse_path,
        Path("/tmp/dockerd.log"),
        "`$TMPDIR/dockerd.log`",
        "`scripts/docker-up.sh` (`make images`, `make test`): where the Docker engine it "
        "starts writes its log",
        PROCESSES,
    ),
    Variable(
        "DOCKERD_TIMEOUT",
        p.parse_positive_whole_seconds,
        60,
        "60",
        "`scripts/docker-up.sh`: seconds to wait for the engine to answer",
        PROCESSES,
    ),
    Variable(
        "DOCKERD_ARGS",
        p.parse_str,
        "",
        "unset",
        "`scripts/docker-up.sh`: extra arguments for the `dockerd` it starts",
        PROCESSES,
    ),
    # --- uploads and grading --------------------------------------------------------------
    Variable(
        "MLEBOARD_UPLOAD_MAX_BYTES",
        p.parse_size,
        50 * 1024**3,
        "`50g`",
        "largest archive accepted (sizes: `512m`, `1g`, `1GiB` or bytes; binary units); "
        "resumable uploads declare their size first and get 413 before any byte",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_MEDIA_MIN_FREE_BYTES",
        p.parse_size_or_zero,
        1024**3,
        "`1g`",
        "free space kept on the media folder's filesystem: below it (or when an upload "
        "would take it below), uploads get 507 before any byte is read; `0`: no margin "
        "(a full disk still gets 507, and the partial file is removed). The status page "
        "(`/status/`) shows the free space",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_UPLOAD_MAX_MEMBERS",
        p.parse_positive_int,
        20_000,
        "20000",
        "most files in an archive",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_UPLOAD_MAX_TOTAL_BYTES",
        p.parse_size,
        2 * 1024**3,
        "2g",
        "most bytes an archive may unpack to",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_UPLOAD_MAX_FILE_BYTES",
        p.parse_size,
        512 * 1024**2,
        "512m",
        "largest single file (a CSV) in an archive",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_UPLOAD_MAX_RATIO",
        p.parse_positive_float,
        200.0,
        "200",
        "compression ratio above which an archive is refused as a bomb",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_UPLOAD_PARTIAL_TTL_S",
        p.parse_positive_whole_seconds,
        24 * 3600,
        "`24h`",
        "a resumable upload that receives no bytes for this long expires; the sweeper removes "
        "what arrived",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_UPLOADS_PER_DAY",
        p.parse_positive_int,
        50,
        "50",
        "archives one user may complete in a rolling day (a resent duplicate does not count); "
        "past it: 429 with when to retry",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_UPLOAD_BYTES_PER_DAY",
        p.parse_size,
        200 * 1024**3,
        "`200g`",
        "bytes one user may upload in a rolling day (uploads still arriving count with their "
        "declared size)",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_GRADING_SOFT_TIME_LIMIT",
        p.parse_positive_whole_seconds,
        600,
        "600 (10m)",
        "seconds one grading task may take (hard limit +60 s); past it the run fails with "
        "that reason (durations: `90`, `90s`, `15m`, `24h`)",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_UPLOAD_SOFT_TIME_LIMIT",
        p.parse_positive_whole_seconds,
        1800,
        "1800 (30m)",
        "seconds reading one archive may take; past it the upload fails with that reason",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_MAX_SUBMISSION_BYTES",
        p.parse_size,
        1024**3,
        "1g",
        "a submission larger than this (apparent size, links not followed) is refused by "
        "grading with that reason, never read; agent runs keep at most this much of it",
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_GRADING_MEMORY_BYTES",
        p.parse_size_or_zero,
        8 * 1024**3,
        "8g",
        "data memory each worker process may use (0: no cap); a grading past it fails with "
        '"ran out of memory"',
        UPLOADS,
    ),
    Variable(
        "MLEBOARD_GRADING_FAULT_DELAY",
        p.parse_duration,
        0.0,
        "0",
        "fault injection for `perf/drill/`: each grading waits this long first",
        UPLOADS,
        internal=True,
    ),
    # --- the sweeper ----------------------------------------------------------------------
    Variable(
        "MLEBOARD_STALE_AFTER_S",
        p.parse_positive_whole_seconds,
        120,
        "120 (2m)",
        "work whose worker has not said it is alive (a heartbeat every quarter of this) for "
        "this long, or that was sent and never picked up, is sent again by the sweeper; an "
        "agent run is ended instead",
        SWEEPER,
    ),
    Variable(
        "MLEBOARD_REAPER_INTERVAL_S",
        p.parse_positive_whole_seconds,
        60,
        "60 (1m)",
        "how often the sweeper runs (Celery beat)",
        SWEEPER,
    ),
    Variable(
        "MLEBOARD_MAX_ATTEMPTS",
        p.parse_positive_int,
        3,
        "3",
        "workers that may start on one upload or one grading before it fails with the reason "
        "(transient errors retried with backoff count too)",
        SWEEPER,
    ),
    # --- agent runs -----------------------------------------------------------------------
    Variable(
        "MLEBOARD_RUN_BACKEND",
        p.one_of(("docker", "local")),
        "docker",
        "`docker` (`make run`: `local`)",
        "how agent runs are isolated, the operator's choice (a launch cannot pick another): "
        "`docker` (a container per run) or `local` (a subprocess of the worker's host, "
        "confined as well as the host allows (*The local backend* below): **not a "
        "container**); also `mleboard run`'s default `--backend`",
        RUNS,
    ),
    Variable(
        "MLEBOARD_ALLOW_UNISOLATED_RUNS",
        p.parse_bool,
        False,
        "off (`make run`: on when local)",
        "the site refuses to run launches on `local` unless this is on; the runs pages then "
        "say runs are not in containers, and what a local agent can read",
        RUNS,
    ),
    Variable(
        "MLEBOARD_RUN_OUTPUT_MAX_BYTES",
        p.parse_size,
        2 * 1024**3,
        "2g",
        "an agent run's submission, code and logs together (and its snapshots); past it the "
        "run fails with what was dropped",
        RUNS,
    ),
    Variable(
        "MLEBOARD_RUN_SCRATCH_BYTES",
        p.parse_size,
        4 * 1024**3,
        "4g",
        "the run's `/tmp` (and `$HOME`)",
        RUNS,
    ),
    Variable(
        "MLEBOARD_INSTANCE",
        p.parse_name,
        "mleboard",
        "`mleboard`",
        "this installation's name on the Docker engine: its run containers carry it (label "
        "`org.mleboard.instance`), and its reaper and sweeper touch only containers that do, "
        "so several sites (or a site and its tests) can share one engine",
        RUNS,
    ),
    Variable(
        "MLEBOARD_RUN_KILL_GRACE_S",
        p.parse_duration,
        30.0,
        "30s",
        "between a run's deadline and its container's watchdog ending everything",
        RUNS,
    ),
    Variable(
        "MLEBOARD_AGENT_DIRS",
        p.parse_path_list,
        [],
        "unset",
        "extra folders of agent folders the site may run, `:`-separated",
        RUNS,
    ),
    Variable(
        "MLEBOARD_AGENT_IMAGE_MAX_BYTES",
        p.parse_size,
        8 * 1024**3,
        "8g",
        "a submitted agent whose built image is larger than this is refused and its image removed",
        RUNS,
    ),
    Variable(
        "MLEBOARD_AGENT_ARCHIVE_MAX_BYTES",
        p.parse_size,
        50 * 1024**2,
        "50m",
        "a submitted agent's archive larger than this (sent or unpacked) is refused",
        RUNS,
    ),
    Variable(
        "MLEBOARD_AGENT_REVIEW_DAYS",
        p.parse_positive_int,
        30,
        "30",
        "a submitted agent nobody approved or refused within this many days fails, saying so",
        RUNS,
    ),
    Variable(
        "MLEBOARD_AGENT_BUILD_DEADLINE_S",
        p.parse_positive_whole_seconds,
        6 * 3600,
        "21600 (6h)",
        "an approved agent not built this long after its approval fails, saying so",
        RUNS,
    ),
    Variable(
        "MLEBOARD_WHEELHOUSE",
        p.parse_path,
        Computed(_wheelhouse),
        "`~/.cache/mleboard/wheelhouse`",
        "where `mleboard images` keeps downloaded wheels",
        RUNS,
    ),
    Variable(
        "MLEBOARD_DEBIAN_MIRROR",
        p.url_with_scheme("http", "https"),
        "http://deb.debian.org/debian",
        "Debian's",
        "the Debian mirror `mleboard images` builds the base image from (debootstrap)",
        RUNS,
    ),
    # --- run hosts ------------------------------------------------------------------------
    Variable(
        "MLEBOARD_RUN_SLOTS",
        p.parse_positive_int,
        2,
        "2",
        "agent runs a run host runs at once: the concurrency of its runs worker",
        HOSTS,
    ),
    Variable(
        "MLEBOARD_RUN_QUEUES",
        p.list_of(p.one_of(RUN_QUEUE_NAMES)),
        None,
        "`runs.cpu`, plus `runs.gpu` when the host has GPUs",
        "the run classes this host's runs worker takes, `,`-separated (`runs.cpu`, `runs.gpu`)",
        HOSTS,
    ),
    Variable(
        "MLEBOARD_HOST_NAME",
        p.parse_str,
        "",
        "the machine's host name",
        "the name a run host registers under (unique on the site)",
        HOSTS,
    ),
    Variable(
        "MLEBOARD_HOST_CPUS",
        p.parse_positive_float,
        Computed(lambda read: float(os.cpu_count() or 1)),
        "this machine's CPUs",
        "CPUs a run host may hand out to agent runs",
        HOSTS,
    ),
    Variable(
        "MLEBOARD_HOST_MEMORY",
        p.parse_size,
        Computed(_memory_bytes),
        "this machine's RAM",
        "memory a run host may hand out to agent runs (`64g`, or bytes)",
        HOSTS,
    ),
    Variable(
        "MLEBOARD_HOST_GPUS",
        p.list_of(),
        None,
        "the GPUs `nvidia-smi` lists (none without it)",
        "GPU ids a run host may hand out (`0,1`; set and empty: none); claimed in the "
        "database, so a run never gets a GPU another run holds",
        HOSTS,
        empty_is_unset=False,
    ),
    Variable(
        "MLEBOARD_HOST_GPU_MODEL",
        p.parse_str,
        "",
        "what `nvidia-smi` says",
        "the GPU model a run host shows",
        HOSTS,
    ),
    Variable(
        "MLEBOARD_RUN_RETRY_S",
        p.parse_positive_whole_seconds,
        5,
        "5",
        "how often a run delivered to a host whose resources are busy checks again",
        HOSTS,
    ),
    Variable(
        "MLEBOARD_HOST_BOOT",
        p.parse_str,
        "",
        "set by the runs worker",
        "this boot of a run host's worker (its claims are handed over on the next boot)",
        HOSTS,
        internal=True,
    ),
    # --- the validation service -----------------------------------------------------------
    Variable(
        "MLEBOARD_VALIDATION_MAX_CONNECTIONS",
        p.parse_positive_int,
        16,
        "16",
        "connections the validation service holds open at once per run",
        VALIDATION,
    ),
    Variable(
        "MLEBOARD_VALIDATION_THREADS",
        p.parse_positive_int,
        4,
        "4",
        "threads serving them",
        VALIDATION,
    ),
    Variable(
        "MLEBOARD_VALIDATION_IDLE_TIMEOUT_S",
        p.parse_positive_float,
        10.0,
        "10",
        "seconds a silent connection is kept",
        VALIDATION,
    ),
    Variable(
        "MLEBOARD_VALIDATION_MAX_REQUEST_BYTES",
        p.parse_size,
        512 * 1024**2,
        "512m",
        "largest submission it reads (streamed to disk)",
        VALIDATION,
    ),
    Variable(
        "MLEBOARD_VALIDATION_CONCURRENCY",
        p.parse_positive_int,
        2,
        "2",
        "validations run at once",
        VALIDATION,
    ),
    Variable(
        "MLEBOARD_VALIDATION_QUEUE_WAIT_S",
        p.parse_positive_float,
        30.0,
        "30",
        "seconds a request waits for a free validation before it is refused",
        VALIDATION,
    ),
    Variable(
        "MLEBOARD_VALIDATION_RATE_PER_MINUTE",
        p.parse_positive_int,
        30,
        "30",
        "validations per minute per run",
        VALIDATION,
    ),
    # --- agents that need a model ---------------------------------------------------------
    Variable(
        "MLEBOARD_LLM_BASE_URL",
        p.url_with_scheme("http", "https"),
        "",
        "unset",
        "the model endpoint of agents with `llm: true`, e.g. `http://127.0.0.1:8000/v1` (vLLM, "
        "LiteLLM, any OpenAI-compatible server)",
        LLM,
    ),
    Variable(
        "MLEBOARD_LLM_API_KEY",
        p.parse_str,
        "",
        "unset",
        "its key; the agent sees it as `OPENAI_API_KEY`, and it is masked (`********`) in "
        "`run.log` and the harness's messages",
        LLM,
    ),
    Variable(
        "MLEBOARD_LLM_MODEL",
        p.parse_str,
        "",
        "the scaffold's own",
        "the model name the endpoint serves, used by the scaffold in place of its default",
        LLM,
    ),
    Variable(
        "MLEBOARD_LLM_PRICES",
        p.parse_prices,
        {},
        "unset (no cost estimates)",
        "the operator's prices per million tokens per model, `MODEL=PROMPT/COMPLETION` in "
        "dollars, `,`-separated, e.g. `gpt-4o=2.5/10,o1-preview=15/60`; pages then show a cost "
        "estimate beside token counts, labelled as one",
        LLM,
    ),
    # --- integrity ------------------------------------------------------------------------
    Variable(
        "MLEBOARD_SIMILARITY_THRESHOLD",
        p.parse_fraction,
        0.6,
        "0.6",
        "a run whose code is this similar (Dolos' measure, 0-1) to a reference or to another "
        "owner's run is flagged for review (MLE-bench's 60%)",
        INTEGRITY,
    ),
    Variable(
        "MLEBOARD_PEER_MAX_FINGERPRINT_PERCENTAGE",
        p.parse_share,
        0.5,
        "0.5",
        "a run's peer comparison (with other owners' runs on the competition) sets aside code "
        "found in the runs of more than this share of the owners with runs there (Dolos' "
        "`maxFingerprintPercentage`; a fraction above 0, at most 1; 1 sets nothing aside), so "
        "a scaffold's boilerplate does not flag honest runs; applied once there are enough "
        "owners to keep what two of them share (4 at 0.5)",
        INTEGRITY,
    ),
    Variable(
        "MLEBOARD_INTEGRITY_LLM_BASE_URL",
        p.url_with_scheme("http", "https"),
        "",
        "unset (no LLM judge)",
        "the LLM judge's OpenAI-compatible endpoint, e.g. `https://api.openai.com/v1`",
        INTEGRITY,
    ),
    Variable(
        "MLEBOARD_INTEGRITY_LLM_MODEL",
        p.parse_str,
        "",
        "unset",
        "the judge's model; the judge is off unless this and the URL are set",
        INTEGRITY,
    ),
    Variable(
        "MLEBOARD_INTEGRITY_LLM_API_KEY",
        p.parse_str,
        "",
        "unset",
        "the judge's key (never stored)",
        INTEGRITY,
    ),
    # --- contamination: familiarity -------------------------------------------------------
    Variable(
        "MLEBOARD_FAMILIARITY_BASE_URL",
        p.url_with_scheme("http", "https"),
        "",
        "unset (familiarity off)",
        "a base model's OpenAI-compatible completions endpoint that returns prompt "
        "log-probabilities, e.g. `http://127.0.0.1:8000/v1` (vLLM)",
        CONTAMINATION,
    ),
    Variable(
        "MLEBOARD_FAMILIARITY_MODEL",
        p.parse_str,
        "",
        "unset",
        "the model that endpoint serves; stored with each familiarity value",
        CONTAMINATION,
    ),
    Variable(
        "MLEBOARD_FAMILIARITY_API_KEY",
        p.parse_str,
        "",
        "unset",
        "its key, sent as `Authorization: Bearer`; never stored or shown",
        CONTAMINATION,
    ),
    Variable(
        "MLEBOARD_FAMILIARITY_MAX_TOKENS",
        p.parse_positive_int,
        2048,
        "2048",
        "the most tokens one request carries (keep it within the model's context); longer "
        "texts are sent in chunks",
        CONTAMINATION,
    ),
    Variable(
        "MLEBOARD_FAMILIARITY_TIMEOUT_S",
        p.parse_positive_whole_seconds,
        60,
        "`60s`",
        "how long one request may take in all, its answer included; a request past it is "
        "tried twice more, then the competition fails with that reason",
        CONTAMINATION,
    ),
    # --- the command line -----------------------------------------------------------------
    Variable(
        "MLEBOARD_TOKEN",
        p.parse_str,
        "",
        "unset: the file `mleboard login` wrote",
        "the API token `mleboard submit` sends when `--token` is not given",
        CLI,
    ),
    # --- tests ----------------------------------------------------------------------------
    Variable(
        "MLEBOARD_REQUIRE_SERVICES",
        p.parse_bool,
        False,
        "off",
        "`1` in CI: tests fail if PostgreSQL, Redis, Docker or Chromium is missing",
        TESTS,
    ),
    Variable(
        "CELERY_TASK_ALWAYS_EAGER",
        p.parse_bool,
        False,
        "off",
        "run tasks in the calling process (debugging only)",
        TESTS,
        internal=True,
    ),
    *(
        Variable(name, p.parse_str, "", "", meaning, TESTS, internal=True)
        for name, meaning in (
            ("SOAK_TRANSPORT", "perf/broker_soak.py: the transport its workers use"),
            ("SOAK_DIR", "perf/broker_soak.py: its folder"),
        )
    ),
    Variable(
        "BIN",
        p.parse_path,
        Path(".venv/bin"),
        "`.venv/bin`",
        "where `scripts/serve.sh` finds the virtualenv's programs (the Makefile sets it)",
        PROCESSES,
        internal=True,
    ),
    Variable(
        "DJANGO_SETTINGS_MODULE",
        p.parse_str,
        "webapp.project.settings",
        "`webapp.project.settings`",
        "Django's own",
        SYSTEM,
        internal=True,
    ),
    # --- inside an agent's run: the harness's contract with agents (runner/backend.py) ------
    *(
        Variable(name, p.parse_str, "", "", meaning, AGENT, internal=True)
        for name, meaning in (
            ("COMPETITION_ID", "the competition"),
            ("SEED", "the run's seed"),
            ("DATA_DIR", "the competition's public data (read-only)"),
            ("SUBMISSION_DIR", "where the agent writes submission.csv"),
            ("LOGS_DIR", "the agent's logs"),
            ("CODE_DIR", "the agent's code"),
            ("AGENT_DIR", "the agent's own folder"),
            ("INSTRUCTIONS_FILE", "MLE-bench's instructions"),
            ("VALIDATE_SCRIPT", "the validation service's client script"),
            ("VALIDATION_SOCKET", "the validation service's socket"),
            ("TIME_LIMIT_SECS", "the run's time limit"),
            ("OPENAI_BASE_URL", "the model endpoint as the agent reaches it"),
            ("OPENAI_API_KEY", "the model endpoint's key"),
            ("MLEBOARD_LLM_FORWARDER", "the command of the forwarder to the model bridge"),
            ("AIDE_STEPS", "agent.yaml of aide"),
            ("AIDE_CODE_MODEL", "agent.yaml of aide"),
            ("AIDE_FEEDBACK_MODEL", "agent.yaml of aide"),
            ("AIDE_EXEC_TIMEOUT", "aide's time limit per script"),
            ("AIDE_MARGIN_SECS", "aide's margin before the deadline"),
            ("OPENHANDS_MODEL", "agent.yaml of openhands"),
            ("OPENHANDS_MAX_ITERATIONS", "agent.yaml of openhands"),
            ("OPENHANDS_WORK_DIR", "openhands' working folder"),
            ("OPENHANDS_COMMAND_TIMEOUT", "openhands' time limit per command"),
            ("BASELINE_CV_FOLDS", "agent.yaml of baseline"),
            ("BASELINE_MAX_CV_ROWS", "agent.yaml of baseline"),
        )
    ),
    # --- the operating system's -----------------------------------------------------------
    *(
        Variable(name, p.parse_str, "", "", "the operating system's", SYSTEM, internal=True)
        for name in (
            "HOME",
            "PATH",
            "LANG",
            "TMPDIR",
            "XDG_CACHE_HOME",
            "XDG_CONFIG_HOME",
            "INPUTRC",
            "NVIDIA_VISIBLE_DEVICES",
        )
    ),
)

BY_NAME: dict[str, Variable] = {v.name: v for v in VARIABLES}
assert len(BY_NAME) == len(VARIABLES), "a variable is declared twice"


def declared(name: str) -> Variable:
    """The declaration of ``name``; ``ConfigurationError`` if there is none."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ConfigurationError(
            f"{name} is not a declared configuration variable: declare it in "
            "config/variables.py (and run `mleboard config --write docs/configuration.md`)"
        ) from None


def env(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """The value of the variable ``name``: parsed from ``environ`` (default: the process's
    environment) when set, else its declared default.

    Raises ``ConfigurationError`` naming the variable and what was expected when the value
    is refused, or when ``name`` is not declared.
    """
    environ = os.environ if environ is None else environ
    variable = declared(name)
    raw = environ.get(name)
    if raw is None or (variable.empty_is_unset and not raw.strip()):
        default = variable.default
        if isinstance(default, Computed):
            return default.compute(lambda other: env(other, environ))
        return list(default) if isinstance(default, list) else default
    try:
        return variable.parse(raw.strip())
    except ValueError as exc:
        raise ConfigurationError(f"{name}={raw!r}: {exc}") from None


def is_set(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``name`` is given a value (as ``env`` counts it) rather than its default."""
    environ = os.environ if environ is None else environ
    raw = environ.get(name)
    return raw is not None and (bool(raw.strip()) or not declared(name).empty_is_unset)


def check_environment(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every problem with the variables set in ``environ``: one message per variable whose
    value its parser refuses (empty when all is well)."""
    environ = os.environ if environ is None else environ
    problems = []
    for variable in VARIABLES:
        if variable.name not in environ:
            continue
        try:
            env(variable.name, environ)
        except ConfigurationError as exc:
            problems.append(str(exc))
    return problems
