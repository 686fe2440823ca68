"""The way a container with no network reaches the operator's model endpoint.

An agent with ``llm: true`` reaches the operator's OpenAI-compatible endpoint
(``MLEBOARD_LLM_BASE_URL``), and only it, through a unix socket: ``HostBridge`` on the host
relays each HTTP/1.1 request to the endpoint and counts it (``runner.llm_meter``); in the
container ``forward.py`` (``runner/llm_forwarder.py``) joins ``127.0.0.1:BRIDGE_PORT`` to
the socket. Nothing else leaves the container and the engine needs no network of its own.
The local backend's agent gets the same bridge on a loopback TCP port (``tcp=True``).
More in docs/agents.md.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import tempfile
import threading
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

from runner.backend import HarnessError
from runner.llm_meter import Meter
from runner.llm_relay import Relay

CONTAINER_LLM_DIR = "/home/llm"
SOCKET_NAME = "llm.sock"
FORWARDER_NAME = "forward.py"
BRIDGE_PORT = 18080
MAX_CONNECTIONS = 64


def endpoint_address(base_url: str) -> tuple[str, int, bool, str]:
    """``(host, port, tls, path)`` of an ``http(s)://host[:port]/path`` URL; ``HarnessError``
    for anything else."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HarnessError(
            "MLEBOARD_LLM_BASE_URL must be an http(s) URL such as http://127.0.0.1:8000/v1"
        )
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise HarnessError(f"MLEBOARD_LLM_BASE_URL has a bad port: {exc}") from None
    return parts.hostname, port, parts.scheme == "https", parts.path.rstrip("/")


def container_base_url(base_url: str) -> str:
    """The agent's ``OPENAI_BASE_URL`` in a container: the forwarder plus the endpoint's path."""
    return f"http://127.0.0.1:{BRIDGE_PORT}{endpoint_address(base_url)[3]}"


def forwarder_command() -> list[str]:
    """Run in the container (as the agent's user) before the agent."""
    return [
        "/usr/bin/python3",
        f"{CONTAINER_LLM_DIR}/{FORWARDER_NAME}",
        str(BRIDGE_PORT),
        f"{CONTAINER_LLM_DIR}/{SOCKET_NAME}",
    ]


class HostBridge:
    """The host's end: a unix socket (or, with ``tcp``, a loopback port: ``tcp_port``)
    relayed to the endpoint, its use counted in ``meter``. A context manager."""

    def __init__(self, base_url: str, connect_timeout_s: float = 5.0, tcp: bool = False) -> None:
        self.host, self.port, self.tls, self.path = endpoint_address(base_url)
        self.connect_timeout_s = connect_timeout_s
        self.tcp = tcp
        self.tcp_port = 0
        self.meter = Meter()
        self.directory = Path(tempfile.mkdtemp(prefix="mleboard-llm-"))
        self.socket_path = self.directory / SOCKET_NAME
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._closed = threading.Event()

    def __enter__(self) -> HostBridge:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connect(self) -> socket.socket:
        upstream = socket.create_connection((self.host, self.port), self.connect_timeout_s)
        upstream.settimeout(None)
        if self.tls:
            upstream = ssl.create_default_context().wrap_socket(upstream, server_hostname=self.host)
        return upstream

    def start(self) -> None:
        """Check the endpoint answers, write the forwarder, listen. ``HarnessError`` (the
        run does not start) when the endpoint cannot be reached from this host."""
        try:
            self._connect().close()
        except OSError as exc:
            self.close()
            raise HarnessError(
                f"the model endpoint {self.host}:{self.port} (MLEBOARD_LLM_BASE_URL) is not "
                f"reachable from this host ({exc}): the run was not started"
            ) from None
        if self.tcp:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
            self.tcp_port = listener.getsockname()[1]
        else:
            os.chmod(self.directory, 0o755)
            forwarder = self.directory / FORWARDER_NAME
            forwarder.write_text(resources.files("runner").joinpath("llm_forwarder.py").read_text())
            forwarder.chmod(0o644)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(self.socket_path))
            os.chmod(self.socket_path, 0o666)  # the agent's user must be able to connect
        listener.listen(MAX_CONNECTIONS)
        self._listener = listener
        threading.Thread(target=self._accept, name="llm-bridge", daemon=True).start()

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                client.close()  # too many at once: refused, the client retries
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    @property
    def local_base_url(self) -> str:
        """With ``tcp``: the agent's ``OPENAI_BASE_URL`` (this bridge plus the endpoint's path)."""
        return f"http://127.0.0.1:{self.tcp_port}{self.path}"

    def _track(self, sock: socket.socket, opened: bool) -> None:
        with self._lock:
            (self._open.add if opened else self._open.discard)(sock)

    def _serve(self, client: socket.socket) -> None:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        default_port = 443 if self.tls else 80
        host_header = host if self.port == default_port else f"{host}:{self.port}"
        self._track(client, True)
        try:
            Relay(client, self._connect, host_header, self.meter, self._track).serve()
        finally:
            self._track(client, False)
            with contextlib.suppress(OSError):
                client.close()
            self._slots.release()

    def usage(self) -> dict:
        """What the run asked of its model so far (``runner.llm_meter.Meter.as_dict``)."""
        return self.meter.as_dict()

    def close(self) -> None:
        self._closed.set()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.close()
        with self._lock:
            for s in list(self._open):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
        for path in (self.socket_path, self.directory / FORWARDER_NAME):
            with contextlib.suppress(OSError):
                path.unlink()
        with contextlib.suppress(OSError):
            self.directory.rmdir()
