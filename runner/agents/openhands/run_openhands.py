"""Run OpenHands 0.9.8's CodeAct agent headless on the competition in /home/data.

``openhands.core.main.run_controller`` drives the agent with the task MLE-bench gives, in a
container with no Docker and no network: the runtime is ``LocalRuntime`` (the action server,
``action_server.py``, a process of the agent's user instead of a container of its own); the
model is the operator's endpoint (``OPENAI_BASE_URL``/``OPENAI_API_KEY``) through litellm,
named by ``MLEBOARD_LLM_MODEL`` or ``OPENHANDS_MODEL``, its key kept out of what the agent
runs; every event is appended to ``$LOGS_DIR/openhands_events.jsonl`` for the run page's
timeline. The harness enforces the time limit; ``OPENHANDS_MAX_ITERATIONS`` bounds the steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

AGENT_DIR = Path(os.environ.get("AGENT_DIR", Path(__file__).resolve().parent))
DATA_DIR = Path(os.environ.get("DATA_DIR", "/home/data"))
LOGS_DIR = Path(os.environ.get("LOGS_DIR", "/home/logs"))
INSTRUCTIONS = Path(os.environ.get("INSTRUCTIONS_FILE", "/home/instructions.txt"))
WORK_DIR = os.environ.get("OPENHANDS_WORK_DIR", "/home")
MAX_ITERATIONS = int(os.environ.get("OPENHANDS_MAX_ITERATIONS", "500"))
EVENTS = LOGS_DIR / "openhands_events.jsonl"
# The model's key and endpoint are read once here and kept out of what the agent runs.
PRIVATE = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MLEBOARD_LLM_FORWARDER")
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

log = logging.getLogger("run_openhands")


def task_text() -> str:
    description = DATA_DIR / "description.md"
    return "\n".join(
        [
            INSTRUCTIONS.read_text(),
            "COMPETITION INSTRUCTIONS\n------\n",
            description.read_text() if description.is_file() else "",
        ]
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def local_runtime_class():
    import openhands.runtime.client.runtime as eventstream
    from openhands.runtime.client.runtime import EventStreamRuntime

    eventstream.DockerRuntimeBuilder = lambda _client: None  # no images to build here

    class LocalRuntime(EventStreamRuntime):
        """EventStreamRuntime whose action server is a local process, not a container."""

        server: subprocess.Popen | None = None

        def __init__(self, config, event_stream, sid="default", plugins=None, **kwargs):
            config.sandbox.runtime_container_image = "local"  # nothing to build
            super().__init__(config, event_stream, sid, plugins, **kwargs)

        @staticmethod
        def _init_docker_client():
            return None

        def _find_available_port(self, max_attempts=5):
            return free_port()

        def _init_container(self, sandbox_workspace_dir, mount_dir=None, plugins=None):
            port = free_port()
            self._host_port = self._container_port = port
            self.api_url = f"http://127.0.0.1:{port}"
            command = [
                sys.executable,
                str(AGENT_DIR / "action_server.py"),
                str(port),
                "--working-dir",
                sandbox_workspace_dir,
                "--username",
                "root",  # a name only: no user is made, nothing runs as root
                "--user-id",
                str(os.getuid()),
            ]
            if plugins:
                command += ["--plugins", *[p.name for p in plugins]]
            env = {k: v for k, v in os.environ.items() if k not in PRIVATE}
            env["PATH"] = SYSTEM_PATH  # the agent's python3 is the base image's
            env["PYTHONPATH"] = ""
            log.info("starting the action server on 127.0.0.1:%d", port)
            # A session of its own: closing ends the server and what it started (the kernel
            # gateway, the agent's shell and commands) together.
            self.server = subprocess.Popen(
                command, env=env, cwd=str(AGENT_DIR), start_new_session=True
            )
            return None

        def _refresh_logs(self):
            pass

        def _wait_until_alive(self):
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                if self.server is not None and self.server.poll() is not None:
                    raise RuntimeError(f"the action server exited ({self.server.returncode})")
                try:
                    if self.session.get(f"{self.api_url}/alive", timeout=5).status_code == 200:
                        return
                except requests.RequestException:
                    pass
                time.sleep(0.5)
            raise RuntimeError("the action server did not answer within 180 s")

        def close(self, close_client: bool = True, rm_all_containers: bool = True):
            if self.server is not None:
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(self.server.pid, sig)
                    try:
                        self.server.wait(10)
                        break
                    except subprocess.TimeoutExpired:
                        continue
                self.server = None
            if close_client:
                self.session.close()

    return LocalRuntime


def record_events(event_stream) -> None:
    """Append each event of the stream to ``EVENTS`` as it comes."""
    from openhands.events import EventStreamSubscriber
    from openhands.events.serialization import event_to_dict

    LOGS_DIR.mkdir(parents=True, exist_ok=True)
    handle = EVENTS.open("a", encoding="utf-8")

    async def write(event) -> None:
        try:
            record = event_to_dict(event)
        except Exception as exc:  # noqa: BLE001 - an event we cannot serialise is named
            record = {"observation": "unserialisable", "content": f"{type(event).__name__}: {exc}"}
        handle.write(json.dumps(record, default=str) + "\n")
        handle.flush()

    # The TEST subscriber slot is unused by the headless controller.
    event_stream.subscribe(EventStreamSubscriber.TEST, write)


def main() -> int:
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stdout,
    )
    api_key = os.environ.get("OPENAI_API_KEY", "")
    base_url = os.environ.get("OPENAI_BASE_URL", "")
    for name in PRIVATE:
        os.environ.pop(name, None)
    model = os.environ.get("MLEBOARD_LLM_MODEL", "").strip() or os.environ["OPENHANDS_MODEL"]
    if "/" not in model:
        model = f"openai/{model}"  # litellm: an OpenAI-compatible server

    import openhands.core.main as oh_main
    from openhands.core.config import AppConfig, LLMConfig
    from openhands.events import EventStream
    from openhands.storage import get_file_store

    config = AppConfig(
        default_agent="CodeActAgent",
        runtime="local",
        max_iterations=MAX_ITERATIONS,
        workspace_base=WORK_DIR,
        workspace_mount_path=WORK_DIR,
        workspace_mount_path_in_sandbox=WORK_DIR,
        run_as_openhands=False,
        file_store="memory",
    )
    config.sandbox.timeout = int(os.environ.get("OPENHANDS_COMMAND_TIMEOUT", "32400"))
    config.sandbox.enable_auto_lint = False
    config.set_llm_config(
        LLMConfig(model=model, api_key=api_key, base_url=base_url, num_retries=3, drop_params=True)
    )

    runtime_cls = local_runtime_class()
    sid = oh_main.generate_sid(config)
    event_stream = EventStream(sid, get_file_store(config.file_store, config.file_store_path))
    record_events(event_stream)
    import agenthub

    runtime = runtime_cls(
        config=config,
        event_stream=event_stream,
        sid=sid,
        plugins=agenthub.Agent.get_cls(config.default_agent).sandbox_plugins,
    )
    log.info("model %s, at most %d iterations, working in %s", model, MAX_ITERATIONS, WORK_DIR)
    try:
        state = asyncio.run(
            oh_main.run_controller(
                config, task_text(), sid=sid, runtime=runtime, exit_on_message=True
            )
        )
    finally:
        runtime.close()
    agent_state = getattr(state, "agent_state", None)
    log.info("finished: %s after %s iterations", agent_state, getattr(state, "iteration", "?"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
