from __future__ import annotations

import pytest
import yaml

from tests.support.synthetic import REPO_ROOT


@pytest.fixture(scope="session")
def catalogue_entries() -> list[dict]:
    """The project's catalogue entries, read straight from the YAML (no benchmark import)."""
    path = REPO_ROOT / "benchmark" / "data" / "competitions.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def catalogue_by_id(catalogue_entries) -> dict[str, dict]:
    return {entry["id"]: entry for entry in catalogue_entries}
