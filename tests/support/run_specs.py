"""Run specs that run a line of Python, for the Docker and the local backend."""

from __future__ import annotations

import sys

from runner import Resources, RunSpec
from tests.support.runner_demo import COMPETITION

# A small run: what the Docker backend confines it to; the local backend confines nothing.
DOCKER_SMALL = Resources(cpus=1, memory=256 * 1024**2, shm=16 * 1024**2, gpus=0, pids=128)
LOCAL_SMALL = Resources(cpus=1, memory=None, shm=None, gpus=0, pids=None)


def docker_spec(image: str, code: str, **overrides) -> RunSpec:
    fields = {
        "image": image,
        "command": ("python3", "-c", code),
        "competition_id": COMPETITION,
        "resources": DOCKER_SMALL,
        "time_limit_s": 60,
    }
    fields.update(overrides)
    return RunSpec(**fields)


def local_spec(code: str, **overrides) -> RunSpec:
    fields = {
        "image": "unused",
        "command": (sys.executable, "-c", code),
        "competition_id": COMPETITION,
        "resources": LOCAL_SMALL,
        "time_limit_s": 30,
    }
    fields.update(overrides)
    return RunSpec(**fields)
