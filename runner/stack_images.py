"""The images compose.yaml runs, made from Debian's packages where no registry can be reached:
the site's base (Debian's Python 3.11 with a virtualenv holding every dependency in
pyproject.toml), PostgreSQL 15 and Redis 7. Each is a ``RootfsRecipe`` built as the agents'
base is (``runner.images``: debootstrap, then imported into the engine), tagged by a hash of
what it is made of.

The site's own image is still the ``Dockerfile``, built ``FROM`` the base named by its
``BASE_IMAGE`` argument. This base's pip installs from its own wheels only (``PIP_NO_INDEX``,
``PIP_FIND_LINKS`` with the build backend's wheels), so the build needs no network;
``compose_variables`` names what compose.yaml reads to use these images.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runner.backend import HarnessError
from runner.images import (
    DEBIAN_SUITE,
    BuiltImage,
    Progress,
    RootfsRecipe,
    build_rootfs_image,
    download_wheels,
    drop_package_caches,
    pip_download,
    run_step,
)

# Bump when a step below changes in a way the recipe keys cannot see.
STACK_RECIPE_VERSION = "1"
SITE_BASE_REPOSITORY = "mleboard/site-base"
POSTGRES_REPOSITORY = "mleboard/postgres"
REDIS_REPOSITORY = "mleboard/redis"
SITE_PACKAGES = ("python3", "python3-venv", "ca-certificates", "netbase", "tzdata")
POSTGRES_MAJOR = "15"
VENV = "/opt/venv"
# The build backend's wheels, for pip's isolated build of the project in the Dockerfile.
BUILD_WHEELS = "/opt/build-wheels"
ENTRYPOINTS = Path(__file__).resolve().parent / "stack"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Commands in the root filesystem see none of this host's settings (its pip's index, its
# certificates).
CHROOT_ENV = {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8", "HOME": "/root"}


def project_requirements(source: Path) -> tuple[list[str], list[str]]:
    """The project's dependencies and its build backend's requirements, from
    ``source/pyproject.toml`` (the checkout the Dockerfile builds)."""
    project = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    return list(project["project"]["dependencies"]), list(project["build-system"]["requires"])


def _recipe(
    repository: str,
    packages: tuple[str, ...],
    customise: Callable[[Path], None],
    changes: tuple[str, ...],
    *made_of: str,
) -> RootfsRecipe:
    """A recipe whose tag hashes its packages, its image settings and ``made_of``."""
    key = "|".join([STACK_RECIPE_VERSION, DEBIAN_SUITE, *packages, *changes, *made_of])
    return RootfsRecipe(repository, packages, key, customise, changes)


def _slim(rootfs: Path) -> None:
    """Drop what no service reads: package caches, documentation, manuals, translations."""
    drop_package_caches(rootfs)
    for folder in ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale"):
        for path in (rootfs / folder).glob("*"):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


def _install_entrypoint(rootfs: Path, name: str) -> None:
    target = rootfs / "usr/local/bin/docker-entrypoint.sh"
    shutil.copyfile(ENTRYPOINTS / name, target)
    target.chmod(0o755)


def _install_from(rootfs: Path, staged: Path, wheels: Path, requirements: list[str]) -> None:
    """pip install ``requirements`` into the virtualenv from the wheels ``staged`` in the
    root filesystem only. A requirement pip on this host did not see needed (its marker
    reads the interpreter: Debian's Python 3.11.2 is older than this host's) is downloaded
    into ``wheels`` then, and the install tried again."""
    install = ["chroot", str(rootfs), f"{VENV}/bin/pip", "install", "--quiet", "--no-cache-dir"]
    install += ["--no-index", "--find-links", "/tmp/wheels", *requirements]
    fetched: set[str] = set()
    while True:
        done = subprocess.run(install, capture_output=True, text=True, env=CHROOT_ENV)
        if done.returncode == 0:
            return
        missing = re.search(r"No matching distribution found for ([^;\s]+)", done.stderr)
        if not missing or missing.group(1) in fetched:
            raise HarnessError(f"pip install in the site's base failed:\n{done.stderr[-2000:]}")
        fetched.add(missing.group(1))
        got = pip_download([missing.group(1)], wheels, deps=True)
        if got.returncode != 0:
            raise HarnessError(f"pip download {missing.group(1)} failed:\n{got.stderr[-2000:]}")
        shutil.copytree(
            wheels, staged, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".complete")
        )


def site_base_recipe(source: Path, progress: Progress | None = None) -> RootfsRecipe:
    """Debian's Python 3.11 with a virtualenv at ``VENV`` (first on ``PATH``) holding the
    project's dependencies, installed from wheels downloaded on this host."""
    requirements, build_requirements = project_requirements(source)

    def customise(rootfs: Path) -> None:
        wheels = download_wheels(
            requirements + build_requirements,
            "site",
            f"{source / 'pyproject.toml'}",
            deps=True,
            progress=progress,
        )
        staged = rootfs / "tmp" / "wheels"
        shutil.copytree(wheels, staged, ignore=shutil.ignore_patterns(".complete"))
        run_step(["chroot", str(rootfs), "python3", "-m", "venv", VENV], "venv", CHROOT_ENV)
        _install_from(rootfs, staged, wheels, requirements)
        kept = rootfs / BUILD_WHEELS.lstrip("/")
        kept.mkdir(parents=True)
        for requirement in build_requirements:
            name = re.match(r"[A-Za-z0-9._-]+", requirement)
            stem = re.sub(r"[-_.]+", "_", name.group(0)).lower() if name else ""
            for wheel in staged.glob("*.whl"):
                if wheel.name.lower().startswith(stem + "-"):
                    shutil.copy2(wheel, kept / wheel.name)
        shutil.rmtree(staged)
        _slim(rootfs)

    return _recipe(
        SITE_BASE_REPOSITORY,
        SITE_PACKAGES,
        customise,
        (
            "ENV LANG=C.UTF-8",
            f"ENV VIRTUAL_ENV={VENV}",
            f"ENV PATH={VENV}/bin:{SYSTEM_PATH}",
            "ENV PIP_NO_INDEX=1",
            f"ENV PIP_FIND_LINKS={BUILD_WHEELS}",
            'CMD ["python3"]',
        ),
        *sorted(requirements),
        *build_requirements,
    )


def postgres_recipe() -> RootfsRecipe:
    """PostgreSQL 15 from Debian's packages, started as the official image starts it
    (``stack/postgres-entrypoint.sh``): ``POSTGRES_USER``, ``POSTGRES_PASSWORD``,
    ``POSTGRES_DB``, data in ``/var/lib/postgresql/data``."""
    entrypoint = (ENTRYPOINTS / "postgres-entrypoint.sh").read_text(encoding="utf-8")
    package = f"postgresql-{POSTGRES_MAJOR}"

    def customise(rootfs: Path) -> None:
        # The cluster Debian's package makes on installation: the entry point makes its own.
        for made in (f"var/lib/postgresql/{POSTGRES_MAJOR}", f"etc/postgresql/{POSTGRES_MAJOR}"):
            shutil.rmtree(rootfs / made, ignore_errors=True)
        (rootfs / "var/lib/postgresql/data").mkdir(parents=True, exist_ok=True)
        run_step(
            ["chroot", str(rootfs), "chown", "postgres:postgres", "/var/lib/postgresql/data"],
            "chown",
            CHROOT_ENV,
        )
        _install_entrypoint(rootfs, "postgres-entrypoint.sh")
        _slim(rootfs)

    return _recipe(
        POSTGRES_REPOSITORY,
        (package,),
        customise,
        (
            "ENV LANG=C.UTF-8",
            f"ENV PATH=/usr/lib/postgresql/{POSTGRES_MAJOR}/bin:{SYSTEM_PATH}",
            "ENV PGDATA=/var/lib/postgresql/data",
            'ENTRYPOINT ["docker-entrypoint.sh"]',
            'CMD ["postgres"]',
            "EXPOSE 5432",
        ),
        entrypoint,
    )


def redis_recipe() -> RootfsRecipe:
    """Redis 7 from Debian's packages, started as the official image starts it
    (``stack/redis-entrypoint.sh``): as the redis user, its data in ``/data``."""
    entrypoint = (ENTRYPOINTS / "redis-entrypoint.sh").read_text(encoding="utf-8")

    def customise(rootfs: Path) -> None:
        (rootfs / "data").mkdir(exist_ok=True)
        run_step(["chroot", str(rootfs), "chown", "redis:redis", "/data"], "chown", CHROOT_ENV)
        _install_entrypoint(rootfs, "redis-entrypoint.sh")
        _slim(rootfs)

    return _recipe(
        REDIS_REPOSITORY,
        ("redis-server",),
        customise,
        (
            "ENV LANG=C.UTF-8",
            "WORKDIR /data",
            'ENTRYPOINT ["docker-entrypoint.sh"]',
            'CMD ["redis-server"]',
            "EXPOSE 6379",
        ),
        entrypoint,
    )


def stack_recipes(source: Path, progress: Progress | None = None) -> dict[str, RootfsRecipe]:
    """Each compose variable naming an image and the recipe that makes it."""
    site = site_base_recipe(source, progress)
    return {
        "MLEBOARD_BASE_IMAGE": site,
        "MLEBOARD_POSTGRES_IMAGE": postgres_recipe(),
        "MLEBOARD_REDIS_IMAGE": redis_recipe(),
    }


def compose_variables(source: Path) -> dict[str, str]:
    """What compose.yaml reads to build and run from these images (no engine needed): the
    site's base for both of the Dockerfile's stages (its JavaScript stage then takes the
    bundle ``npm ci --prefix web`` installed on this host), PostgreSQL and Redis."""
    refs = {name: recipe.ref for name, recipe in stack_recipes(source).items()}
    return {**refs, "MLEBOARD_JS_IMAGE": refs["MLEBOARD_BASE_IMAGE"]}


def build_stack_images(
    client: Any,
    source: Path,
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> list[BuiltImage]:
    """Build (or find) each of the stack's images. Needs root. Raises ``HarnessError``."""
    return [
        build_rootfs_image(client, recipe, force=force, progress=progress)
        for recipe in stack_recipes(source, progress).values()
    ]
