"""A small disk for ``drill disk``: the media folder on a tmpfs the drill mounts (root
only), and what the filesystem holds, read together."""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .processes import log

MiB = 1024**2
# Space a filesystem may hold that no file under it accounts for (tmpfs rounds to pages).
DISK_SLACK = 256 * 1024


@dataclass(frozen=True)
class DiskSnapshot:
    free: int  # bytes free (statvfs: available to unprivileged users)
    used: int  # bytes the filesystem says are used
    held: int  # bytes the files under it hold (st_blocks)
    files: dict[str, int]  # path (relative) -> size

    @property
    def unaccounted(self) -> int:
        """Used space no file accounts for: a removed file some process keeps open."""
        return self.used - self.held


class SmallDisk:
    """A tmpfs of ``mib`` MiB mounted on ``path`` (the media folder) by the drill, which must
    run as root; unmounted when the drill stops, and on exit."""

    def __init__(self, path: Path, mib: int):
        self.path, self.mib = path, mib
        self.mounted = False

    @staticmethod
    def cannot_mount() -> str:
        """Why the drill cannot mount a tmpfs here ('' when it can: tried on a scratch
        folder)."""
        if os.geteuid() != 0:
            return (
                "drill disk mounts a small tmpfs on the media folder and needs root: run it "
                "as root, or leave it out (--drill worker --drill web ...)"
            )
        scratch = tempfile.mkdtemp(prefix="mleboard-drill-mount-")
        try:
            done = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", scratch],
                capture_output=True,
                text=True,
                timeout=30,
            )
            if done.returncode:
                said = " ".join(done.stderr.split())[:200]
                return (
                    f"drill disk cannot mount a tmpfs here ({said}); it "
                    "needs root allowed to mount (CAP_SYS_ADMIN)"
                )
            subprocess.run(["umount", scratch], capture_output=True, timeout=30)
            return ""
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"drill disk cannot mount a tmpfs here ({exc})"
        finally:
            with contextlib.suppress(OSError):
                os.rmdir(scratch)

    def mount(self) -> None:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.mib}m,mode=0755", "tmpfs", str(self.path)],
            check=True,
            capture_output=True,
            timeout=30,
        )
        self.mounted = True
        _MOUNTS.append(self)
        log(f"media folder on a {self.mib} MiB tmpfs: {self.snapshot().free / MiB:.1f} MiB free")

    def unmount(self) -> None:
        if not self.mounted:
            return
        done = subprocess.run(["umount", str(self.path)], capture_output=True, timeout=30)
        if done.returncode:  # still busy: detach it, the kernel frees it when released
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, timeout=30)
        self.mounted = False
        if self in _MOUNTS:
            _MOUNTS.remove(self)

    def _read(self) -> tuple[int, int, int, dict[str, int]]:
        vfs = os.statvfs(self.path)
        held, files = 0, {}
        for folder, _dirs, names in os.walk(self.path):
            for name in names:
                path = Path(folder, name)
                with contextlib.suppress(FileNotFoundError):
                    st = path.lstat()
                    held += st.st_blocks * 512
                    files[str(path.relative_to(self.path))] = st.st_size
        return vfs.f_bavail * vfs.f_frsize, (vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize, held, files

    def snapshot(self) -> DiskSnapshot:
        """Free, used and held bytes read together: again while grading changed the
        filesystem during the walk (the used bytes differ before and after it)."""
        for _ in range(50):
            first = os.statvfs(self.path)
            free, used, held, files = self._read()
            last = os.statvfs(self.path)
            if (first.f_bfree, first.f_bavail) == (last.f_bfree, last.f_bavail):
                break
            time.sleep(0.05)
        return DiskSnapshot(free, used, held, files)


_MOUNTS: list[SmallDisk] = []
atexit.register(lambda: [disk.unmount() for disk in list(_MOUNTS)])
