"""mleboard settings: 12-factor, with defaults that work on a fresh machine.

With nothing set: SQLite and an embedded Celery broker (kombu's filesystem transport, so
a real worker process consumes the queue without any server), files under ``var/``.
``DATABASE_URL`` and ``CELERY_BROKER_URL`` switch to PostgreSQL and Redis.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
import plotly
from django.core.exceptions import ImproperlyConfigured

from webapp.env import envbool, envfraction, envint, envrate, envstr

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(envstr("MLEBOARD_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = envbool("DEBUG", "false")
# SECRET_KEY: the environment's, else the one in var/secret_key (`make run` writes a random
# key there once, mode 0600). The built-in development key is refused unless DEBUG is on.
SECRET_KEY_FILE = VAR_DIR / "secret_key"
_DEV_SECRET_KEY = "dev-only-insecure-key-set-SECRET_KEY-in-production"
SECRET_KEY = (
    envstr("SECRET_KEY", "")
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
ALLOWED_HOSTS = [
    h for h in envstr("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",") if h
]
CSRF_TRUSTED_ORIGINS = [o for o in envstr("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

# HTTPS: all off by default, so plain http on localhost works; turn them on behind TLS.
if envbool("MLEBOARD_BEHIND_TLS_PROXY", "false"):
    # The proxy terminates TLS and sets X-Forwarded-Proto (overwriting any a client sent).
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", "false")
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", "false")
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", "false")
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", "false")
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", "false")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "webapp.competitions",
    "webapp.results",
    "webapp.runs",
    "webapp.integrity",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # A NUL in the address is a 400 before anything reads it (PostgreSQL refuses NUL).
    "webapp.bad_input.RejectNulMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Anonymous views of the public pages served whole from the cache (webapp/page_cache.py).
    "webapp.page_cache.PageCacheMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "webapp.timing.ServerTimingMiddleware",
    # Last, as django-axes asks: turns a locked-out login into its 429 response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "webapp.urls"
WSGI_APPLICATION = "webapp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "webapp.runs.context_processors.isolation",
                "webapp.visibility.template_context",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        envstr("DATABASE_URL", f"sqlite:///{VAR_DIR / 'mleboard.sqlite3'}"),
        conn_max_age=envint("DATABASE_CONN_MAX_AGE", 0),
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
]
AXES_ENABLED = envbool("MLEBOARD_LOGIN_LOCKOUT", "true")
AXES_FAILURE_LIMIT = envint("MLEBOARD_LOGIN_FAILURE_LIMIT", 5)
# 0: locked until an admin lifts it.
AXES_COOLOFF_TIME = timedelta(minutes=envint("MLEBOARD_LOGIN_COOLOFF_MINUTES", 15)) or None
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

# The cache counts requests for the upload and re-grade throttles, so it must be shared by
# all web processes: a folder under var/ (one host), or Redis with CACHE_URL.
_cache_url = envstr("CACHE_URL", "")
if _cache_url.startswith(("redis://", "rediss://")):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _cache_url,
        }
    }
elif _cache_url:
    raise ImproperlyConfigured(f"CACHE_URL must be a redis:// URL, got {_cache_url!r}")
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }
# Whole public pages for anonymous visitors (webapp/page_cache.py): in Redis with
# MLEBOARD_CACHE_URL (else CACHE_URL's Redis), shared by every web process and host;
# otherwise in each process's memory. MLEBOARD_PAGE_CACHE=0 turns it off.
MLEBOARD_PAGE_CACHE = envbool("MLEBOARD_PAGE_CACHE", "true")
_pages_url = envstr("MLEBOARD_CACHE_URL", "") or _cache_url
if _pages_url.startswith(("redis://", "rediss://")):
    CACHES["pages"] = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": _pages_url,
        "KEY_PREFIX": "pages",
        "TIMEOUT": 24 * 3600,
    }
elif _pages_url:
    raise ImproperlyConfigured(f"MLEBOARD_CACHE_URL must be a redis:// URL, got {_pages_url!r}")
else:
    CACHES["pages"] = {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "mleboard-pages",
        "TIMEOUT": 24 * 3600,
        # At most this many pages (of at most page_cache.MAX_BODY_BYTES) per process.
        "OPTIONS": {"MAX_ENTRIES": 200},
    }

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Plotly's JS is served from the plotly package itself: no CDN, no copy in our tree.
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/plotly", Path(plotly.__file__).parent / "package_data"),
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
MEDIA_ROOT = Path(envstr("MLEBOARD_MEDIA_ROOT", str(VAR_DIR / "media")))
MEDIA_URL = "media/"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# Where prepared MLE-bench data lives (<data>/<competition>/prepared/{public,private}).
MLEBOARD_DATA_DIR = Path(envstr("MLEBOARD_DATA_DIR", str(VAR_DIR / "data")))

# --- Celery -------------------------------------------------------------------------
_broker_dir = VAR_DIR / "broker"
CELERY_BROKER_URL = envstr("CELERY_BROKER_URL", "filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Redis re-delivers an unacknowledged task after this long: longer than any task
    # (an agent run may take the paper's 24 hours).
    "visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", 26 * 3600),
}
if CELERY_BROKER_URL.startswith("filesystem://"):
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
    # Agent runs by what they need: a run asking for GPUs goes to `runs.gpu` (the task
    # picks it, webapp.runs.tasks), any other to `runs.cpu`. A run host consumes the
    # classes it can serve (`-Q runs.cpu` or `-Q runs.cpu,runs.gpu`).
    "webapp.runs.tasks.*": {"queue": "runs.cpu"},
}
MLEBOARD_RUN_QUEUES = {"cpu": "runs.cpu", "gpu": "runs.gpu"}
CELERY_TASK_ALWAYS_EAGER = envbool("CELERY_TASK_ALWAYS_EAGER", "false")
GRADING_SOFT_TIME_LIMIT = envint("MLEBOARD_GRADING_SOFT_TIME_LIMIT", 600)
GRADING_TIME_LIMIT = GRADING_SOFT_TIME_LIMIT + 60
UPLOAD_SOFT_TIME_LIMIT = envint("MLEBOARD_UPLOAD_SOFT_TIME_LIMIT", 1800)
MLEBOARD_GRADING_FAULT_DELAY = float(envstr("MLEBOARD_GRADING_FAULT_DELAY", "0"))
# The sweeper (webapp.sweeper): work whose claim has not said it is alive for
# MLEBOARD_STALE_AFTER_S seconds, or that was never sent or never picked up, is sent
# again; after MLEBOARD_MAX_ATTEMPTS claims it fails with the reason. It runs every
# MLEBOARD_REAPER_INTERVAL_S seconds.
MLEBOARD_STALE_AFTER_S = envint("MLEBOARD_STALE_AFTER_S", 120)
MLEBOARD_REAPER_INTERVAL_S = envint("MLEBOARD_REAPER_INTERVAL_S", 60)
MLEBOARD_MAX_ATTEMPTS = envint("MLEBOARD_MAX_ATTEMPTS", 3)
CELERY_BEAT_SCHEDULE = {
    "sweep": {
        "task": "webapp.results.tasks.sweep_task",
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
# default) or `local` (a subprocess with the worker's rights: NOT a security boundary),
# which the site refuses unless MLEBOARD_ALLOW_UNISOLATED_RUNS is on (`make run` turns it
# on for its demo, and run pages then say runs are not isolated).
MLEBOARD_RUN_BACKEND = envstr("MLEBOARD_RUN_BACKEND", "docker")
if MLEBOARD_RUN_BACKEND not in ("docker", "local"):
    raise ImproperlyConfigured(
        f"MLEBOARD_RUN_BACKEND={MLEBOARD_RUN_BACKEND!r}: choose docker or local"
    )
MLEBOARD_ALLOW_UNISOLATED_RUNS = envbool("MLEBOARD_ALLOW_UNISOLATED_RUNS", "false")
# Grading: a submission larger than this is refused with a message (never read), and a
# grading process may use at most this much memory (0: no cap).
MLEBOARD_MAX_SUBMISSION_BYTES = envint("MLEBOARD_MAX_SUBMISSION_BYTES", 1024**3)
MLEBOARD_GRADING_MEMORY_BYTES = envint("MLEBOARD_GRADING_MEMORY_BYTES", 8 * 1024**3)
# What a run host may hand out to agent runs (empty: what the machine has).
MLEBOARD_HOST_CPUS = float(envstr("MLEBOARD_HOST_CPUS", "") or os.cpu_count() or 1)
MLEBOARD_HOST_MEMORY = envint(
    "MLEBOARD_HOST_MEMORY", os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
)
# A run host's GPU ids; unset: the GPUs nvidia-smi lists (none without it).
MLEBOARD_HOST_GPUS = (
    [g.strip() for g in os.environ["MLEBOARD_HOST_GPUS"].split(",") if g.strip()]
    if "MLEBOARD_HOST_GPUS" in os.environ
    else None
)
MLEBOARD_HOST_GPU_MODEL = envstr("MLEBOARD_HOST_GPU_MODEL", "")
# The name a run host registers under (webapp.runs.hosts); unset: the machine's host name.
MLEBOARD_HOST_NAME = envstr("MLEBOARD_HOST_NAME", "")
# How many agent runs this host runs at once: the concurrency of its worker on the run
# queues (scripts/serve.sh, compose.yaml), apart from the grading worker.
MLEBOARD_RUN_SLOTS = envint("MLEBOARD_RUN_SLOTS", 2)
# How often a run delivered to a host whose resources are busy checks again for room.
MLEBOARD_RUN_RETRY_S = envint("MLEBOARD_RUN_RETRY_S", 5)
# Folders holding extra agent folders (agent.yaml + Dockerfile) the site may run.
MLEBOARD_AGENT_DIRS = [Path(p) for p in envstr("MLEBOARD_AGENT_DIRS", "").split(os.pathsep) if p]

# --- Uploads --------------------------------------------------------------------------
UPLOAD_MAX_BYTES = envint("MLEBOARD_UPLOAD_MAX_BYTES", 1024**3)
UPLOAD_MAX_MEMBERS = envint("MLEBOARD_UPLOAD_MAX_MEMBERS", 20_000)
UPLOAD_MAX_TOTAL_BYTES = envint("MLEBOARD_UPLOAD_MAX_TOTAL_BYTES", 2 * 1024**3)
UPLOAD_MAX_FILE_BYTES = envint("MLEBOARD_UPLOAD_MAX_FILE_BYTES", 512 * 1024**2)
UPLOAD_MAX_RATIO = float(envstr("MLEBOARD_UPLOAD_MAX_RATIO", "200"))
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024**2
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024**2
# Where Django spools a request's file while it arrives: a request cut off mid-upload
# leaves its part here, and the sweeper removes it once idle.
FILE_UPLOAD_TEMP_DIR = str(MEDIA_ROOT / "incoming")
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)

# --- Integrity checks ---------------------------------------------------------------
# A run whose code is this similar (Dolos' measure, 0-1) to a reference or to another
# owner's run is flagged for review (MLE-bench's 60%).
MLEBOARD_SIMILARITY_THRESHOLD = float(envstr("MLEBOARD_SIMILARITY_THRESHOLD", "0.6"))
# Peer comparisons set aside code shared by more than this share of the owners with runs
# on the competition (Dolos' maxFingerprintPercentage; 1: nothing set aside), so that a
# scaffold's boilerplate does not flag honest runs. Reference comparisons ignore nothing.
MLEBOARD_PEER_MAX_FINGERPRINT_PERCENTAGE = envfraction(
    "MLEBOARD_PEER_MAX_FINGERPRINT_PERCENTAGE", "0.5"
)
# The optional LLM judge of MLE-bench's three rule questions: any OpenAI-compatible
# endpoint. Off unless a base URL and a model are given.
MLEBOARD_INTEGRITY_LLM_BASE_URL = envstr("MLEBOARD_INTEGRITY_LLM_BASE_URL", "")
MLEBOARD_INTEGRITY_LLM_API_KEY = envstr("MLEBOARD_INTEGRITY_LLM_API_KEY", "")
MLEBOARD_INTEGRITY_LLM_MODEL = envstr("MLEBOARD_INTEGRITY_LLM_MODEL", "")

# --- REST framework -----------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Per user, for the views whose throttle_scope names them (the upload page shares the
    # upload API's); "off" lifts a limit.
    "DEFAULT_THROTTLE_RATES": {
        "uploads": envrate("MLEBOARD_UPLOAD_RATE", "30/hour"),
        "regrades": envrate("MLEBOARD_REGRADE_RATE", "10/hour"),
    },
    # JSON nested too deeply for the parser is a 400; non-finite floats render as null.
    "DEFAULT_RENDERER_CLASSES": ["webapp.bad_input.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "webapp.bad_input.JSONParser",
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
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
}
