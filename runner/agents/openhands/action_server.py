"""OpenHands' action server (``openhands.runtime.client.client``), run in this container.

OpenHands 0.9.8 runs it in a Docker container of its own, as root; here there is no Docker
and no root, so it runs as the agent's user beside the controller, its source as shipped
with three changes, each checked to apply exactly once (a different OpenHands fails loudly):
a plain ``bash`` session instead of ``su USER``, no ``git config`` at start, and no browser
(a browsing action is answered with an error). Its Jupyter plugin starts the kernel gateway
from this virtualenv, on 127.0.0.1.

Usage: ``python action_server.py PORT --working-dir DIR --plugins agent_skills
--username USER --user-id UID`` (the server's own arguments).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import openhands.runtime.browser.browser_env as browser_env
import openhands.runtime.client.client as shipped
from openhands.events.action import IPythonRunCellAction
from openhands.runtime.plugins import jupyter

PATCHES = (
    ("f'su {username}',", "'/bin/bash --noprofile --norc',"),
    (
        '    \'git config --global user.name "openhands" && git config --global user.email '
        '"openhands@all-hands.dev" && alias git="git --no-pager"\',\n',
        "",
    ),
)


class NoBrowser:
    """Stands in for BrowserGym's browser: there is none in this container."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def step(self, *args, **kwargs):
        raise RuntimeError("no browser in this container (and no network to browse)")

    def check_alive(self, *args, **kwargs) -> bool:
        return False

    def close(self) -> None:
        pass


async def start_kernel_gateway(self, username: str, kernel_id: str = "openhands-default"):
    """``JupyterPlugin.initialize`` for this container: the gateway from this virtualenv."""
    self.kernel_gateway_port = jupyter.find_available_tcp_port(40000, 49999)
    self.kernel_id = kernel_id
    self.gateway_process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kernel_gateway",
            "--KernelGatewayApp.ip=127.0.0.1",
            f"--KernelGatewayApp.port={self.kernel_gateway_port}",
        ]
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if self.gateway_process.poll() is not None:
            raise RuntimeError(f"the kernel gateway exited ({self.gateway_process.returncode})")
        try:
            socket.create_connection(("127.0.0.1", self.kernel_gateway_port), 1).close()
            break
        except OSError:
            await asyncio.sleep(0.5)
    else:
        raise RuntimeError("the kernel gateway did not listen within 120 s")
    obs = await self.run(IPythonRunCellAction(code="import sys; print(sys.executable)"))
    self.python_interpreter_path = obs.content.strip()


def main() -> None:
    path = Path(shipped.__file__)
    source = path.read_text()
    for old, new in PATCHES:
        count = source.count(old)
        if count != 1:
            sys.exit(f"action_server: expected one {old!r} in {path}, found {count}")
        source = source.replace(old, new)
    # No bracketed-paste escapes in what the agent's bash prints.
    os.environ["INPUTRC"] = str(Path(__file__).resolve().parent / "inputrc")
    browser_env.BrowserEnv = NoBrowser
    jupyter.JupyterPlugin.initialize = (
        start_kernel_gateway  # what the server's `from ... import BrowserEnv` gets
    )
    code = compile(source, str(path), "exec")
    sys.argv[0] = str(path)
    exec(code, {"__name__": "__main__", "__file__": str(path), "__builtins__": __builtins__})


if __name__ == "__main__":
    main()
