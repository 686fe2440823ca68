"""mleboard settings: 12-factor, with defaults that work on a fresh machine.

With nothing set: SQLite and an embedded Celery broker (kombu's filesystem transport, so
a real worker process consumes the queue without any server), files under ``var/``.
``DATABASE_URL`` and ``CELERY_BROKER_URL`` switch to PostgreSQL and Redis.
"""

import os
from pathlib import Path

import dj_database_url
import plotly

from webapp.env import envbool, envint, envstr

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(envstr("MLEBOARD_VAR_DIR", str(BASE_DIR / "var")))

SECRET_KEY = envstr("SECRET_KEY", "dev-only-insecure-key-set-SECRET_KEY-in-production")
DEBUG = envbool("DEBUG", "false")
ALLOWED_HOSTS = [
    h for h in envstr("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",") if h
]
CSRF_TRUSTED_ORIGINS = [o for o in envstr("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

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
    "webapp.competitions",
    "webapp.results",
    "webapp.runs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "webapp.timing.ServerTimingMiddleware",
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
    "webapp.runs.tasks.execute_agent_run_task": {"queue": "runs"},
}
CELERY_TASK_ALWAYS_EAGER = envbool("CELERY_TASK_ALWAYS_EAGER", "false")
GRADING_SOFT_TIME_LIMIT = envint("MLEBOARD_GRADING_SOFT_TIME_LIMIT", 600)
GRADING_TIME_LIMIT = GRADING_SOFT_TIME_LIMIT + 60
# Runs claimed longer ago than this are failed by the reaper (their worker is gone).
GRADING_STUCK_AFTER = GRADING_TIME_LIMIT + 120
MLEBOARD_GRADING_FAULT_DELAY = float(envstr("MLEBOARD_GRADING_FAULT_DELAY", "0"))
CELERY_BEAT_SCHEDULE = {
    "reap-stuck-runs": {"task": "webapp.results.tasks.reap_stuck_runs_task", "schedule": 60.0},
    "reap-agent-runs": {"task": "webapp.runs.tasks.reap_agent_runs_task", "schedule": 60.0},
}

# --- Agent runs -------------------------------------------------------------------------
# The embedded default runs agents as local processes (NOT a security boundary); set
# docker on hosts with a Docker engine.
MLEBOARD_RUN_BACKEND = envstr("MLEBOARD_RUN_BACKEND", "local")
MLEBOARD_HOST_CPUS = float(envstr("MLEBOARD_HOST_CPUS", str(os.cpu_count() or 1)))
MLEBOARD_HOST_MEMORY = envint(
    "MLEBOARD_HOST_MEMORY", os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
)
MLEBOARD_HOST_GPUS = [g for g in envstr("MLEBOARD_HOST_GPUS", "").split(",") if g]
MLEBOARD_RUN_HEARTBEAT_STALE_S = envint("MLEBOARD_RUN_HEARTBEAT_STALE_S", 300)
MLEBOARD_RUN_RETRY_S = envint("MLEBOARD_RUN_RETRY_S", 30)
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

# --- REST framework -----------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "mleboard API",
    "DESCRIPTION": "Competitions, leaderboards, experiments and grade reports of mleboard.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
}
