"""What stands between a local agent and the host: the local backend's confinement.

Whatever the agent can read it can publish through its run files, so the worker's secrets
must be out of its reach. Three levels, the best this host allows (probed once per process):
``isolated`` (root and ``unshare``: ``AGENT_UID``, no capabilities, its own PID and mount
namespaces, the site's folders and every folder closed to others replaced by empty ones),
``namespaces`` (user namespaces: the same, as the worker's own user) and ``none`` (a plain
process of the worker's user). The environment is built from nothing on every level
(``runner.local_backend``). docs/agents.md says what each level hides.
"""

from __future__ import annotations

import enum
import functools
import os
import pwd
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.spec import DEFAULT_USER

AGENT_UID = int(DEFAULT_USER.split(":")[0])
AGENT_GID = int(DEFAULT_USER.split(":")[1])

# What the agent's PATH holds besides the harness's Python (nothing of the worker's).
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"

# The folders of the site an agent must never read besides its own run's (the database
# and secret key files, other people's uploads and runs, every competition's answers).
SITE_FOLDER_VARIABLES = ("MLEBOARD_VAR_DIR", "MLEBOARD_MEDIA_ROOT", "MLEBOARD_DATA_DIR")


class Level(enum.StrEnum):
    ISOLATED = "isolated"
    NAMESPACES = "namespaces"
    NONE = "none"


@dataclass(frozen=True)
class Confinement:
    """How this host confines local agents, and what such an agent can read (for people)."""

    level: Level
    user: str  # who the agent runs as, for people

    @property
    def summary(self) -> str:
        """Exactly what the agent can read, in a sentence or three."""
        if self.level is Level.ISOLATED:
            return (
                f"The agent runs as {self.user}, with no capabilities, in its own PID and "
                "mount namespaces, with only its run's variables: it sees none of the "
                "worker's processes (not their environment, not their command line). The "
                "site's folders (MLEBOARD_VAR_DIR, the media and the prepared data) and "
                "every folder closed to other users are empty to it, except its run's "
                "folders, the competition's public data, its agent's folder and the Python "
                "it runs with. It can read what any user of this host may read elsewhere "
                "(world-readable files such as /etc) and reach the network."
            )
        if self.level is Level.NAMESPACES:
            return (
                f"The agent runs as the worker's own user ({self.user}) with no "
                "capabilities, in its own user, PID and mount namespaces, with only its "
                "run's variables: it sees none of the worker's processes (not their "
                "environment, not their command line), and the site's folders "
                "(MLEBOARD_VAR_DIR, the media and the prepared data) are empty to it except "
                f"its run's. It can read every other file {self.user} can read (its home "
                "folder included) and reach the network. Run the worker as root to run "
                "agents as a user of their own."
            )
        return (
            f"The agent runs as the worker's own user ({self.user}) with nothing between "
            "them (this host allows no namespaces): its environment holds only its run's "
            "variables, but it can read the worker's environment through /proc (the model "
            "key, SECRET_KEY, DATABASE_URL), the site's database and secret key files, "
            "every competition's private answers and every other file "
            f"{self.user} can read, and reach the network. Use the docker backend for "
            "anything you do not trust."
        )


def _user_name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _works(command: Sequence[str]) -> bool:
    try:
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def local_confinement() -> Confinement:
    """The best confinement this process can give local agents (probed once)."""
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if unshare and setpriv:
        if os.geteuid() == 0 and _works(
            [unshare, "--pid", "--fork", "--mount-proc", "--mount", "true"]
        ):
            return Confinement(Level.ISOLATED, f"uid {AGENT_UID} (an id no account uses)")
        if os.geteuid() != 0 and _works([*_USERNS, "true"]):
            return Confinement(Level.NAMESPACES, _user_name(os.geteuid()))
    return Confinement(Level.NONE, _user_name(os.geteuid()))


_USERNS = ["unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "--mount"]
_ROOT = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "--mount"]
_DROP_CAPS = ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]


def site_folders(environ=None) -> list[Path]:
    """The site's folders, as the configuration names them (absolute)."""
    from config import env

    return [Path(env(name, environ)).resolve() for name in SITE_FOLDER_VARIABLES]


def python_folders() -> list[Path]:
    """What the harness's Python needs to run: its environment and its installation."""
    folders = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    folders.add(Path(os.path.realpath(sys.executable)).parent.parent)
    return sorted(folders)


def _traversable_by_others(path: Path) -> bool:
    try:
        return bool(path.stat().st_mode & stat.S_IXOTH)
    except OSError:
        return False


def _closed_ancestors(keep: Iterable[Path]) -> set[Path]:
    """The folders above ``keep``'s that other users cannot enter (hidden and rebuilt)."""
    closed = set()
    for path in keep:
        for ancestor in reversed(path.parents):
            if ancestor != Path("/") and not _traversable_by_others(ancestor):
                closed.add(ancestor)
    return closed


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def wrap_command(
    confinement: Confinement,
    command: Sequence[str],
    *,
    cwd: Path,
    keep: Sequence[Path],
    read_only: Sequence[Path],
    hide: Sequence[Path],
    stage: Path,
) -> list[str]:
    """``command`` started under ``confinement``: in new namespaces, as root of them, a
    shell hides the ``hide`` folders (and, for another uid, every folder above ``keep``
    that other users cannot enter) under empty read-only file systems, mounts each
    ``keep`` folder back at its own path (``read_only`` ones read-only), then drops to the
    agent's user and capabilities and runs ``command`` in ``cwd``. ``stage`` is an empty
    folder only root may enter, for the mounts in between."""
    if confinement.level is Level.NONE:
        return list(command)
    keep = sorted({p.resolve() for p in keep}, key=lambda p: len(p.parts))
    hidden = {p.resolve() for p in hide if p.is_dir()}
    if confinement.level is Level.ISOLATED:
        hidden |= _closed_ancestors(keep)
    # A folder inside another hidden one is hidden with it.
    hidden_top = sorted(
        (h for h in hidden if not any(o != h and _inside(h, o) for o in hidden)),
        key=lambda p: len(p.parts),
    )
    q = shlex.quote
    lines = ["set -e"]
    staged = []
    for i, path in enumerate(keep):
        if any(_inside(path, h) for h in hidden_top):
            (stage / str(i)).mkdir()
            lines.append(f"mount --bind {q(str(path))} {q(str(stage / str(i)))}")
            staged.append((i, path))
        else:  # a mount of its own, so that it can be made read-only
            lines.append(f"mount --bind {q(str(path))} {q(str(path))}")
    for folder in hidden_top:
        lines.append(f"mount -t tmpfs -o mode=0755,size=1m mleboard-hidden {q(str(folder))}")
    for i, path in staged:
        lines.append(f"mkdir -p {q(str(path))}")
        lines.append(f"mount --bind {q(str(stage / str(i)))} {q(str(path))}")
        lines.append(f"umount {q(str(stage / str(i)))}")
    for folder in hidden_top:
        lines.append(f"mount -o remount,ro,bind {q(str(folder))}")
    for path in sorted({p.resolve() for p in read_only}):
        lines.append(f"mount -o remount,bind,ro {q(str(path))}")
    lines.append(f"cd {q(str(cwd))}")
    if confinement.level is Level.ISOLATED:
        drop = ["setpriv", f"--reuid={AGENT_UID}", f"--regid={AGENT_GID}", "--clear-groups"]
        prefix = _ROOT
    else:
        drop, prefix = ["setpriv"], [*_USERNS, "--kill-child"]
    # Not exec'd: the shell stays PID 1 of the namespace, so that the agent is an ordinary
    # process (PID 1 is immune to its own signals) and its exit status is passed on.
    lines.append('"$@"')
    return [
        *prefix,
        "--",
        "sh",
        "-c",
        "\n".join(lines),
        "agent",
        *drop,
        *_DROP_CAPS,
        "--",
        *command,
    ]


def hand_over(paths: Iterable[Path]) -> None:
    """Give the agent's user the run's output folders (empty when the run starts)."""
    for path in paths:
        os.chown(path, AGENT_UID, AGENT_GID)


def take_back(paths: Iterable[Path]) -> None:
    """The outputs back to the worker's user, links never followed."""
    uid, gid = os.geteuid(), os.getegid()
    for root in paths:
        for folder, dirs, files in os.walk(root, followlinks=False):
            for name in (folder, *(os.path.join(folder, n) for n in (*dirs, *files))):
                try:
                    os.lchown(name, uid, gid)
                except OSError:
                    continue
