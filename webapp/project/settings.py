"""mleboard settings: 12-factor, with defaults that work on a fresh machine.

With nothing set: SQLite and an embedded Celery broker (kombu's filesystem transport, so
a real worker process consumes the queue without any server), files under ``var/``.
``DATABASE_URL`` and ``CELERY_BROKER_URL`` switch to PostgreSQL and Redis.
"""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from benchmark.cost import Price
from config import check_environment, endpoints, env

# Every variable is read through its one declaration (config/variables.py, the README's
# table): a value its parser refuses stops start-up here, with every such variable named,
# including those only the runner reads later.
if _problems := check_environment():
    raise ImproperlyConfigured(
        "mleboard's configuration has values it cannot use:\n  " + "\n  ".join(_problems)
    )

BASE_DIR = Path(__file__).resolve().parents[2]
VAR_DIR = env("MLEBOARD_VAR_DIR")

DEBUG = env("DEBUG")
# SECRET_KEY: the environment's, else the one in var/secret_key (`make run` writes a random
# key there once, mode 0600). The built-in development key is refused unless DEBUG is on.
SECRET_KEY_FILE = VAR_DIR / "secret_key"
_DEV_SECRET_KEY = "dev-only-insecure-key-set-SECRET_KEY-in-production"
SECRET_KEY = (
    env("SECRET_KEY")
    or (SECRET_KEY_FILE.read_text(encoding="utf-8").strip() if SECRET_KEY_FILE.is_file() else "")
    or _DEV_SECRET_KEY
)
if SECRET_KEY == _DEV_SECRET_KEY and not DEBUG:
    raise ImproperlyConfigured(
        "SECRET_KEY is not set, and DEBUG is off: mleboard will not start with its built-in "
        "development key. Set the SECRET_KEY environment variable to a long random string "
        "(python3 -c 'import secrets; print(secrets.token_urlsafe(50))'), or write one to "
        f"{SECRET_KEY_FILE} (`make run` does), or set DEBUG=1 for local development only."
    )
ALLOWED_HOSTS = env("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = env("CSRF_TRUSTED_ORIGINS")

# HTTPS: all off by default, so plain http on localhost works; turn them on behind TLS.
if env("MLEBOARD_BEHIND_TLS_PROXY"):
    # The proxy terminates TLS and sets X-Forwarded-Proto (overwriting any a client sent).
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env("SECURE_SSL_REDIRECT")
SESSION_COOKIE_SECURE = env("SESSION_COOKIE_SECURE")
# Sessions are read from the cache (written through to the database): a signed-in page
# served by webapp.edge.viewer_pages costs no session query.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
CSRF_COOKIE_SECURE = env("CSRF_COOKIE_SECURE")
SECURE_HSTS_SECONDS = env("SECURE_HSTS_SECONDS")
SECURE_HSTS_INCLUDE_SUBDOMAINS = env("SECURE_HSTS_INCLUDE_SUBDOMAINS")
SECURE_HSTS_PRELOAD = env("SECURE_HSTS_PRELOAD")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    # Kept for the tokens made before API tokens were hashed: each is moved into
    # accounts.ApiToken (hashed) by a migration, or at its first use.
    "rest_framework.authtoken",
    "knox",
    "allauth",
    "allauth.account",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "webapp.competitions",
    "webapp.results",
    "webapp.runs",
    "webapp.liveness",
    "webapp.integrity",
    "webapp.accounts",
    "webapp.corrections",
    "webapp.agentsubs",
    # Above the apps: serving, operations and the pages that combine apps.
    "webapp.edge",
    "webapp.ops",
    "webapp.pages",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # A NUL in the address is a 400 before anything reads it (PostgreSQL refuses NUL).
    "webapp.core.bad_input.RejectNulMiddleware",
    # A chunked body is a 400 asking for a Content-Length: Django would read it as empty.
    "webapp.core.bad_input.RejectChunkedBodyMiddleware",
    # A query parameter no page takes (?split=nope) raised by a view: a 400 that says why.
    "webapp.core.bad_input.BadQueryMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Anonymous views of the public pages served whole from the cache (webapp/edge/page_cache/).
    "webapp.edge.page_cache.PageCacheMiddleware",
    # The database away: 503 with Retry-After (webapp/edge/outage.py; handler500 too).
    "webapp.edge.outage.DatabaseOutageMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Uploads on a full disk: 507 before any view or the CSRF check (process_view, after
    # every middleware's __call__) reads the body (webapp/edge/media_space.py).
    "webapp.edge.media_space.MediaSpaceMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # The same public pages for signed-in people: the page cache's copy for their class
    # of viewers around their own navigation (webapp/edge/viewer_pages.py).
    "webapp.edge.viewer_pages.ViewerPageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "webapp.edge.timing.ServerTimingMiddleware",
    # Last, as django-axes asks: turns a locked-out login into its 429 response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "webapp.project.urls"
WSGI_APPLICATION = "webapp.project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "builtins": ["webapp.core.wording_tags"],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "webapp.runs.context_processors.isolation",
                "webapp.accounts.context_processors.signup",
                "webapp.core.visibility.template_context",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env("DATABASE_URL"),
        conn_max_age=env("DATABASE_CONN_MAX_AGE"),
        # A kept connection is checked before a request uses it: a restarted database
        # costs one reconnect, not an error.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A web process and a worker write the same file: wait for the lock instead of failing.
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    # Tests share their database with a real worker process, so it must be a file.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

# Login lockout (django-axes) on every login form, the site's and the admin's: after
# MLEBOARD_LOGIN_FAILURE_LIMIT failures for one username from one address, that pair is
# refused (429) for the cool-off. The admin lists and resets lockouts (or `axes_reset`).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AXES_ENABLED = env("MLEBOARD_LOGIN_LOCKOUT")
AXES_FAILURE_LIMIT = env("MLEBOARD_LOGIN_FAILURE_LIMIT")
# 0: locked until an admin lifts it.
AXES_COOLOFF_TIME = timedelta(minutes=env("MLEBOARD_LOGIN_COOLOFF_MINUTES")) or None
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# Every spelling of a name counts as one (sign-in ignores case).
AXES_USERNAME_CALLABLE = "webapp.accounts.lockout.lockout_username"
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False  # no "AXES: BEGIN …" line from every process that starts

# The cache counts requests for the upload and re-grade throttles, so it must be shared by
# all web processes: a folder under var/ (one host), or Redis with CACHE_URL.
# (CACHE_URL's parser accepts only redis:// and rediss:// URLs.)
_cache_url = env("CACHE_URL")
if _cache_url:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _cache_url,
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }
# Whole public pages for anonymous visitors (webapp/edge/page_cache/): in a Redis of their own
# (MLEBOARD_CACHE_URL), bounded and evicting least recently used pages, shared by every web
# process and host; otherwise each process keeps at most page_cache.store.RECENT_MAX_BYTES.
# Never the broker's or the throttles' Redis: allkeys-lru there would evict their keys.
MLEBOARD_PAGE_CACHE = env("MLEBOARD_PAGE_CACHE")
MLEBOARD_CACHE_MAX_BYTES = env("MLEBOARD_CACHE_MAX_BYTES")
_pages_url = env("MLEBOARD_CACHE_URL")


if _pages_url:
    _shared_with = [
        name
        for name, url in (
            ("CELERY_BROKER_URL", env("CELERY_BROKER_URL")),
            ("CACHE_URL", _cache_url),
        )
        if url and endpoints.same_server(url, _pages_url)
    ]
    if _shared_with:
        raise ImproperlyConfigured(
            f"MLEBOARD_CACHE_URL is the same Redis as {' and '.join(_shared_with)}: the page "
            "cache evicts least recently used keys from its whole instance, so give it a "
            "Redis of its own (another port or host)"
        )
    CACHES["pages"] = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": _pages_url,
        "KEY_PREFIX": "pages",
        "TIMEOUT": 24 * 3600,
    }

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
# The documentation site as `make docs` builds it (mkdocs.yml), served at /docs/.
DOCS_ROOT = VAR_DIR / "docs"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Plotly's JS is its partial bundle with the trace types the figures use, at the version
# web/package-lock.json pins (`npm ci --prefix web`, run by `make setup`): served from our
# own static files, no CDN, no copy in our tree.
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/plotly", BASE_DIR / "web" / "node_modules" / "plotly.js-basic-dist-min"),
]
# collectstatic names each file by its content's hash (css/site.3f2a….css, listed in
# STATIC_ROOT/staticfiles.json, which {% static %} reads) and compresses those copies
# (webapp/project/static_storage.py); whitenoise serves the hashed names with a year's `immutable`
# cache, since a changed file gets a new name. Pages need that manifest: `make setup` runs
# collectstatic, as does the Dockerfile.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "webapp.project.static_storage.StaticFilesStorage"},
}
MEDIA_ROOT = env("MLEBOARD_MEDIA_ROOT")
MEDIA_URL = "media/"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# --- Accounts (django-allauth) ------------------------------------------------------------
# Who may make an account: `closed` (only an operator, with createsuperuser or the admin),
# `invite` (a link staff send from the admin's Invites) or `open` (anyone; `make run`).
MLEBOARD_SIGNUP = env("MLEBOARD_SIGNUP")
ACCOUNT_ADAPTER = "webapp.accounts.signup.AccountAdapter"
# Sign-in stays the site's own form (username and password, django-axes' lockout); allauth
# serves sign-up, email verification, password reset and email management.
ACCOUNT_LOGIN_METHODS = {"username"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "username*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_CONFIRM_EMAIL_ON_GET = False  # a button, so that a mail scanner's GET confirms nothing
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[mleboard] "
ACCOUNT_DEFAULT_HTTP_PROTOCOL = "https" if env("MLEBOARD_BEHIND_TLS_PROXY") else "http"
# How many days an invite link stays good.
MLEBOARD_INVITE_DAYS = env("MLEBOARD_INVITE_DAYS")

# Mail (verification, password reset, invites): printed to the web process's output unless
# configured. `smtp` uses EMAIL_HOST/EMAIL_PORT/EMAIL_HOST_USER/EMAIL_HOST_PASSWORD/
# EMAIL_USE_TLS; `file` writes each message under var/mail/.
_EMAIL_BACKENDS = {
    "console": "django.core.mail.backends.console.EmailBackend",
    "smtp": "django.core.mail.backends.smtp.EmailBackend",
    "file": "django.core.mail.backends.filebased.EmailBackend",
}
EMAIL_BACKEND = _EMAIL_BACKENDS[env("MLEBOARD_EMAIL_BACKEND")]
EMAIL_FILE_PATH = str(VAR_DIR / "mail")
EMAIL_HOST = env("EMAIL_HOST")
EMAIL_PORT = env("EMAIL_PORT")
EMAIL_HOST_USER = env("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env("EMAIL_USE_TLS")
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL")

# API tokens (django-rest-knox, webapp.accounts.tokens): several named tokens per user, shown
# once and stored as a SHA-512 digest; they do not expire (a user revokes them).
KNOX_TOKEN_MODEL = "accounts.ApiToken"
# knox's own migrations would make its unused AuthToken table (swapped for ours), whose key
# to auth_user then blocks emptying the user table: knox is left unmigrated.
MIGRATION_MODULES = {"knox": None}
REST_KNOX = {"TOKEN_TTL": None, "TOKEN_PREFIX": "mlb_", "AUTH_HEADER_PREFIX": "Token"}

# Where prepared MLE-bench data lives (<data>/<competition>/prepared/{public,private}).
MLEBOARD_DATA_DIR = env("MLEBOARD_DATA_DIR")

# --- Celery -------------------------------------------------------------------------
_broker_dir = VAR_DIR / "broker"
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Redis re-delivers an unacknowledged task after this long: longer than any task
    # (an agent run may take the paper's 24 hours).
    "visibility_timeout": env("CELERY_VISIBILITY_TIMEOUT"),
}
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's filesystem transport with its races closed (webapp/ops/embedded_broker.py): safe
    # for several workers, beat and remote control at once.
    CELERY_BROKER_TRANSPORT = "webapp.ops.embedded_broker:Transport"
    for sub in ("queue", "processed", "control"):
        (_broker_dir / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS |= {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "data_folder_processed": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        # The folder is polled; the default second between polls caps a worker at about
        # one task a second.
        "polling_interval": 0.05,
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    "webapp.results.tasks.grade_run_task": {"queue": "grading"},
    "webapp.results.tasks.*": {"queue": "grading"},
    "webapp.integrity.tasks.*": {"queue": "grading"},
    "webapp.competitions.tasks.*": {"queue": "grading"},
    # Agent runs by what they need: a run asking for GPUs goes to `runs.gpu` (the task
    # picks it, webapp.runs.tasks), any other to `runs.cpu`. A run host consumes the
    # classes it can serve (`-Q runs.cpu` or `-Q runs.cpu,runs.gpu`).
    "webapp.runs.tasks.*": {"queue": "runs.cpu"},
    # A submitted agent is built where the agents run: on a run host, with its engine.
    "webapp.agentsubs.tasks.*": {"queue": "runs.cpu"},
}
CELERY_TASK_ALWAYS_EAGER = env("CELERY_TASK_ALWAYS_EAGER")
GRADING_SOFT_TIME_LIMIT = env("MLEBOARD_GRADING_SOFT_TIME_LIMIT")
GRADING_TIME_LIMIT = GRADING_SOFT_TIME_LIMIT + 60
UPLOAD_SOFT_TIME_LIMIT = env("MLEBOARD_UPLOAD_SOFT_TIME_LIMIT")
MLEBOARD_GRADING_FAULT_DELAY = env("MLEBOARD_GRADING_FAULT_DELAY")
# The sweeper (webapp.ops.sweeper): work whose claim has not said it is alive for
# MLEBOARD_STALE_AFTER_S seconds, or that was never sent or never picked up, is sent
# again; after MLEBOARD_MAX_ATTEMPTS claims it fails with the reason. It runs every
# MLEBOARD_REAPER_INTERVAL_S seconds.
MLEBOARD_STALE_AFTER_S = env("MLEBOARD_STALE_AFTER_S")
MLEBOARD_REAPER_INTERVAL_S = env("MLEBOARD_REAPER_INTERVAL_S")
MLEBOARD_MAX_ATTEMPTS = env("MLEBOARD_MAX_ATTEMPTS")
CELERY_BEAT_SCHEDULE = {
    "sweep": {
        "task": "webapp.ops.tasks.sweep_task",
        "schedule": float(MLEBOARD_REAPER_INTERVAL_S),
        # A sweep that could not run in its interval is not worth running late.
        "options": {"expires": float(MLEBOARD_REAPER_INTERVAL_S)},
    },
    # On a runs queue: taken by a run host (each run host also reaps its own engine's
    # containers from its heartbeat, webapp.runs.hosts).
    "reap-containers": {
        "task": "webapp.runs.tasks.reap_containers_task",
        "schedule": float(MLEBOARD_REAPER_INTERVAL_S),
        "options": {"queue": "runs.cpu", "expires": float(MLEBOARD_REAPER_INTERVAL_S)},
    },
}

# --- Agent runs -------------------------------------------------------------------------
# How agent runs are isolated is the operator's choice, never a launcher's: `docker` (the
# default) or `local` (a subprocess of the worker's host, confined as well as it allows:
# runner/local_confinement.py; not a container), which the site refuses unless
# MLEBOARD_ALLOW_UNISOLATED_RUNS is on (`make run` turns it on for its demo, and the runs
# pages then say what a local agent can read).
MLEBOARD_RUN_BACKEND = env("MLEBOARD_RUN_BACKEND")  # docker or local
MLEBOARD_ALLOW_UNISOLATED_RUNS = env("MLEBOARD_ALLOW_UNISOLATED_RUNS")
# Grading: a submission larger than this is refused with a message (never read), and a
# grading process may use at most this much memory (0: no cap).
MLEBOARD_MAX_SUBMISSION_BYTES = env("MLEBOARD_MAX_SUBMISSION_BYTES")
MLEBOARD_GRADING_MEMORY_BYTES = env("MLEBOARD_GRADING_MEMORY_BYTES")
# What a run host may hand out to agent runs (unset: what the machine has).
MLEBOARD_HOST_CPUS = env("MLEBOARD_HOST_CPUS")
MLEBOARD_HOST_MEMORY = env("MLEBOARD_HOST_MEMORY")
# A run host's GPU ids; unset (None): the GPUs nvidia-smi lists (none without it).
MLEBOARD_HOST_GPUS = env("MLEBOARD_HOST_GPUS")
MLEBOARD_HOST_GPU_MODEL = env("MLEBOARD_HOST_GPU_MODEL")
# The name a run host registers under (webapp.runs.hosts); unset: the machine's host name.
MLEBOARD_HOST_NAME = env("MLEBOARD_HOST_NAME")
# How many agent runs this host runs at once: the concurrency of its worker on the run
# queues (webapp/ops/processes.py), apart from the grading worker.
MLEBOARD_RUN_SLOTS = env("MLEBOARD_RUN_SLOTS")
# The run queues this host's runs worker consumes (webapp.runs.hosts.run_queues); None:
# runs.cpu, plus runs.gpu when the host has GPUs.
MLEBOARD_RUN_QUEUES = env("MLEBOARD_RUN_QUEUES")
# How often a run delivered to a host whose resources are busy checks again for room.
MLEBOARD_RUN_RETRY_S = env("MLEBOARD_RUN_RETRY_S")
# Folders holding extra agent folders (agent.yaml + Dockerfile) the site may run.
MLEBOARD_AGENT_DIRS = env("MLEBOARD_AGENT_DIRS")
MLEBOARD_AGENT_IMAGE_MAX_BYTES = env("MLEBOARD_AGENT_IMAGE_MAX_BYTES")
MLEBOARD_AGENT_ARCHIVE_MAX_BYTES = env("MLEBOARD_AGENT_ARCHIVE_MAX_BYTES")
MLEBOARD_AGENT_REVIEW_DAYS = env("MLEBOARD_AGENT_REVIEW_DAYS")
MLEBOARD_AGENT_BUILD_DEADLINE_S = env("MLEBOARD_AGENT_BUILD_DEADLINE_S")
# The operator's prices per million tokens per model (prompt/completion), for the cost
# estimates next to token counts: {"model name": benchmark.cost.Price}.
MLEBOARD_LLM_PRICES = {
    model: Price(*values) for model, values in env("MLEBOARD_LLM_PRICES").items()
}

# --- Uploads --------------------------------------------------------------------------
UPLOAD_MAX_BYTES = env("MLEBOARD_UPLOAD_MAX_BYTES")
# Free space kept on the media folder (webapp.edge.media_space): uploads are refused below it.
MLEBOARD_MEDIA_MIN_FREE_BYTES = env("MLEBOARD_MEDIA_MIN_FREE_BYTES")
UPLOAD_MAX_MEMBERS = env("MLEBOARD_UPLOAD_MAX_MEMBERS")
UPLOAD_MAX_TOTAL_BYTES = env("MLEBOARD_UPLOAD_MAX_TOTAL_BYTES")
UPLOAD_MAX_FILE_BYTES = env("MLEBOARD_UPLOAD_MAX_FILE_BYTES")
UPLOAD_MAX_RATIO = env("MLEBOARD_UPLOAD_MAX_RATIO")
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024**2
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024**2
# Where Django spools a request's file while it arrives: a request cut off mid-upload
# leaves its part here, and the sweeper removes it once idle.
FILE_UPLOAD_TEMP_DIR = str(MEDIA_ROOT / "incoming")
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)
# Resumable uploads (tus 1.0, webapp.results.uploads.resumable): a partial upload with no bytes for
# this long expires and its part is removed by the sweeper.
UPLOAD_PARTIAL_TTL_S = env("MLEBOARD_UPLOAD_PARTIAL_TTL_S")
# Per user and rolling day: archives completed, and bytes (completed and still arriving).
UPLOADS_PER_DAY = env("MLEBOARD_UPLOADS_PER_DAY")
UPLOAD_BYTES_PER_DAY = env("MLEBOARD_UPLOAD_BYTES_PER_DAY")

# --- Integrity checks ---------------------------------------------------------------
# A run whose code is this similar (Dolos' measure, 0-1) to a reference or to another
# owner's run is flagged for review (MLE-bench's 60%).
MLEBOARD_SIMILARITY_THRESHOLD = env("MLEBOARD_SIMILARITY_THRESHOLD")
# Peer comparisons set aside code shared by more than this share of the owners with runs
# on the competition (Dolos' maxFingerprintPercentage; 1: nothing set aside), so that a
# scaffold's boilerplate does not flag honest runs. Reference comparisons ignore nothing.
MLEBOARD_PEER_MAX_FINGERPRINT_PERCENTAGE = env("MLEBOARD_PEER_MAX_FINGERPRINT_PERCENTAGE")
# The optional LLM judge of MLE-bench's three rule questions: any OpenAI-compatible
# endpoint. Off unless a base URL and a model are given.
MLEBOARD_INTEGRITY_LLM_BASE_URL = env("MLEBOARD_INTEGRITY_LLM_BASE_URL")
MLEBOARD_INTEGRITY_LLM_API_KEY = env("MLEBOARD_INTEGRITY_LLM_API_KEY")
MLEBOARD_INTEGRITY_LLM_MODEL = env("MLEBOARD_INTEGRITY_LLM_MODEL")

# --- Familiarity (the paper's Figure 5) -----------------------------------------------
# A base model behind an OpenAI-compatible completions endpoint that returns prompt
# log-probabilities (vLLM, OpenAI's legacy completions). Off unless a URL and a model are
# given; the key is never stored.
MLEBOARD_FAMILIARITY_BASE_URL = env("MLEBOARD_FAMILIARITY_BASE_URL")
MLEBOARD_FAMILIARITY_MODEL = env("MLEBOARD_FAMILIARITY_MODEL")
MLEBOARD_FAMILIARITY_API_KEY = env("MLEBOARD_FAMILIARITY_API_KEY")
# The most tokens one request may carry (longer texts are sent in chunks).
MLEBOARD_FAMILIARITY_MAX_TOKENS = env("MLEBOARD_FAMILIARITY_MAX_TOKENS")
# Seconds one request may take in all, its answer included.
MLEBOARD_FAMILIARITY_TIMEOUT_S = env("MLEBOARD_FAMILIARITY_TIMEOUT_S")

# --- REST framework -----------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "webapp.accounts.tokens.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Per user, for the views whose throttle_scope names them (the upload page shares the
    # upload API's); "off" lifts a limit.
    "DEFAULT_THROTTLE_RATES": {
        "uploads": env("MLEBOARD_UPLOAD_RATE"),
        "regrades": env("MLEBOARD_REGRADE_RATE"),
    },
    # JSON nested too deeply for the parser is a 400; non-finite floats render as null.
    "DEFAULT_RENDERER_CLASSES": ["webapp.core.bad_input.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "webapp.core.bad_input.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "mleboard API",
    "DESCRIPTION": "Competitions, leaderboards, experiments and grade reports of mleboard.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Request bodies as their own components, so that a file field is described as the
    # binary file it is (not as a URL, its description in responses).
    "COMPONENT_SPLIT_REQUEST": True,
    # Every operation documents the errors it can answer (webapp/pages/api_docs.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "webapp.pages.api_docs.document_errors",
    ],
    # API clients authenticate with a token; the session is the site's own pages'.
    "AUTHENTICATION_WHITELIST": ["webapp.accounts.tokens.ApiTokenAuthentication"],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL")},
}
