"""Fixtures for the runner's tests: a tiny prepared competition, the real Docker engine,
and images built once per session (cached by content tag, so reruns skip the build)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from runner.agent_definition import find_agent
from tests.support.runner_demo import (
    COMPETITION,
    write_breast_cancer,
)


@pytest.fixture(scope="session")
def demo_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A prepared-data root holding demo-breast-cancer (answers included)."""
    return write_breast_cancer(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="session")
def canary() -> str:
    return f"MLEBOARD-CANARY-{uuid.uuid4().hex}"


@pytest.fixture(scope="session")
def canary_data(tmp_path_factory: pytest.TempPathFactory, canary: str) -> Path:
    """Like ``demo_data`` but the private answers hold a canary string."""
    return write_breast_cancer(tmp_path_factory.mktemp("canary-data"), canary=canary)


@pytest.fixture(scope="session")
def docker_client():
    """The real engine. Missing engine = failure (not a skip): these tests must run in CI."""
    import docker

    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any way of "no engine" fails the same
        pytest.fail(f"Docker engine not reachable ({exc}); start it with scripts/docker-up.sh")
    return client


@pytest.fixture(scope="session")
def base_image(docker_client) -> str:
    """The base image (debootstrap + import; a no-op when the tag exists already)."""
    from runner.images import build_base_image

    return build_base_image(docker_client).ref


@pytest.fixture(scope="session")
def agent_images(docker_client, base_image) -> dict[str, str]:
    """The dummy and baseline agents' images, built from their folders."""
    from runner.images import build_agent_image

    return {
        name: build_agent_image(docker_client, find_agent(name)).ref
        for name in ("dummy", "baseline")
    }


@pytest.fixture
def no_leftover_containers(docker_client):
    """Asserts after the test that it left no run container of its competition on the
    engine (others' runs on a shared engine, started before it, for other competitions or
    by another ``$MLEBOARD_INSTANCE``, such as another test process's, are not its
    business and are left alone)."""
    from runner.reaper import LABEL_COMPETITION, own_containers_filter

    def ours() -> dict[str, object]:
        found = docker_client.containers.list(
            all=True, filters=own_containers_filter({LABEL_COMPETITION: COMPETITION})
        )
        return {c.id: c for c in found}

    before = set(ours())
    yield
    left = [c for cid, c in ours().items() if cid not in before]
    names = [c.name for c in left]
    for container in left:
        container.remove(force=True)
    assert not names, f"containers left behind: {names}"


@pytest.fixture
def copy_agent(tmp_path: Path):
    """Copy a shipped agent's folder (to edit it in a test without touching the original)."""

    def copy(name: str) -> Path:
        target = tmp_path / f"agent-{name}"
        shutil.copytree(find_agent(name).directory, target)
        return target

    return copy
