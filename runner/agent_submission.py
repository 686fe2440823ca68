"""A submitted agent's image, built offline or refused with the reason.

A submission is a folder of the shape of ``runner/agents/*`` whose requirements file pins
every wheel by version and sha256. ``build_submitted_image`` resolves those wheels on the
host from the package index into the wheelhouse, checks their hashes, and builds the image
``FROM`` the base image with no network, as AIDE's is built. Whatever the submitter can get
wrong ends in ``AgentRefused`` (a Dockerfile not ``FROM`` the base, pins that do not
resolve or do not match, a build that tries the network, an image over the size limit)
with the image removed; an engine that fails is a ``HarnessError``. Details:
docs/reproduce.md.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.agent_definition import AgentDefinition
from runner.backend import HarnessError
from runner.images import base_image_ref, download_wheels, image_exists

Log = Callable[[str], None]

BASE_ARG = "BASE_IMAGE"
_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?\s*$", re.I)
_PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.!+_-]+)")
_HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")
# What a resolver or a socket says when there is no network: the build tried it.
_NO_NETWORK = re.compile(
    r"Temporary failure in name resolution|Name or service not known|Network is unreachable"
    r"|No address associated with hostname|Could not resolve host|Failed to establish a new "
    r"connection|NewConnectionError|No route to host|nodename nor servname|getaddrinfo",
    re.I,
)


class AgentRefused(ValueError):
    """The submitter's mistake, final: ``reason`` is a short code for programs (``dockerfile``,
    ``requirements``, ``network``, ``image_size``, ``build``), the message says what to do."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class HashedPin:
    name: str
    version: str
    hashes: tuple[str, ...]

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class SubmittedImage:
    ref: str
    size_bytes: int
    seconds: float


def check_dockerfile(text: str) -> None:
    """Refuse (``AgentRefused``) a Dockerfile whose stages do not all start ``FROM`` the
    base image the build passes (``ARG BASE_IMAGE`` then ``FROM ${BASE_IMAGE}``) or from an
    earlier stage of its own."""
    stages: set[str] = set()
    seen = False
    joined = re.sub(r"\\\n", " ", text)
    for number, line in enumerate(joined.splitlines(), 1):
        if not line.strip().upper().startswith("FROM"):
            continue
        match = _FROM.match(line)
        if not match:
            raise AgentRefused(f"Dockerfile line {number}: cannot read this FROM", "dockerfile")
        image, stage = match.group(1), match.group(2)
        if image not in (f"${BASE_ARG}", f"${{{BASE_ARG}}}") and image.lower() not in stages:
            raise AgentRefused(
                f"Dockerfile line {number}: FROM {image[:80]} is not the base image: start "
                f"every stage FROM ${{{BASE_ARG}}} (declare ARG {BASE_ARG} first) or from an "
                "earlier stage",
                "dockerfile",
            )
        if stage:
            stages.add(stage.lower())
        seen = True
    if not seen:
        raise AgentRefused(f"the Dockerfile has no FROM ${{{BASE_ARG}}}", "dockerfile")


def read_hashed_pins(text: str) -> list[HashedPin]:
    """Every requirement of a hash-pinned lock (``name==version --hash=sha256:<hex>``, one
    or more hashes, lines continued with ``\\``). Refuses any other line."""
    pins = []
    joined = re.sub(r"\\\s*\n", " ", text)
    for number, raw in enumerate(joined.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        head, *options = line.split()
        hashes = tuple(m.group(1) for o in options if (m := _HASH.fullmatch(o)))
        if not _PIN.fullmatch(head) or len(hashes) != len(options) or not hashes:
            raise AgentRefused(
                f"requirements line {number}: {line[:120]!r} is not an exact, hash-pinned "
                "requirement (name==version --hash=sha256:<64 hex digits>)",
                "requirements",
            )
        name, version = head.split("==", 1)
        pins.append(HashedPin(name, version, hashes))
    return pins


def _wheel_project(filename: str) -> str:
    return re.sub(r"[-_.]+", "-", filename.split("-", 1)[0]).lower()


def resolve_wheels(pins: list[HashedPin], name: str, log: Log) -> Path | None:
    """The wheelhouse folder holding exactly ``pins``' wheels for the image's Python,
    downloaded from the package index on the host, each checked against its hashes.
    Refuses (``AgentRefused``) pins that do not resolve or whose wheel's hash differs."""
    if not pins:
        return None
    try:
        folder = download_wheels(
            [p.pin for p in pins], name, f"{name}'s requirements", deps=False, progress=log
        )
    except HarnessError as exc:
        raise AgentRefused(
            f"the requirements do not resolve to wheels for the image's Python: {exc}",
            "requirements",
        ) from None
    wheels = {_wheel_project(w.name): w for w in folder.glob("*.whl")}
    for pin in pins:
        wheel = wheels.get(re.sub(r"[-_.]+", "-", pin.name).lower())
        if wheel is None:
            raise AgentRefused(f"no wheel of {pin.pin} was found", "requirements")
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if digest not in pin.hashes:
            shutil.rmtree(folder, ignore_errors=True)
            raise AgentRefused(
                f"{wheel.name} has sha256 {digest}, not one the requirements pin", "requirements"
            )
        log(f"{wheel.name}: sha256 {digest} matches its pin")
    return folder


def build_submitted_image(
    client: Any,
    agent: AgentDefinition,
    requirements: str,
    *,
    max_bytes: int,
    log: Log,
) -> SubmittedImage:
    """Build ``agent``'s image as ``agent.name``'s content-hashed tag, with no network,
    its wheels (``requirements``: a file of its folder) in the context as ``wheels/``.
    Raises ``AgentRefused`` (the image removed) or ``HarnessError`` (the engine's)."""
    import docker.errors

    from runner.images import agent_image_ref

    started = time.monotonic()
    check_dockerfile((agent.directory / "Dockerfile").read_text(errors="replace"))
    pins = read_hashed_pins((agent.directory / requirements).read_text(errors="replace"))
    base = base_image_ref()
    if not image_exists(client, base):
        raise HarnessError(f"base image {base} missing: build it first (`mleboard images`)")
    wheels = resolve_wheels(pins, agent.name, log)
    ref = agent_image_ref(agent)
    log(f"building {ref} FROM {base} with no network")
    with tempfile.TemporaryDirectory(prefix="mleboard-submitted-") as tmp:
        context = Path(tmp) / "context"
        shutil.copytree(agent.directory, context, symlinks=True)
        (context / "wheels").mkdir(exist_ok=True)
        for wheel in wheels.glob("*.whl") if wheels else ():
            shutil.copy2(wheel, context / "wheels" / wheel.name)
        try:
            _image, stream = client.images.build(
                path=str(context),
                tag=ref,
                buildargs={BASE_ARG: base},
                rm=True,
                forcerm=True,
                pull=False,
                network_mode="none",
            )
            for chunk in stream:
                if text := str(chunk.get("stream", "")).rstrip():
                    log(text)
        except docker.errors.BuildError as exc:
            lines = "".join(str(c.get("stream", c.get("error", ""))) for c in exc.build_log)
            for line in lines.splitlines()[-60:]:
                log(line)
            remove_image(client, ref)
            if _NO_NETWORK.search(lines):
                raise AgentRefused(
                    "the build tried the network, and builds have none: put every package in "
                    "the hash-pinned requirements file and install it from wheels/",
                    "network",
                ) from None
            raise AgentRefused(f"the image did not build: {exc.msg}", "build") from None
        except docker.errors.APIError as exc:
            remove_image(client, ref)
            raise HarnessError(f"the engine failed building {ref}: {exc}") from exc
    size = int(client.images.get(ref).attrs.get("Size") or 0)
    if size > max_bytes:
        remove_image(client, ref)
        raise AgentRefused(
            f"the image is {size / 1024**2:.0f} MiB, over this site's limit of "
            f"{max_bytes / 1024**2:.0f} MiB (MLEBOARD_AGENT_IMAGE_MAX_BYTES)",
            "image_size",
        )
    log(f"built {ref}: {size / 1024**2:.0f} MiB")
    return SubmittedImage(ref=ref, size_bytes=size, seconds=time.monotonic() - started)


def remove_image(client: Any, ref: str) -> None:
    """Remove ``ref`` if it is there (nothing left behind by a refused build)."""
    import docker.errors

    try:
        client.images.remove(ref, force=True, noprune=False)
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.APIError as exc:
        raise HarnessError(f"could not remove {ref}: {exc}") from exc
