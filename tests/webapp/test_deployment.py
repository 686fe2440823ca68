"""Deployment safety: the built-in SECRET_KEY refused off DEBUG (and `make run`'s kept key),
the HTTPS switches, login lockout, per-user throttles on uploads and re-grades, and the
separate grading and agent-run workers of `make run` and compose.yaml."""

import json
import os
import re
import shlex
import signal
import socket
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

REPO_ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

# What a fresh shell has: none of the test configuration's or the developer's settings.
_CLEARED = (
    "SECRET_KEY",
    "DEBUG",
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CACHE_URL",
    "MLEBOARD_MEDIA_ROOT",
    "MLEBOARD_DATA_DIR",
    "MLEBOARD_RUN_SLOTS",
)


def bare_env(var_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED and not k.startswith("SECURE_")}
    env.pop("MLEBOARD_BEHIND_TLS_PROXY", None)
    env.pop("CSRF_TRUSTED_ORIGINS", None)
    # Set by the browser tests' Playwright fixture in this process; never in a deployment.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return {**env, "MLEBOARD_VAR_DIR": str(var_dir), **extra}


def manage_check(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def settings_in_subprocess(names: list[str], env: dict[str, str]) -> dict:
    code = (
        "import json; from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n, None) for n in {names!r}}}, default=str))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "webapp.settings"},
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
        ("SESSION_COOKIE_SECURE", "ture", "SESSION_COOKIE_SECURE must be true or false"),
        ("SECURE_HSTS_SECONDS", "1y", "SECURE_HSTS_SECONDS must be an integer"),
        ("MLEBOARD_UPLOAD_RATE", "lots", "MLEBOARD_UPLOAD_RATE must be a rate like 30/hour"),
        ("CACHE_URL", "memcached://x", "CACHE_URL must be a redis:// URL"),
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


def worker_commands(script: str) -> list[list[str]]:
    """The `celery ... worker` command lines of a shell script, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", script)
    return [
        shlex.split(line.split("&")[0])
        for line in joined.splitlines()
        if re.search(r"celery\S*\s+-A\s+webapp\s+worker\b", line)
    ]


def option(argv: list[str], *names: str) -> str:
    for i, arg in enumerate(argv):
        if arg in names:
            return argv[i + 1]
    raise AssertionError(f"no {names} in {argv}")


RUN_QUEUES = set(settings.MLEBOARD_RUN_QUEUES.values())  # runs.cpu, runs.gpu


def routed_queues() -> set[str]:
    return (
        {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
        | {settings.CELERY_TASK_DEFAULT_QUEUE}
        | RUN_QUEUES
    )


def check_two_workers(commands: list[list[str]], run_slots: str, run_queues: str) -> None:
    assert len(commands) == 2, commands
    by_name = {option(argv, "-n", "--hostname").split("@")[0]: argv for argv in commands}
    assert set(by_name) == {"grading", "runs"}
    grading, runs = by_name["grading"], by_name["runs"]
    assert option(grading, "-Q", "--queues").split(",") == ["grading", "default"]
    assert option(runs, "-Q", "--queues") == run_queues
    assert option(runs, "-c", "--concurrency") == run_slots
    # Every queue a task is routed to is consumed, each by one worker only.
    assert set(option(grading, "-Q").split(",")) | RUN_QUEUES == routed_queues()


def test_serve_script_starts_a_grading_worker_and_a_runs_worker():
    script = (REPO_ROOT / "scripts" / "serve.sh").read_text()
    check_two_workers(
        worker_commands(script), run_slots="${MLEBOARD_RUN_SLOTS:-2}", run_queues="$RUN_QUEUES"
    )
    # runs.cpu, and runs.gpu on a machine with GPUs.
    assert "RUN_QUEUES=runs.cpu\n" in script and "RUN_QUEUES=runs.cpu,runs.gpu\n" in script
    assert re.search(r"celery\"?\s+-A\s+webapp\s+beat\b", script)
    if "MLEBOARD_RUN_SLOTS" not in os.environ:
        assert settings.MLEBOARD_RUN_SLOTS == 2  # the script's default is the settings'


def test_compose_runs_a_grading_worker_and_a_runs_worker():
    all_services = yaml.safe_load((REPO_ROOT / "compose.yaml").read_text())["services"]
    # The site's own services; run hosts of other machines are behind profiles.
    services = {k: s for k, s in all_services.items() if not s.get("profiles")}
    commands = [
        shlex.split(s["command"]) for s in services.values() if " worker " in s.get("command", "")
    ]
    check_two_workers(
        commands,
        run_slots="${MLEBOARD_RUN_SLOTS:-2}",
        run_queues="${MLEBOARD_RUN_QUEUES:-runs.cpu}",
    )
    assert any(" beat " in s.get("command", "") for s in services.values())
    for service in all_services.values():
        if "worker" in service.get("command", ""):
            assert "MLEBOARD_RUN_SLOTS" in service["environment"]
    # Joining a run host: one service per profile, with the engine's socket.
    for name, queues in (("runhost", "runs.cpu"), ("runhost-gpu", "runs.cpu,runs.gpu")):
        host = all_services[name]
        assert host["profiles"] == [name]
        argv = shlex.split(host["command"])
        assert argv[:2] == ["sh", "-c"] and f" -Q {queues} " in argv[2]
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _group_command_lines(pgid: int) -> list[list[str]]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if os.getpgid(int(proc.name)) != pgid:
                continue
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except (ProcessLookupError, FileNotFoundError, PermissionError):
            continue
        if argv := [a.decode() for a in argv if a]:  # a zombie has none
            found.append(argv)
    return found


@pytest.mark.slow
def test_serve_script_really_starts_both_workers(tmp_path):
    """Run scripts/serve.sh on an embedded broker of its own until both workers say they
    are ready, read their command lines, then stop the whole process group."""
    var_dir = tmp_path / "var"
    env = bare_env(
        var_dir,
        SECRET_KEY="k" * 60,
        BIN=str(BIN),
        HOST="127.0.0.1",
        PORT=str(_free_port()),
        WEB_CONCURRENCY="1",
        WORKER_CONCURRENCY="1",
        MLEBOARD_RUN_SLOTS="3",
    )
    out = open(tmp_path / "serve.out", "w")
    proc = subprocess.Popen(
        ["sh", "scripts/serve.sh"],
        cwd=REPO_ROOT,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    logs = {name: var_dir / "log" / f"worker-{name}.log" for name in ("grading", "runs")}
    try:
        deadline = time.monotonic() + 120
        while not all(p.exists() and " ready." in p.read_text() for p in logs.values()):
            assert proc.poll() is None, (tmp_path / "serve.out").read_text()
            assert time.monotonic() < deadline, {n: p.exists() for n, p in logs.items()}
            time.sleep(0.5)
        for name, path in logs.items():
            assert re.search(rf"{name}@\S+ ready\.", path.read_text())
        # One command line per worker (its pool's children share it).
        workers = {tuple(a) for a in _group_command_lines(proc.pid) if "worker" in a}
        check_two_workers([list(argv) for argv in workers], run_slots="3", run_queues="runs.cpu")
    finally:
        _stop_group(proc.pid)
        proc.wait(timeout=30)
        out.close()


def _stop_group(pgid: int) -> None:
    for sig, wait_s in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while _group_command_lines(pgid) and time.monotonic() < deadline:
            time.sleep(0.5)
