"""Deployment safety: the built-in SECRET_KEY refused off DEBUG (and `make run`'s kept key),
the HTTPS switches, login lockout, per-user throttles on uploads and re-grades, and the
separate grading and agent-run workers of `make run` and compose.yaml."""

import json
import os
import re
import shlex
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.test import Client, override_settings
from rest_framework.throttling import ScopedRateThrottle

from config.variables import RUN_QUEUE_NAMES
from tests.support.deployment import bare_env, manage_check

REPO_ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


def settings_in_subprocess(names: list[str], env: dict[str, str]) -> dict:
    code = (
        "import json; from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n, None) for n in {names!r}}}, default=str))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "webapp.project.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- SECRET_KEY ---------------------------------------------------------------------


def test_site_refuses_the_built_in_key_without_debug(tmp_path):
    done = manage_check(bare_env(tmp_path / "var"))
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr
    assert "Set the SECRET_KEY environment variable" in done.stderr
    assert str(tmp_path / "var" / "secret_key") in done.stderr


def test_debug_may_use_the_built_in_key(tmp_path):
    done = manage_check(bare_env(tmp_path / "var", DEBUG="1"))
    assert done.returncode == 0, done.stderr


def test_make_keeps_a_random_key_in_var_that_settings_read(tmp_path):
    """`make run` (its setup) writes var/secret_key once, mode 0600; the site then starts
    with no SECRET_KEY in the environment and uses that key."""
    var_dir = tmp_path / "var"
    # A stand-in for the venv, already installed, so that make builds only the key.
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "python").symlink_to(sys.executable)
    installed = fake_bin / ".installed"
    installed.touch()
    future = time.time() + 86400
    os.utime(installed, (future, future))
    key_file = var_dir / "secret_key"

    def make_key() -> str:
        done = subprocess.run(
            ["make", "-s", f"BIN={fake_bin}", str(key_file)],
            cwd=REPO_ROOT,
            env=bare_env(var_dir),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return key_file.read_text().strip()

    key = make_key()
    assert len(key) >= 50
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert make_key() == key  # made once, kept

    done = manage_check(bare_env(var_dir))
    assert done.returncode == 0, done.stderr
    assert settings_in_subprocess(["SECRET_KEY"], bare_env(var_dir))["SECRET_KEY"] == key
    # The environment's key wins over the file.
    env_key = settings_in_subprocess(["SECRET_KEY"], bare_env(var_dir, SECRET_KEY="k" * 60))
    assert env_key["SECRET_KEY"] == "k" * 60


# --- HTTPS switches -----------------------------------------------------------------

SECURITY_SETTINGS = [
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_PROXY_SSL_HEADER",
    "CSRF_TRUSTED_ORIGINS",
]


def test_https_switches_default_to_plain_http(tmp_path):
    got = settings_in_subprocess(SECURITY_SETTINGS, bare_env(tmp_path, SECRET_KEY="k" * 60))
    assert got == {
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "SECURE_SSL_REDIRECT": False,
        "SECURE_HSTS_SECONDS": 0,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
        "SECURE_HSTS_PRELOAD": False,
        "SECURE_PROXY_SSL_HEADER": None,
        "CSRF_TRUSTED_ORIGINS": [],
    }


HTTPS_ON = {
    "SECRET_KEY": "a-long-random-key-for-this-test-only-0123456789-abcdefghijklmnop",
    "ALLOWED_HOSTS": "mleboard.example.org",
    "MLEBOARD_BEHIND_TLS_PROXY": "1",
    "SECURE_SSL_REDIRECT": "true",
    "SESSION_COOKIE_SECURE": "yes",
    "CSRF_COOKIE_SECURE": "on",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "CSRF_TRUSTED_ORIGINS": "https://mleboard.example.org,https://www.mleboard.example.org",
}


def test_https_switches_from_the_environment(tmp_path):
    got = settings_in_subprocess(SECURITY_SETTINGS, bare_env(tmp_path, **HTTPS_ON))
    assert got == {
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": True,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "CSRF_TRUSTED_ORIGINS": [
            "https://mleboard.example.org",
            "https://www.mleboard.example.org",
        ],
    }


def test_check_deploy_with_the_switches_on_finds_no_security_issue(tmp_path):
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "ERROR"],
        cwd=REPO_ROOT,
        env=bare_env(tmp_path, **HTTPS_ON),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert re.findall(r"\((security|axes)\.\w+\)", done.stdout + done.stderr) == []


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SESSION_COOKIE_SECURE", "ture", "SESSION_COOKIE_SECURE='ture': expected true or false"),
        ("SECURE_HSTS_SECONDS", "1y", "SECURE_HSTS_SECONDS='1y': expected a whole number"),
        (
            "MLEBOARD_UPLOAD_RATE",
            "lots",
            "MLEBOARD_UPLOAD_RATE='lots': expected a rate like 30/hour",
        ),
        (
            "CACHE_URL",
            "memcached://x",
            "CACHE_URL='memcached://x': expected a redis:// or rediss://",
        ),
        ("MLEBOARD_MAX_SUBMISSION_BYTES", "1gg", "MLEBOARD_MAX_SUBMISSION_BYTES='1gg': not a size"),
    ],
)
def test_a_mistyped_switch_stops_start_up(tmp_path, name, value, message):
    done = manage_check(bare_env(tmp_path, SECRET_KEY="k" * 60, **{name: value}))
    assert done.returncode != 0
    assert message in done.stderr


# --- login lockout (django-axes) ----------------------------------------------------


@pytest.mark.django_db
@override_settings(AXES_ENABLED=True)
@pytest.mark.parametrize("login_url", ["/accounts/login/", "/admin/login/"])
def test_login_is_locked_after_repeated_failures(django_user_model, login_url):
    django_user_model.objects.create_user(
        "mallory-target", password="the-right-pw-123", is_staff=True
    )
    client = Client(REMOTE_ADDR="192.0.2.7")
    wrong = {"username": "mallory-target", "password": "wrong"}
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        response = client.post(login_url, wrong)
        assert response.status_code == 200  # the form again, with its error
    assert client.post(login_url, wrong).status_code == 429

    # Locked: even the right password is refused, with a message a person can read.
    right = {"username": "mallory-target", "password": "the-right-pw-123"}
    response = client.post(login_url, right)
    assert response.status_code == 429
    assert b"too many login attempts" in response.content.lower()
    assert "_auth_user_id" not in client.session

    # The lockout is for this username from this address: the user signs in elsewhere.
    other = Client(REMOTE_ADDR="198.51.100.9")
    response = other.post(login_url, right)
    assert response.status_code == 302
    assert "_auth_user_id" in other.session


@pytest.mark.django_db
@override_settings(AXES_ENABLED=True)
@pytest.mark.parametrize("login_url", ["/accounts/login/", "/admin/login/"])
def test_every_spelling_of_a_name_counts_against_one_lockout(django_user_model, login_url):
    """Sign-in ignores the case of a name, so the lockout does too: other spellings
    neither get an allowance of their own nor sign in (and clear the lock) once locked."""
    django_user_model.objects.create_user("frank", password="the-right-pw-123", is_staff=True)
    client = Client(REMOTE_ADDR="192.0.2.8")
    spellings = ["frank", "Frank", "fRANK", "FRANK", "frAnk", " frank "]
    for i in range(settings.AXES_FAILURE_LIMIT - 1):
        wrong = {"username": spellings[i % len(spellings)], "password": "wrong"}
        assert client.post(login_url, wrong).status_code == 200
    assert client.post(login_url, {"username": "Frank", "password": "w"}).status_code == 429
    for name in spellings:
        assert client.post(login_url, {"username": name, "password": "guess"}).status_code == 429
        right = client.post(login_url, {"username": name, "password": "the-right-pw-123"})
        assert right.status_code == 429
        assert "_auth_user_id" not in client.session
    # Still locked for the plain spelling: no other spelling cleared it.
    right = {"username": "frank", "password": "the-right-pw-123"}
    assert client.post(login_url, right).status_code == 429


# --- per-user throttles -------------------------------------------------------------


@pytest.fixture
def low_rates(monkeypatch):
    """Two uploads and one re-grade per hour, counted in a cache of this test's own.
    (DRF's throttle reads its rates from a class attribute set at import.)"""
    monkeypatch.setattr(
        ScopedRateThrottle, "THROTTLE_RATES", {"uploads": "2/hour", "regrades": "1/hour"}
    )
    caches = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "test-deployment-throttles",
        }
    }
    with override_settings(CACHES=caches):
        from django.core.cache import cache

        cache.clear()
        yield
        cache.clear()


@pytest.fixture
def signed_in(django_user_model):
    def make(name: str) -> Client:
        client = Client()
        client.force_login(django_user_model.objects.create_user(name, password="pw-12345678"))
        return client

    return make


@pytest.mark.django_db
def test_upload_api_is_throttled_per_user(low_rates, signed_in):
    alice, bob = signed_in("alice-t"), signed_in("bob-t")
    for _ in range(2):  # allowed (refused for the missing archive, but counted)
        assert alice.post("/api/uploads/", {}).status_code == 400
    response = alice.post("/api/uploads/", {})
    assert response.status_code == 429
    assert "throttled" in response.json()["detail"]
    assert int(response["Retry-After"]) > 0
    assert bob.post("/api/uploads/", {}).status_code == 400  # each user has a budget


@pytest.mark.django_db
def test_upload_page_shares_the_api_budget(low_rates, signed_in):
    carol = signed_in("carol-t")
    assert carol.post("/api/uploads/", {}).status_code == 400
    assert carol.post("/uploads/new/", {"scaffold": "aide"}).status_code != 429
    response = carol.post("/uploads/new/", {"scaffold": "aide", "model": "o1"})
    assert response.status_code == 429
    assert b"Too many uploads" in response.content
    assert carol.get("/uploads/new/").status_code == 200  # the form itself stays open


@pytest.mark.django_db
def test_regrade_api_is_throttled_per_user(low_rates, signed_in):
    dave = signed_in("dave-t")
    assert dave.post("/api/experiments/999999/regrade/").status_code == 404
    assert dave.post("/api/experiments/999999/regrade/").status_code == 429


def test_rates_come_from_the_environment(tmp_path):
    env = bare_env(
        tmp_path, SECRET_KEY="k" * 60, MLEBOARD_UPLOAD_RATE="5/min", MLEBOARD_REGRADE_RATE="off"
    )
    rates = settings_in_subprocess(["REST_FRAMEWORK"], env)["REST_FRAMEWORK"]
    assert rates["DEFAULT_THROTTLE_RATES"] == {"uploads": "5/min", "regrades": None}


# --- the workers --------------------------------------------------------------------


def option(argv: list[str], *names: str) -> str:
    for i, arg in enumerate(argv):
        if arg in names:
            return argv[i + 1]
    raise AssertionError(f"no {names} in {argv}")


RUN_QUEUES = set(RUN_QUEUE_NAMES)  # runs.cpu, runs.gpu


def routed_queues() -> set[str]:
    return (
        {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
        | {settings.CELERY_TASK_DEFAULT_QUEUE}
        | RUN_QUEUES
    )


def processes_argv(name: str, **env: str) -> list[str]:
    """The command line webapp/ops/processes.py starts ``name`` with, in an environment."""
    done = subprocess.run(
        [sys.executable, "-m", "webapp.ops.processes", "argv", name],
        cwd=REPO_ROOT,
        env={**os.environ, "SECRET_KEY": "k" * 50, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return shlex.split(done.stdout)


def test_the_processes_are_a_grading_worker_and_a_runs_worker(tmp_path):
    grading = processes_argv("grading-worker", WORKER_CONCURRENCY="3")
    runs = processes_argv("runs-worker", MLEBOARD_RUN_SLOTS="4", MLEBOARD_HOST_GPUS="")
    assert option(grading, "-n") == "grading@%h" and option(runs, "-n") == "runs@%h"
    assert option(grading, "-Q").split(",") == ["grading", "default"]
    assert option(grading, "--concurrency") == "3"
    assert option(runs, "-Q") == "runs.cpu" and option(runs, "--concurrency") == "4"
    # Every queue a task is routed to is consumed, each by one worker only.
    assert set(option(grading, "-Q").split(",")) | RUN_QUEUES == routed_queues()
    # A host with GPUs takes GPU runs too; MLEBOARD_RUN_QUEUES says it outright.
    assert option(processes_argv("runs-worker", MLEBOARD_HOST_GPUS="0,1"), "-Q") == (
        "runs.cpu,runs.gpu"
    )
    assert option(processes_argv("runs-worker", MLEBOARD_RUN_QUEUES="runs.gpu"), "-Q") == (
        "runs.gpu"
    )
    if "MLEBOARD_RUN_SLOTS" not in os.environ:
        assert settings.MLEBOARD_RUN_SLOTS == 2
    beat = processes_argv("beat", MLEBOARD_VAR_DIR=str(tmp_path))
    assert beat[1:4] == ["-A", "webapp", "beat"]
    assert option(beat, "--schedule") == str(tmp_path / "celerybeat-schedule")


def test_gunicorn_never_shares_a_control_socket():
    """gunicorn 27 opens ~/.gunicorn/gunicorn.ctl by default, one path for every gunicorn
    of a user: starting a second took the first one's over, stopping either removed it.
    Every way the project starts gunicorn turns it off."""
    web = processes_argv("web")
    assert "--no-control-socket" in web
    starters = [REPO_ROOT / "Dockerfile", REPO_ROOT / "compose.yaml", REPO_ROOT / "Makefile"]
    for folder, pattern in (
        ("scripts", "*"),
        ("perf", "*.py"),
        ("tests", "*.py"),
        ("webapp", "*.py"),
    ):
        starters += sorted((REPO_ROOT / folder).rglob(pattern))
    starting = [p for p in starters if "webapp.project.wsgi" in p.read_text(encoding="utf-8")]
    assert REPO_ROOT / "perf" / "load_bench.py" in starting  # the scan sees the starters
    for path in starting:
        text = path.read_text(encoding="utf-8")
        if "gunicorn" in text and path.name not in ("wsgi.py", "test_deployment.py"):
            assert "--no-control-socket" in text or "webapp.ops.processes" in text, path


def test_compose_runs_each_process_as_make_run_does():
    all_services = yaml.safe_load((REPO_ROOT / "compose.yaml").read_text())["services"]
    services = {k: s for k, s in all_services.items() if not s.get("profiles")}
    for name in ("web", "grading-worker", "runs-worker", "beat"):
        assert f"webapp.ops.processes run {name}" in services[name]["command"], name
        # Restarted by the engine when it dies; stopped within the grace.
        assert services[name]["restart"] == "unless-stopped"
        assert services[name]["stop_grace_period"] == "13s"
    for service in all_services.values():
        if "runs-worker" in service.get("command", ""):
            assert "MLEBOARD_RUN_SLOTS" in service["environment"]
            assert "MLEBOARD_RUN_QUEUES" in service["environment"]
            # The folders the host's engine mounts into a run's container are the host's.
            assert service["environment"]["TMPDIR"] == "${MLEBOARD_HOST_DIR:-/srv/mleboard}/tmp"
            assert (
                'mkdir -p "$$TMPDIR" && exec python -m webapp.ops.processes' in service["command"]
            )
    # Joining a run host: one service per profile, with the engine's socket.
    for name, queues in (("runhost", "runs.cpu"), ("runhost-gpu", "runs.cpu,runs.gpu")):
        host = all_services[name]
        assert host["profiles"] == [name]
        argv = shlex.split(host["command"])
        assert argv[:2] == ["sh", "-c"] and "webapp.ops.processes run runs-worker" in argv[2]
        assert host["environment"]["MLEBOARD_RUN_QUEUES"] == queues
        # Refuses to start without the site's database, broker and a host name.
        for variable in ("DATABASE_URL", "CELERY_BROKER_URL", "MLEBOARD_HOST_NAME"):
            assert f"${{{variable}:?" in argv[2]
        assert "/var/run/docker.sock:/var/run/docker.sock" in host["volumes"]
        assert "MLEBOARD_HOST_NAME" in host["environment"] and "depends_on" not in host
    assert all_services["runhost-gpu"]["runtime"] == "nvidia"
    # Compose interpolates every service before it applies profiles: nothing a run host
    # alone needs may be required (`:?`) for the site's own `docker compose up`.
    for name in ("runhost", "runhost-gpu"):
        env = all_services[name]["environment"]
        assert all(":?" not in str(v) for k, v in env.items() if k != "SECRET_KEY")


def test_serve_script_starts_the_processes_under_a_supervisor():
    script = (REPO_ROOT / "scripts" / "serve.sh").read_text()
    assert 'exec "$BIN/python" -m webapp.ops.processes serve' in script
    assert "webapp.ops.processes announce $$" in script
    assert 'echo "mleboard is up' not in script, "said by the announcer, once the site answers"


def test_make_run_says_it_is_up_once_the_site_answers_not_before(tmp_path):
    """``python -m webapp.ops.processes announce PID`` prints "mleboard is up" only once a
    request to the site's address is answered: not while nothing listens there, not while
    connections are closed unanswered."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        out = tmp_path / "printed"
        announcer = subprocess.Popen(
            [sys.executable, "-m", "webapp.ops.processes", "announce", str(os.getpid())],
            cwd=REPO_ROOT,
            env={
                **os.environ,
                "HOST": "127.0.0.1",
                "PORT": str(port),
                "MLEBOARD_VAR_DIR": str(tmp_path / "var"),
            },
            stdout=open(out, "w"),
            stderr=subprocess.STDOUT,
        )
        try:
            listener.settimeout(120)
            # Asked twice and left unanswered: nothing said yet.
            for _ in range(2):
                connection, _address = listener.accept()
                connection.close()
            assert out.read_text() == ""
            connection, _address = listener.accept()
            with connection:
                connection.recv(65536)
                connection.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
            assert announcer.wait(timeout=120) == 0
        finally:
            announcer.kill()
    printed = out.read_text()
    assert f"mleboard is up: http://127.0.0.1:{port}/" in printed, printed


def test_processes_start_quietly():
    """Starting says nothing a person acts on: no "AXES: BEGIN …" from every process
    (django-axes), no line per gunicorn worker booted (its warnings and errors still show)."""
    web = processes_argv("web")
    assert web[web.index("--log-level") + 1] == "warning"
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO_ROOT,
        env={**os.environ, "SECRET_KEY": "k" * 50},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "AXES" not in done.stdout + done.stderr


# --- compose.yaml as docker-compose reads it ----------------------------------------


def compose_config(*args: str, **variables: str) -> dict:
    """compose.yaml as docker-compose (Debian's, 1.29) reads it, in an environment with
    only ``variables`` and a SECRET_KEY."""
    done = subprocess.run(
        ["docker-compose", "-f", "compose.yaml", *args, "config"],
        cwd=REPO_ROOT,
        env={"PATH": os.environ["PATH"], "SECRET_KEY": "k" * 50, **variables},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


def test_docker_compose_accepts_the_file_and_its_run_host_profiles():
    """A compose file docker-compose refuses fails here, in seconds (tests/stack/ runs it)."""
    site = {"db", "redis", "pagecache", "web", "grading-worker", "runs-worker", "beat"}
    assert site | {"runhost", "runhost-gpu"} == set(compose_config()["services"])
    for profile in ("runhost", "runhost-gpu"):
        assert profile in compose_config("--profile", profile)["services"]


def test_compose_images_are_the_public_ones_unless_named():
    """By default the operator's images come from the registry; the variables `mleboard
    images --stack` prints put the images made from Debian's packages in their place."""
    services = compose_config()["services"]
    assert services["db"]["image"] == "postgres:15"
    assert services["redis"]["image"] == services["pagecache"]["image"] == "redis:7"
    for name in ("web", "grading-worker", "runs-worker", "beat"):
        assert services[name]["build"]["args"] == {
            "BASE_IMAGE": "python:3.11-slim-bookworm",
            "JS_IMAGE": "node:20-bookworm-slim",
        }
    named = {
        "MLEBOARD_BASE_IMAGE": "mleboard/site-base:1",
        "MLEBOARD_JS_IMAGE": "mleboard/site-base:1",
        "MLEBOARD_POSTGRES_IMAGE": "mleboard/postgres:2",
        "MLEBOARD_REDIS_IMAGE": "mleboard/redis:3",
    }
    services = compose_config("--profile", "runhost", **named)["services"]
    assert services["db"]["image"] == "mleboard/postgres:2"
    assert services["redis"]["image"] == services["pagecache"]["image"] == "mleboard/redis:3"
    for name in ("web", "grading-worker", "runs-worker", "beat", "runhost"):
        assert services[name]["build"]["args"] == {
            "BASE_IMAGE": "mleboard/site-base:1",
            "JS_IMAGE": "mleboard/site-base:1",
        }
    dockerfile = (REPO_ROOT / "Dockerfile").read_text()
    assert "ARG BASE_IMAGE=python:3.11-slim-bookworm" in dockerfile
    assert "ARG JS_IMAGE=node:20-bookworm-slim" in dockerfile
