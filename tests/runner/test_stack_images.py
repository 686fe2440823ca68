"""The images compose.yaml runs where no registry can be reached (``runner.stack_images``):
tags that follow what the images are made of, the variables that make compose use them,
and entry points that start PostgreSQL and Redis as the official images do. Built and run
by tests/stack/."""

import shutil
import subprocess
from pathlib import Path

from runner.images import base_image_ref
from runner.stack_images import (
    ENTRYPOINTS,
    compose_variables,
    postgres_recipe,
    redis_recipe,
    site_base_recipe,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


def checkout_with(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of this checkout's pyproject.toml with ``old`` replaced by ``new``."""
    text = (REPO_ROOT / "pyproject.toml").read_text()
    assert old in text
    tmp_path.mkdir()
    (tmp_path / "pyproject.toml").write_text(text.replace(old, new))
    return tmp_path


def test_the_site_base_follows_the_projects_dependencies(tmp_path):
    ref = site_base_recipe(REPO_ROOT).ref
    assert ref.startswith("mleboard/site-base:")
    assert site_base_recipe(REPO_ROOT).ref == ref
    bumped = checkout_with(tmp_path / "a", '"Django==5.2.19"', '"Django==5.2.18"')
    assert site_base_recipe(bumped).ref != ref
    backend = checkout_with(tmp_path / "b", '"setuptools>=69"', '"setuptools>=70"')
    assert site_base_recipe(backend).ref != ref
    # The services' images do not depend on the project's dependencies.
    assert compose_variables(bumped)["MLEBOARD_POSTGRES_IMAGE"] == postgres_recipe().ref
    assert compose_variables(bumped)["MLEBOARD_REDIS_IMAGE"] == redis_recipe().ref


def test_compose_variables_name_one_base_for_both_stages_of_the_dockerfile():
    variables = compose_variables(REPO_ROOT)
    assert variables == {
        "MLEBOARD_BASE_IMAGE": site_base_recipe(REPO_ROOT).ref,
        "MLEBOARD_JS_IMAGE": site_base_recipe(REPO_ROOT).ref,
        "MLEBOARD_POSTGRES_IMAGE": postgres_recipe().ref,
        "MLEBOARD_REDIS_IMAGE": redis_recipe().ref,
    }
    compose = (REPO_ROOT / "compose.yaml").read_text()
    for name in variables:
        assert "${" + name + ":-" in compose, name
    # The agents' base is its own image, its tag unchanged by the stack's recipes.
    assert base_image_ref() not in variables.values()


def test_the_site_base_pip_installs_from_its_own_wheels_only():
    changes = site_base_recipe(REPO_ROOT).changes
    assert "ENV PIP_NO_INDEX=1" in changes
    assert any(c.startswith("ENV PATH=/opt/venv/bin:") for c in changes)
    assert "ENV PIP_FIND_LINKS=/opt/build-wheels" in changes


def test_the_entry_points_are_sound_shell():
    for script in sorted(ENTRYPOINTS.glob("*.sh")):
        done = subprocess.run(["sh", "-n", str(script)], capture_output=True, text=True)
        assert done.returncode == 0, (script.name, done.stderr)
        assert script.stat().st_mode & 0o111, f"{script.name} is not executable"


def test_the_entry_point_script_is_part_of_the_recipe(tmp_path, monkeypatch):
    import runner.stack_images as stack_images

    ref, redis = postgres_recipe().ref, redis_recipe().ref
    copy = tmp_path / "stack"
    shutil.copytree(ENTRYPOINTS, copy)
    (copy / "postgres-entrypoint.sh").write_text(
        (copy / "postgres-entrypoint.sh").read_text() + "\n# changed\n"
    )
    monkeypatch.setattr(stack_images, "ENTRYPOINTS", copy)
    assert postgres_recipe().ref != ref
    assert redis_recipe().ref == redis
