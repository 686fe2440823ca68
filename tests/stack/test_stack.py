"""The operator's deployment, run: the Dockerfile's image built FROM the base that `mleboard
images --stack` makes from Debian's packages (scripts/test-deps.sh builds it cold, once),
compose.yaml's services started by docker-compose on this host's loopback
(compose.loopback.yaml), an archive sent with `mleboard submit` and graded, a second run
host (compose's `runhost`) beside the site's own running the baseline agent on the demo
competitions, each service restarted in turn with nothing lost and nothing graded twice,
then the stack stopped. It prints its figures (and writes them to
test-artifacts/stack-figures.json): the cached build, the image sizes, the time until every
process is alive and from `submit` to graded."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest
import requests
import yaml

from benchmark.demo import DEMO_COMPETITIONS
from runner.stack_images import compose_variables
from tests.support.polling import wait_until

pytestmark = [pytest.mark.stack, pytest.mark.docker, pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = Path(__file__).with_name("compose.loopback.yaml")
# The site's processes and what they stand on, restarted one after another.
RESTARTED = ("web", "grading-worker", "runs-worker", "beat", "db", "redis")
DOCKER_SOCKET = Path("/var/run/docker.sock")
FIGURES = REPO_ROOT / "test-artifacts" / "stack-figures.json"


def free_ports(count: int) -> list[int]:
    """Ports nothing listens on now, on the loopback."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def operator_compose_without_ports(folder: Path) -> Path:
    """compose.yaml as the operator has it, less its published ports: under host
    networking they mean nothing and docker-compose refuses them."""
    config = yaml.safe_load((REPO_ROOT / "compose.yaml").read_text(encoding="utf-8"))
    for service in config["services"].values():
        service.pop("ports", None)
    # The loopback file gives the page cache a port by restating its command: the same.
    pages = " ".join(config["services"]["pagecache"]["command"][1:])
    loopback = yaml.safe_load(LOOPBACK.read_text(encoding="utf-8"))["services"]["pagecache"]
    assert pages in " ".join(loopback["command"]), "compose.loopback.yaml's pagecache differs"
    path = folder / "compose.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


class Stack:
    """One compose project of this test: its commands, its site's API and database."""

    def __init__(self, folder: Path):
        instance = os.environ.get("MLEBOARD_INSTANCE") or "mleboard"
        self.name = re.sub(r"[^a-z0-9]+", "", f"{instance}stack".lower())
        self.folder = folder
        # The operator's /srv/mleboard: a short path, since the validation service's socket
        # is made under it (a Unix socket's path has at most 107 bytes).
        self.host_dir = Path(tempfile.mkdtemp(prefix="mleboard-stack-"))
        # The site's processes run as an account of the image's own.
        self.host_dir.chmod(0o777)
        web, db, broker, pages = free_ports(4)
        self.web_url = f"http://127.0.0.1:{web}"
        self.db_url = f"postgresql://mleboard:mleboard@127.0.0.1:{db}/mleboard"
        self.broker_url = f"redis://127.0.0.1:{broker}/0"
        self.file = operator_compose_without_ports(folder)
        # What the operator sets, and nothing of this test's own settings (its database,
        # broker, folders): compose reads its variables from this environment.
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": os.environ.get("HOME", "/root"),
            "SECRET_KEY": secrets.token_urlsafe(50),
            "MLEBOARD_HOST_DIR": str(self.host_dir),
            "MLEBOARD_RUN_SLOTS": "1",
            "DOCKER_GID": str(DOCKER_SOCKET.stat().st_gid),
            "STACK_INSTANCE": self.name,
            "STACK_WEB_PORT": str(web),
            "STACK_DB_PORT": str(db),
            "STACK_REDIS_PORT": str(broker),
            "STACK_PAGECACHE_PORT": str(pages),
            **compose_variables(REPO_ROOT),
        }
        self.http = requests.Session()
        self.http.trust_env = False

    def command(self, *args: str) -> list[str]:
        files = ["-f", str(self.file), "-f", str(LOOPBACK)]
        project = ["--project-name", self.name, "--project-directory", str(REPO_ROOT)]
        return ["docker-compose", *project, *files, *args]

    def compose(self, *args: str, timeout: float = 600, **env: str) -> str:
        done = subprocess.run(
            self.command(*args),
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"docker-compose {' '.join(args)}:\n{done.stderr[-4000:]}"
        return done.stdout

    def manage(self, *args: str, env: dict[str, str] | None = None) -> str:
        extra = [arg for name, value in (env or {}).items() for arg in ("-e", f"{name}={value}")]
        return self.compose("exec", "-T", *extra, "web", "python", "manage.py", *args)

    def api(self, path: str, **kwargs) -> requests.Response:
        return self.http.request(
            kwargs.pop("method", "GET"), self.web_url + path, timeout=30, **kwargs
        )

    def answers(self) -> bool:
        try:
            return self.api("/").status_code == 200
        except requests.ConnectionError:
            return False

    def processes(self) -> dict[str, str]:
        """Each process /api/status/ lists, with its state; {} while the site cannot say."""
        try:
            response = self.api("/api/status/")
        except requests.ConnectionError:
            return {}
        if response.status_code != 200:
            return {}
        return {p["name"]: p["state"] for p in response.json()["processes"]}

    def all_alive(self, expected: int) -> dict[str, str] | None:
        processes = self.processes()
        if len(processes) == expected and set(processes.values()) == {"alive"}:
            return processes
        return None

    def query(self, sql: str) -> list[tuple]:
        """Rows of the site's database (None while it restarts)."""
        try:
            with psycopg.connect(self.db_url, connect_timeout=5) as connection:
                return connection.execute(sql).fetchall()
        except psycopg.OperationalError:
            return None

    def logs(self, *services: str) -> str:
        return self.compose("logs", "--no-color", *services)


def docker_image_size_mb(ref: str) -> float:
    done = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Size}}", ref],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout) / 1e6


def run_group(folder: Path, submissions: Path, name: str) -> Path:
    """An MLE-bench run-group folder of the demo's linear reference agent (seed 0)."""
    group = folder / "runs" / f"2024-10-01T00-00-00-GMT_run-group_{name}"
    runs = {}
    for index, competition in enumerate(DEMO_COMPETITIONS):
        run = group / f"{competition}_{index:08d}-0000-0000-0000-000000000000"
        for part in ("submission", "logs", "code"):
            (run / part).mkdir(parents=True)
        shutil.copyfile(
            submissions / competition / "submission.csv", run / "submission" / "submission.csv"
        )
        (run / "logs" / "run.log").write_text(f"{name}\n")
        (run / "code" / "train.py").write_text("print('train')\n")
        runs[run.name] = {"success": True}
    (group / "metadata.json").write_text(json.dumps({"run_group": group.name, "runs": runs}))
    return group


def submit(stack: Stack, token: str, group: Path, model: str, *extra: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "cli", "submit", str(group), "--site", stack.web_url]
        + ["--scaffold", "stack", "--model", model, *extra],
        cwd=REPO_ROOT,
        env={
            **os.environ,
            "MLEBOARD_TOKEN": token,
            "XDG_CACHE_HOME": str(stack.folder / "cache"),
            "XDG_CONFIG_HOME": str(stack.folder / "config"),
            "NO_PROXY": "127.0.0.1",
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def graded_once(stack: Stack, uploads: int) -> bool:
    """Every upload graded, and every run of them graded with exactly one report."""
    states = stack.query("SELECT status FROM results_upload")
    runs = stack.query(
        "SELECT r.status, (SELECT count(*) FROM results_gradereport g WHERE g.run_id = r.id) "
        "FROM results_run r JOIN results_upload u ON u.experiment_id = r.experiment_id"
    )
    if states is None or runs is None:
        return False
    assert all(count <= 1 for _status, count in runs), runs  # never graded twice
    return (
        len(states) == uploads
        and {s for (s,) in states} == {"graded"}
        and len(runs) == uploads * len(DEMO_COMPETITIONS)
        and all(status == "graded" and count == 1 for status, count in runs)
    )


@pytest.fixture
def stack(tmp_path):
    for program in ("docker", "docker-compose"):
        if shutil.which(program) is None:
            pytest.fail(f"{program} is not installed: scripts/test-deps.sh installs it")
    stack = Stack(tmp_path)
    try:
        yield stack
    finally:
        subprocess.run(
            stack.command("--profile", "runhost", "down", "--volumes", "--remove-orphans"),
            env=stack.env,
            capture_output=True,
            timeout=300,
        )
        shutil.rmtree(stack.host_dir, ignore_errors=True)


def test_the_operators_stack_runs_grades_and_survives_restarts(stack, tmp_path):
    figures = {}
    started = time.monotonic()
    stack.compose("build")
    figures["cached build of the site's image (s)"] = round(time.monotonic() - started, 1)
    image = f"{stack.name}_web"
    bases = compose_variables(REPO_ROOT)
    sizes = {"site": image, "its base": bases["MLEBOARD_BASE_IMAGE"]}
    sizes |= {"postgres": bases["MLEBOARD_POSTGRES_IMAGE"], "redis": bases["MLEBOARD_REDIS_IMAGE"]}
    figures["image sizes (MB)"] = {
        name: round(docker_image_size_mb(r)) for name, r in sizes.items()
    }
    check_image(image)

    started = time.monotonic()
    stack.compose("up", "-d")
    wait_until(stack.answers, timeout=300, interval=0.5)
    stack.manage(
        "createsuperuser",
        "--noinput",
        "--username",
        "ops",
        "--email",
        "ops@example.org",
        env={"DJANGO_SUPERUSER_PASSWORD": secrets.token_urlsafe(16)},
    )
    token = stack.manage("create_token", "ops", "--name", "stack").strip().splitlines()[-1]
    stack.http.headers["Authorization"] = f"Token {token}"
    # grading@host, beat@host and the site's run host.
    site_processes = wait_until(lambda: stack.all_alive(3), timeout=300, interval=0.5)
    figures["up to every process alive (s)"] = round(time.monotonic() - started, 1)
    assert any(name.startswith("grading@") for name in site_processes), site_processes
    assert any(name.startswith("beat@") for name in site_processes), site_processes
    assert "runs@site" in site_processes

    stack.manage("load_demo", "--seeds", "1")
    submissions = stack.host_dir / "data" / "_submissions" / "linear" / "seed0"
    started = time.monotonic()
    out = submit(stack, token, run_group(tmp_path, submissions, "first"), "linear")
    figures["submit to graded (s)"] = round(time.monotonic() - started, 1)
    assert "Any Medal %" in out
    assert graded_once(stack, uploads=1)

    run_agents_on_two_hosts(stack, figures)

    # Each service restarted right after an archive was sent: every upload still graded,
    # once, and every process alive again.
    started = time.monotonic()
    for number, service in enumerate(RESTARTED, start=2):
        group = run_group(tmp_path, submissions, f"restart-{service}")
        submit(stack, token, group, f"linear-{service}", "--no-wait")
        stack.compose("restart", service)
        wait_until(lambda: stack.all_alive(4), timeout=300, interval=0.5)
        wait_until(lambda n=number: graded_once(stack, uploads=n), timeout=300, interval=0.5)
    figures["six restarts, each until all alive and graded (s)"] = round(
        time.monotonic() - started, 1
    )

    stack.compose("--profile", "runhost", "down", "--volumes", "--timeout", "15")
    assert stack.compose("ps", "-q").strip() == ""
    # In test-artifacts/ too: the suite's workers keep a passing test's output to themselves.
    FIGURES.parent.mkdir(exist_ok=True)
    FIGURES.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


def run_agents_on_two_hosts(stack: Stack, figures: dict) -> None:
    """A run host of another machine joins as docs/operate.md says (here on the same
    machine, with its own name); the baseline agent then runs on every demo competition,
    one run at a time on each host, and both hosts take some."""
    stack.compose(
        "--profile",
        "runhost",
        "up",
        "-d",
        "runhost",
        DATABASE_URL=stack.db_url,
        CELERY_BROKER_URL=stack.broker_url,
        MLEBOARD_HOST_NAME="worker-2",
    )
    wait_until(lambda: stack.all_alive(4), timeout=300, interval=0.5)
    started = time.monotonic()
    response = stack.api(
        "/api/launches/",
        method="POST",
        json={
            "agent": "baseline",
            "competitions": list(DEMO_COMPETITIONS),
            "seeds": 1,
            "cpus": 1,
            "memory": "1g",
            "gpus": 0,
            "time_limit_s": 600,
        },
    )
    assert response.status_code == 201, response.text
    launch = response.json()["id"]

    def ended() -> list[dict] | None:
        runs = stack.api(f"/api/launches/{launch}/").json()["runs"]
        graded = (r["status"] != "completed" or r["grading"] in ("graded", "failed") for r in runs)
        return runs if all(r["is_final"] for r in runs) and all(graded) else None

    runs = wait_until(ended, timeout=600, interval=1)
    figures["baseline on the demo, two hosts (s)"] = round(time.monotonic() - started, 1)
    assert {r["status"] for r in runs} == {"completed"}, runs
    assert {r["grading"] for r in runs} == {"graded"}, runs
    done = r"Task webapp\.runs\.tasks\.execute_agent_run_task\[[^\]]+\] succeeded"
    taken = {
        service: len(re.findall(done, stack.logs(service)))
        for service in ("runs-worker", "runhost")
    }
    figures["agent runs taken by each host"] = taken
    assert all(taken.values()), f"a host ran none of the runs: {taken}"


def check_image(image: str) -> None:
    """The image runs as its own non-root account and holds no secret and no path of
    this machine."""
    done = subprocess.run(
        ["docker", "image", "inspect", image], capture_output=True, text=True, check=True
    )
    config = json.loads(done.stdout)[0]["Config"]
    assert config["User"] == "mleboard"
    assert not any(v.startswith("SECRET_KEY=") for v in config["Env"]), config["Env"]
    history = subprocess.run(
        ["docker", "history", "--no-trunc", "--format", "{{.CreatedBy}}", image],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    inside = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "--entrypoint", "sh", image, "-c"]
        + [
            'id -u; ls -A /app; ls -A /var/lib/mleboard; grep -rlF "$0" /app || true',
            str(REPO_ROOT),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    uid, *listing = inside.split()
    assert uid == "10001"
    for text in (history, inside, json.dumps(config)):
        assert str(REPO_ROOT) not in text and str(Path.home()) + "/" not in text
    assert not {".git", ".venv", "var", "secret_key", "tests"} & set(listing), listing
