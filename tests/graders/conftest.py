from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.graders.synthetic import REPO_ROOT


@pytest.fixture(scope="session")
def shared_mlebench() -> Path:
    """The shared MLE-bench material (facts, checkout without LFS files)."""
    default = REPO_ROOT.parent / "shared" / "mlebench"
    return Path(os.environ.get("MLEBOARD_SHARED_MLEBENCH", default))


@pytest.fixture(scope="session")
def catalogue_entries() -> list[dict]:
    """The project's catalogue entries, read straight from the YAML (no benchmark import)."""
    path = REPO_ROOT / "benchmark" / "data" / "competitions.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def catalogue_by_id(catalogue_entries) -> dict[str, dict]:
    return {entry["id"]: entry for entry in catalogue_entries}
