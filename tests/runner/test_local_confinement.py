"""The local backend keeps the worker's secrets from its agent.

A worker process (the harness, started here with secrets in its environment, as
``make run``'s runs worker holds the model key, ``SECRET_KEY`` and ``DATABASE_URL``) runs an
agent that hunts for them everywhere it can: its own environment, every ``/proc/*/environ``
and ``cmdline`` it can read (its parent's included), and the files under the site's folders
and the usual shared places. It publishes what it finds through its run files, as the agent
that found this did. Confined, it finds nothing; unconfined (the control), the same hunt
finds the secrets, so the hunt itself is shown to work.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.local_confinement import Level, local_confinement
from tests.support.runner_demo import COMPETITION, write_demo

HUNTER = r"""
import json, os, stat, sys
TAG = "-".join(["PLANTED", "SECRET"]).encode()
hits, counts = [], {"proc_files_read": 0, "files_read": 0, "env_vars": len(os.environ)}

def look(where, data):
    at = data.find(TAG)
    while at >= 0:
        hits.append({"where": where, "text": data[at:at + 60].decode("latin-1")})
        at = data.find(TAG, at + 1)

look("own environment", "\n".join(f"{k}={v}" for k, v in os.environ.items()).encode())
look("own argv", " ".join(sys.argv).encode())
for pid in [p for p in os.listdir("/proc") if p.isdigit()] + ["self", str(os.getppid())]:
    for name in ("environ", "cmdline"):
        try:
            with open(f"/proc/{pid}/{name}", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        counts["proc_files_read"] += 1
        if pid != "self" and int(pid) == os.getpid():
            continue  # our own: already looked at
        look(f"/proc/{pid}/{name}", data)

for root in os.environ["HUNT_ROOTS"].split(":"):
    seen = 0
    for folder, dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            try:
                # Never blocks on a FIFO another process left in a shared folder.
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    continue
                data = os.read(fd, 1 << 16)
            except OSError:
                continue
            finally:
                os.close(fd)
            counts["files_read"] += 1
            look(path, data)
            seen += 1
        if seen > 20000:
            break
with open(os.path.join(os.environ["LOGS_DIR"], "found.json"), "w") as fh:
    json.dump({"hits": hits, "counts": counts, "uid": os.getuid()}, fh)
"""

WORKER = r"""
import json, sys
from pathlib import Path
from runner import Resources, RunSpec, run_agent
from runner.local_backend import LocalBackend
from runner.local_confinement import Confinement, Level

level, agent_dir, data_dir, output, roots = sys.argv[1:6]
backend = LocalBackend(None if level == "best" else Confinement(Level(level), "the worker's"))
spec = RunSpec(
    image="unused",
    command=(sys.executable, "hunter.py"),
    competition_id=sys.argv[6],
    resources=Resources(cpus=1, memory=None, shm=None, gpus=0, pids=None),
    time_limit_s=300,
    local_workdir=Path(agent_dir),
    env={"HUNT_ROOTS": roots},
)
outcome = run_agent(spec, data_dir=Path(data_dir), output_dir=Path(output), backend=backend)
print(json.dumps(outcome.to_json()))
"""


@pytest.fixture
def site() -> Iterator[dict]:
    """A site's folders with secrets in the worker's environment and in world-readable
    files (the database, the secret key file, the private answers), in a folder every
    user may enter (as a site's usually is: pytest's own are closed to others)."""
    marker = f"PLANTED-SECRET-{uuid.uuid4().hex[:12]}"
    tmp_path = Path(tempfile.mkdtemp(prefix="mleboard-site-"))
    var = tmp_path / "var"
    (var / "media").mkdir(parents=True)
    (var / "secret_key").write_text(f"{marker}-file-secret-key")
    (var / "secret_key").chmod(0o644)  # careless, and still out of reach
    (var / "mleboard.sqlite3").write_text(f"a database row {marker}-file-database")
    data = var / "data"
    write_demo(data, COMPETITION, canary=f"{marker}-private-answers")
    agent = tmp_path / "hunter"
    agent.mkdir()
    (agent / "hunter.py").write_text(HUNTER)
    for folder in (tmp_path, var, var / "media", data, agent):
        folder.chmod(0o755)
    env = {
        **os.environ,
        "MLEBOARD_VAR_DIR": str(var),
        "MLEBOARD_DATA_DIR": str(data),
        "MLEBOARD_LLM_API_KEY": f"{marker}-env-llm-key",
        "SECRET_KEY": f"{marker}-env-secret-key",
        "DATABASE_URL": f"postgresql://mleboard:{marker}-env-database@127.0.0.1/mleboard",
    }
    env.pop("MLEBOARD_MEDIA_ROOT", None)
    roots = [str(tmp_path), "/tmp", "/dev/shm", "/run", "/root", "/home"]
    yield {
        "marker": marker,
        "env": env,
        "var": var,
        "data": data,
        "agent": agent,
        "roots": ":".join(roots),
    }
    shutil.rmtree(tmp_path, ignore_errors=True)


def hunt(site: dict, level: str, name: str) -> tuple[dict, dict]:
    """Run the hunter from a worker process holding the secrets; (outcome, what it found)."""
    output = site["var"] / "media" / "agent-runs" / name
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            WORKER,
            level,
            str(site["agent"]),
            str(site["data"]),
            str(output),
            site["roots"],
            COMPETITION,
        ],
        env=site["env"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    outcome = json.loads(done.stdout.splitlines()[-1])
    found = json.loads((output / "logs" / "found.json").read_text())
    return outcome, found


def ours(site: dict, found: dict) -> list[dict]:
    """The hits of this test's secrets (not those other tests may have left readable)."""
    return [hit for hit in found["hits"] if site["marker"] in hit["text"]]


@pytest.mark.slow
def test_a_confined_agent_finds_none_of_the_workers_secrets(site):
    confinement = local_confinement()
    if confinement.level is Level.NONE:
        pytest.fail(
            "this host allows no confinement of local agents (run as root with unshare, or "
            "allow user namespaces): the test must run where confinement is possible"
        )
    outcome, found = hunt(site, "best", "confined")
    assert outcome["outcome"] == "completed", outcome
    assert outcome["confinement"] == confinement.summary
    # It looked: its own variables, /proc, and the files it could read.
    assert found["counts"]["proc_files_read"] >= 2 and found["counts"]["files_read"] > 0
    assert ours(site, found) == [], found["hits"]
    if confinement.level is Level.ISOLATED:
        assert found["uid"] != 0 and found["uid"] != os.getuid()
    # Its run folder is its own again, for the worker to read and remove.
    assert (Path(outcome["output_dir"]) / "logs" / "found.json").stat().st_uid == os.getuid()


@pytest.mark.slow
def test_in_namespaces_as_the_workers_user_the_agent_finds_none_either(site):
    """The level of a worker that is not root (forced here): the worker's own user, but
    its processes out of sight and the site's folders hidden."""
    outcome, found = hunt(site, "namespaces", "namespaces")
    assert outcome["outcome"] == "completed", outcome
    assert found["counts"]["files_read"] > 0
    assert ours(site, found) == [], found["hits"]


@pytest.mark.slow
def test_unconfined_the_same_hunt_finds_the_secrets(site):
    """The control: with nothing between them, the agent reads the worker's environment
    and the site's files. (Its own environment is clean on every level.)"""
    outcome, found = hunt(site, "none", "unconfined")
    assert outcome["outcome"] == "completed", outcome
    where = [hit["where"] for hit in found["hits"]]
    assert not any(w.startswith("own ") for w in where), where
    texts = " ".join(hit["text"] for hit in ours(site, found))
    for planted in ("env-llm-key", "env-secret-key", "env-database", "file-secret-key"):
        assert planted in texts, (planted, where)
    assert "Use the docker backend" in outcome["confinement"]
