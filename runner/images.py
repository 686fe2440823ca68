"""Build mleboard's images without any registry.

The base image is a Debian root filesystem made by ``debootstrap`` and imported into the
engine; each agent's image is its ``Dockerfile`` built ``FROM`` it with no network, its
pinned wheels copied from the host's wheelhouse (``$MLEBOARD_WHEELHOUSE``). Tags are
content hashes (``mleboard/base:<hash>``, also ``latest``; ``mleboard/agent-<name>:<hash>``),
so a second call is a no-op. Building the base needs root (debootstrap, chroot). A
``RootfsRecipe`` says what such an image is made of; ``runner.stack_images`` has the recipes
of the images compose.yaml runs. Details: docs/agents.md.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config import env
from runner.agent_definition import AgentDefinition
from runner.backend import HarnessError
from runner.spec import OUTPUT_DIRS

BASE_REPOSITORY = "mleboard/base"
DEBIAN_SUITE = "bookworm"
# Besides these, the Docker backend runs coreutils' ``sleep`` (the container's watchdog),
# util-linux's ``setpriv`` (to start the agent with no capabilities) and ``sh``: all in
# Debian's essential set, which debootstrap always installs.
BASE_PACKAGES = ("python3", "python3-numpy", "python3-pandas", "python3-sklearn")
AGENT_UID = 1000
# Bump when the steps below change in a way the hash of the constants cannot see.
BASE_RECIPE_VERSION = "1"

Progress = Callable[[str], None]

# The agents' wheelhouse on the host, and the interpreter the base image has (Debian
# bookworm: CPython 3.11, glibc 2.36).
WHEELHOUSE_ENV = "MLEBOARD_WHEELHOUSE"
IMAGE_PYTHON = "3.11.2"  # Debian bookworm's: Requires-Python is checked against it
IMAGE_ABI = "cp311"
# glibc 2.36 runs every older manylinux wheel; pip wants each tag named.
IMAGE_PLATFORMS = (
    *(f"manylinux_2_{minor}_x86_64" for minor in range(36, 4, -1)),
    "manylinux2014_x86_64",
    "manylinux2010_x86_64",
    "manylinux1_x86_64",
)
_PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.!+_-]+)")


@dataclass(frozen=True)
class BuiltImage:
    """An image ``ref`` and whether this call built it (``False``: it was already there)."""

    ref: str
    built: bool
    seconds: float = 0.0


@dataclass(frozen=True)
class RootfsRecipe:
    """An image made from Debian's packages with no registry: debootstrap's minimal base
    plus ``packages``, changed by ``customise`` (given the root filesystem's folder, run as
    root), imported into the engine as ``repository:<hash of key>`` with the Dockerfile
    instructions ``changes``. ``key`` names everything the result depends on."""

    repository: str
    packages: tuple[str, ...]
    key: str
    customise: Callable[[Path], None]
    changes: tuple[str, ...]

    @property
    def ref(self) -> str:
        return f"{self.repository}:{hashlib.sha256(self.key.encode()).hexdigest()[:12]}"


def agent_base_recipe() -> RootfsRecipe:
    """The agents' base image: Python 3 with numpy, pandas and scikit-learn, a non-root
    ``agent`` user and the MLE-bench ``/home`` layout."""
    return RootfsRecipe(
        repository=BASE_REPOSITORY,
        packages=BASE_PACKAGES,
        key="|".join([BASE_RECIPE_VERSION, DEBIAN_SUITE, ",".join(BASE_PACKAGES), str(AGENT_UID)]),
        customise=_customise_rootfs,
        changes=(
            "ENV LANG=C.UTF-8",
            "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "ENV PYTHONUNBUFFERED=1",
            "WORKDIR /home",
            'CMD ["/bin/bash"]',
        ),
    )


def base_image_ref() -> str:
    """The base image's tag for the current recipe (no engine needed)."""
    return agent_base_recipe().ref


def agent_image_ref(agent: AgentDefinition) -> str:
    """The agent's image tag: a hash of the base tag and every file in the agent's folder."""
    digest = hashlib.sha256(base_image_ref().encode())
    for path in sorted(p for p in agent.directory.rglob("*") if p.is_file()):
        if "__pycache__" in path.parts:
            continue
        digest.update(str(path.relative_to(agent.directory)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return f"mleboard/agent-{agent.name}:{digest.hexdigest()[:12]}"


def wheelhouse_root() -> Path:
    """Where downloaded wheels are kept: ``$MLEBOARD_WHEELHOUSE`` or the user's cache."""
    return env(WHEELHOUSE_ENV)


def read_pins(path: Path) -> list[str]:
    """The ``name==version`` lines of a requirements file (comments and blanks skipped).
    Raises ``HarnessError`` on any other line: a lock has exact pins only."""
    pins = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if not _PIN.fullmatch(line):
            raise HarnessError(f"{path}:{number}: not an exact pin (name==version): {line!r}")
        pins.append(line)
    return pins


def pip_download(
    pins: list[str], target: Path, *, deps: bool = False
) -> subprocess.CompletedProcess:
    """``pip download`` of wheels for the image's Python; ``deps``: with what they require
    (resolved by pip, the wheels already in ``target`` included), else exactly ``pins``."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--disable-pip-version-check",
        *(["--find-links", str(target)] if deps else ["--no-deps"]),
        "--only-binary=:all:",
        "--python-version",
        IMAGE_PYTHON,
        "--implementation",
        "cp",
        *(arg for abi in (IMAGE_ABI, "abi3", "none") for arg in ("--abi", abi)),
        *(arg for platform in IMAGE_PLATFORMS for arg in ("--platform", platform)),
        "--dest",
        str(target),
        *pins,
    ]
    return subprocess.run(command, capture_output=True, text=True)


def _pip_wheel(pin: str, target: Path) -> subprocess.CompletedProcess:
    """A wheel built from the pin's sdist by the host's pip (pure Python only: checked)."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--no-binary=:all:",
        "--wheel-dir",
        str(target),
        pin,
    ]
    return subprocess.run(command, capture_output=True, text=True)


def _build_pure_wheel(pin: str, target: Path, source: str) -> None:
    """A wheel for ``pin`` built from its sdist by the host's pip; it must be pure Python.
    ``source`` names what asked for it, for the error."""
    before = set(target.glob("*.whl"))
    built = _pip_wheel(pin, target)
    made = set(target.glob("*.whl")) - before
    if built.returncode != 0 or not made:
        tail = (built.stdout + built.stderr)[-1500:]
        raise HarnessError(f"no wheel for {pin} ({source}):\n{tail}")
    if not all(w.name.endswith("-none-any.whl") for w in made):
        names = ", ".join(sorted(w.name for w in made))
        raise HarnessError(
            f"{pin} has no wheel for Python {IMAGE_PYTHON} on {IMAGE_PLATFORMS[0]} and its "
            f"sdist builds a platform wheel here ({names}): pin another version"
        )


def fetch_wheels(agent: AgentDefinition, progress: Progress | None = None) -> Path | None:
    """The folder of the wheels ``agent.wheels`` pins, downloaded into the wheelhouse on the
    first call (``None`` for an agent without one). Raises ``HarnessError`` if a pin has
    no wheel for the image and no pure-Python sdist."""
    if not agent.wheels:
        return None
    pins = read_pins(agent.directory / agent.wheels)
    return download_wheels(
        pins, agent.name, f"{agent.name}'s {agent.wheels}", deps=False, progress=progress
    )


def download_wheels(
    requirements: list[str],
    name: str,
    source: str,
    *,
    deps: bool,
    progress: Progress | None = None,
) -> Path:
    """The folder of wheels for ``requirements`` (and, with ``deps``, all they require),
    for the image's Python, downloaded into the wheelhouse as ``name-<hash>`` on the first
    call and kept. A requirement with no such wheel is built from its sdist here, which
    must be pure Python. Raises ``HarnessError`` naming ``source`` otherwise."""
    say = progress or (lambda _msg: None)
    parts = [IMAGE_PYTHON, IMAGE_ABI, *IMAGE_PLATFORMS, *sorted(requirements)]
    if deps:
        parts.append("with their dependencies")
    key = hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
    folder = wheelhouse_root() / f"{name}-{key}"
    if (folder / ".complete").is_file():
        return folder
    say(f"downloading wheels for {source} into {folder}")
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    remaining = list(requirements)
    built: set[str] = set()
    while remaining:
        done = pip_download(remaining, partial, deps=deps)
        if done.returncode == 0:
            break
        # A requirement with no wheel for the image: build it from its sdist here, then go
        # on (without ``deps`` it leaves the list; with them pip finds it in the folder).
        missing = re.search(r"No matching distribution found for (\S+)", done.stderr)
        pin = missing.group(1) if missing else ""
        if not pin or pin in built or (not deps and pin not in remaining):
            tail = "\n".join(line for line in done.stderr.splitlines() if "is ignored" not in line)[
                -1500:
            ]
            raise HarnessError(f"pip download for {source} failed:\n{tail}")
        if not deps:
            remaining.remove(pin)
        built.add(pin)
        _build_pure_wheel(pin, partial, source)
    (partial / ".complete").write_text("\n".join(requirements) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


def image_exists(client: Any, ref: str) -> bool:
    import docker.errors

    try:
        client.images.get(ref)
        return True
    except docker.errors.ImageNotFound:
        return False


def build_base_image(
    client: Any,
    *,
    mirror: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> BuiltImage:
    """Build (or find) the agents' base image. Raises ``HarnessError`` if debootstrap fails.

    ``mirror`` defaults to ``$MLEBOARD_DEBIAN_MIRROR`` or Debian's own.
    """
    return build_rootfs_image(
        client, agent_base_recipe(), mirror=mirror, force=force, progress=progress
    )


def build_rootfs_image(
    client: Any,
    recipe: RootfsRecipe,
    *,
    mirror: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> BuiltImage:
    """Build (or find) ``recipe``'s image, also tagged ``latest``. Needs root (debootstrap,
    chroot). Raises ``HarnessError`` if a step fails."""
    import time

    ref = recipe.ref
    say = progress or (lambda _msg: None)
    if not force and image_exists(client, ref):
        client.images.get(ref).tag(recipe.repository, "latest")
        return BuiltImage(ref, built=False)
    if shutil.which("debootstrap") is None and not Path("/usr/sbin/debootstrap").exists():
        raise HarnessError("debootstrap is not installed (apt-get install debootstrap)")
    started = time.monotonic()
    mirror = mirror or env("MLEBOARD_DEBIAN_MIRROR")
    with tempfile.TemporaryDirectory(prefix="mleboard-rootfs-", dir="/var/tmp") as tmp:
        rootfs = Path(tmp) / "rootfs"
        say(f"debootstrap {DEBIAN_SUITE} ({', '.join(recipe.packages)}) from {mirror}")
        run_step(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(recipe.packages)}",
                DEBIAN_SUITE,
                str(rootfs),
                mirror,
            ],
            "debootstrap",
        )
        recipe.customise(rootfs)
        say(f"importing the root filesystem as {ref}")
        _import_rootfs(client, rootfs, ref, recipe.changes)
    client.images.get(ref).tag(recipe.repository, "latest")
    return BuiltImage(ref, built=True, seconds=time.monotonic() - started)


def _customise_rootfs(rootfs: Path) -> None:
    """Add the non-root user and the MLE-bench ``/home`` layout; drop package caches."""
    run_step(
        [
            "chroot",
            str(rootfs),
            "useradd",
            "--uid",
            str(AGENT_UID),
            "--user-group",
            "--create-home",
            "--home-dir",
            "/home/agent",
            "--shell",
            "/bin/bash",
            "agent",
        ],
        "useradd",
    )
    for name in ("data", *OUTPUT_DIRS, "validation"):
        (rootfs / "home" / name).mkdir(exist_ok=True)
    for name in OUTPUT_DIRS:
        os.chown(rootfs / "home" / name, AGENT_UID, AGENT_UID)
    drop_package_caches(rootfs)


def drop_package_caches(rootfs: Path) -> None:
    """Remove the downloaded packages and package lists debootstrap leaves behind."""
    for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for path in (rootfs / cache).glob("*"):
            if path.is_file() and path.name != "lock":
                path.unlink()


def _import_rootfs(client: Any, rootfs: Path, ref: str, changes: tuple[str, ...]) -> None:
    repository, tag = ref.rsplit(":", 1)
    with tempfile.TemporaryFile() as errors:
        tar = subprocess.Popen(
            ["tar", "--numeric-owner", "-C", str(rootfs), "-c", "."],
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        try:
            client.api.import_image(
                src=tar.stdout, repository=repository, tag=tag, changes=list(changes)
            )
        finally:
            if tar.stdout:
                tar.stdout.close()
            # The engine's refusal, if any, is the error raised: tar then ends on a closed pipe.
            code = tar.wait()
        if code != 0:
            errors.seek(0)
            raise HarnessError(f"tar of the root filesystem failed: {errors.read()[-1000:]!r}")


def build_agent_image(
    client: Any,
    agent: AgentDefinition,
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> BuiltImage:
    """Build (or find) ``agent``'s image ``FROM`` the base image (which must exist).

    The build runs with no network unless the agent declares ``build_network: true``.
    Raises ``HarnessError`` with the build's last output lines if it fails.
    """
    import time

    ref = agent_image_ref(agent)
    if not force and image_exists(client, ref):
        return BuiltImage(ref, built=False)
    base = base_image_ref()
    if not image_exists(client, base):
        raise HarnessError(f"base image {base} missing: build it first (`mleboard images`)")
    say = progress or (lambda _msg: None)
    started = time.monotonic()
    wheels = fetch_wheels(agent, progress)
    say(f"building {ref} from {agent.directory}")
    with tempfile.TemporaryDirectory(prefix="mleboard-build-") as tmp:
        context = agent.directory
        if wheels is not None:
            # The build context: the agent's folder plus the wheels, so nothing is fetched.
            context = Path(tmp) / "context"
            shutil.copytree(agent.directory, context, ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copytree(wheels, context / "wheels", ignore=shutil.ignore_patterns(".complete"))
        _build(client, agent, context, ref, base)
    return BuiltImage(ref, built=True, seconds=time.monotonic() - started)


def _build(client: Any, agent: AgentDefinition, context: Path, ref: str, base: str) -> None:
    import docker.errors

    kwargs: dict[str, Any] = {
        "path": str(context),
        "tag": ref,
        "buildargs": {"BASE_IMAGE": base},
        "rm": True,
        "forcerm": True,
        "pull": False,
    }
    if not agent.build_network:
        kwargs["network_mode"] = "none"
    try:
        client.images.build(**kwargs)
    except docker.errors.BuildError as exc:
        lines = [str(chunk.get("stream", chunk.get("error", ""))) for chunk in exc.build_log]
        tail = "".join(lines)[-2000:]
        raise HarnessError(f"building {agent.name}'s image failed: {exc.msg}\n{tail}") from exc


def build_images(
    client: Any,
    agents: list[AgentDefinition],
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> list[BuiltImage]:
    """Build the base image then each agent's; return them in that order."""
    built = [build_base_image(client, force=force, progress=progress)]
    for agent in agents:
        built.append(build_agent_image(client, agent, force=force, progress=progress))
    return built


def run_step(command: list[str], what: str, env: dict[str, str] | None = None) -> None:
    """Run ``command`` (in ``env``, default this process's); ``HarnessError`` with its
    last output lines if it fails."""
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-2000:]
        raise HarnessError(f"{what} failed (exit {proc.returncode}):\n{tail}")
