"""Build mleboard's images without any registry.

The base image is a Debian root filesystem made by ``debootstrap`` from Debian's packages
(Python 3 with numpy, pandas and scikit-learn, a non-root ``agent`` user, the ``/home``
layout) and imported into the engine. Each agent's image is its ``Dockerfile`` built
``FROM`` that base (passed as the ``BASE_IMAGE`` build argument) with no network, unless
the agent says its build needs a package index.

Tags are content hashes, so a rebuild happens only when the recipe or the agent's files
change and a second call is a no-op: ``mleboard/base:<hash>`` (also tagged ``latest``) and
``mleboard/agent-<name>:<hash>``. Building the base needs root (debootstrap, chroot).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.agent_definition import AgentDefinition
from runner.backend import HarnessError

BASE_REPOSITORY = "mleboard/base"
DEBIAN_SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
# Besides these, the Docker backend runs coreutils' ``sleep`` (the container's watchdog),
# util-linux's ``setpriv`` (to start the agent with no capabilities) and ``sh``: all in
# Debian's essential set, which debootstrap always installs.
BASE_PACKAGES = ("python3", "python3-numpy", "python3-pandas", "python3-sklearn")
AGENT_UID = 1000
# Bump when the steps below change in a way the hash of the constants cannot see.
BASE_RECIPE_VERSION = "1"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class BuiltImage:
    """An image ``ref`` and whether this call built it (``False``: it was already there)."""

    ref: str
    built: bool
    seconds: float = 0.0


def base_image_ref() -> str:
    """The base image's tag for the current recipe (no engine needed)."""
    recipe = "|".join([BASE_RECIPE_VERSION, DEBIAN_SUITE, ",".join(BASE_PACKAGES), str(AGENT_UID)])
    return f"{BASE_REPOSITORY}:{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"


def agent_image_ref(agent: AgentDefinition) -> str:
    """The agent's image tag: a hash of the base tag and every file in the agent's folder."""
    digest = hashlib.sha256(base_image_ref().encode())
    for path in sorted(p for p in agent.directory.rglob("*") if p.is_file()):
        if "__pycache__" in path.parts:
            continue
        digest.update(str(path.relative_to(agent.directory)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return f"mleboard/agent-{agent.name}:{digest.hexdigest()[:12]}"


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
    """Build (or find) the base image. Raises ``HarnessError`` if debootstrap fails.

    ``mirror`` defaults to ``$MLEBOARD_DEBIAN_MIRROR`` or Debian's own.
    """
    import time

    ref = base_image_ref()
    say = progress or (lambda _msg: None)
    if not force and image_exists(client, ref):
        client.images.get(ref).tag(BASE_REPOSITORY, "latest")
        return BuiltImage(ref, built=False)
    if shutil.which("debootstrap") is None and not Path("/usr/sbin/debootstrap").exists():
        raise HarnessError("debootstrap is not installed (apt-get install debootstrap)")
    started = time.monotonic()
    mirror = mirror or os.environ.get("MLEBOARD_DEBIAN_MIRROR", DEFAULT_MIRROR)
    with tempfile.TemporaryDirectory(prefix="mleboard-rootfs-", dir="/var/tmp") as tmp:
        rootfs = Path(tmp) / "rootfs"
        say(f"debootstrap {DEBIAN_SUITE} ({', '.join(BASE_PACKAGES)}) from {mirror}")
        _run(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(BASE_PACKAGES)}",
                DEBIAN_SUITE,
                str(rootfs),
                mirror,
            ],
            "debootstrap",
        )
        _customise_rootfs(rootfs)
        say(f"importing the root filesystem as {ref}")
        _import_rootfs(client, rootfs, ref)
    client.images.get(ref).tag(BASE_REPOSITORY, "latest")
    return BuiltImage(ref, built=True, seconds=time.monotonic() - started)


def _customise_rootfs(rootfs: Path) -> None:
    """Add the non-root user and the MLE-bench ``/home`` layout; drop package caches."""
    _run(
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
    for name in ("data", "submission", "logs", "code", "validation"):
        (rootfs / "home" / name).mkdir(exist_ok=True)
    for name in ("submission", "logs", "code"):
        os.chown(rootfs / "home" / name, AGENT_UID, AGENT_UID)
    for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for path in (rootfs / cache).glob("*"):
            if path.is_file() and path.name != "lock":
                path.unlink()


def _import_rootfs(client: Any, rootfs: Path, ref: str) -> None:
    repository, tag = ref.rsplit(":", 1)
    changes = [
        "ENV LANG=C.UTF-8",
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "ENV PYTHONUNBUFFERED=1",
        "WORKDIR /home",
        'CMD ["/bin/bash"]',
    ]
    tar = subprocess.Popen(
        ["tar", "--numeric-owner", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE
    )
    try:
        client.api.import_image(src=tar.stdout, repository=repository, tag=tag, changes=changes)
    finally:
        if tar.stdout:
            tar.stdout.close()
        if tar.wait() != 0:
            raise HarnessError("tar of the base root filesystem failed")


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

    import docker.errors

    ref = agent_image_ref(agent)
    if not force and image_exists(client, ref):
        return BuiltImage(ref, built=False)
    base = base_image_ref()
    if not image_exists(client, base):
        raise HarnessError(f"base image {base} missing: build it first (`mleboard images`)")
    say = progress or (lambda _msg: None)
    say(f"building {ref} from {agent.directory}")
    started = time.monotonic()
    kwargs: dict[str, Any] = {
        "path": str(agent.directory),
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
    return BuiltImage(ref, built=True, seconds=time.monotonic() - started)


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


def _run(command: list[str], what: str) -> None:
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-2000:]
        raise HarnessError(f"{what} failed (exit {proc.returncode}):\n{tail}")
