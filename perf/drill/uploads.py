"""HTTP to the drill's site: uploads posted whole, over a raw socket with the answer read
while the body is sent, or slowly so that a kill lands mid-body."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import threading
import time

from .archive import multipart_body

METADATA = '{"scaffold":"drill","model":"none"}'


def post_upload(port: int, token: str, archive: bytes, name: str, timeout: float = 300):
    """POST the archive to /api/uploads/: (HTTP status, answer as a dict)."""
    body, ctype = multipart_body({"metadata": METADATA}, "archive", name, archive)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(
            "POST",
            "/api/uploads/",
            body=body,
            headers={"Authorization": f"Token {token}", "Content-Type": ctype},
        )
        response = conn.getresponse()
        raw = response.read()
    finally:
        conn.close()
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = {"raw": raw[:300].decode(errors="replace")}
    return response.status, answer


def http_answers(port: int, token: str) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/api/uploads/999999999/", headers={"Authorization": f"Token {token}"})
        return conn.getresponse().status in (200, 404)
    finally:
        conn.close()


def post_answer_early(port: int, token: str, body: bytes, ctype: str, timeout: float = 120):
    """POST /api/uploads/ over a raw socket, the body sent by a thread while the answer is
    read, as a browser does: a refusal sent before the body is read is seen. (status, 0 when
    no answer came; answer's body; bytes of the body sent; how the sending ended)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    state = {"sent": 0, "ended": "sent it all"}

    def send() -> None:
        try:
            for offset in range(0, len(body), SlowSender.CHUNK):
                sock.sendall(body[offset : offset + SlowSender.CHUNK])
                state["sent"] = min(len(body), offset + SlowSender.CHUNK)
        except OSError as exc:
            state["ended"] = f"{type(exc).__name__} after the answer"

    raw = b""
    try:
        sock.sendall(
            f"POST /api/uploads/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Token {token}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        )
        sender = threading.Thread(target=send, name="body-sender", daemon=True)
        sender.start()
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                raw += chunk
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sender.join(timeout=timeout)
    finally:
        sock.close()
    head, _, answer = raw.partition(b"\r\n\r\n")
    match = re.match(rb"HTTP/1\.[01] (\d{3})", head)
    return (int(match.group(1)) if match else 0), answer, state["sent"], state["ended"]


class SlowSender(threading.Thread):
    """Sends an upload request over a raw socket in chunks, slowly once ``mark`` of the
    body is out (then sets ``reached``), so that a kill lands while the body is sent."""

    CHUNK = 256 * 1024

    def __init__(self, port: int, token: str, archive: bytes, name: str, mark: float = 0.3):
        super().__init__(name="slow-sender", daemon=True)
        self.port, self.token, self.mark = port, token, mark
        self.body, self.ctype = multipart_body({"metadata": METADATA}, "archive", name, archive)
        self.sent = 0
        self.reached = threading.Event()
        self.outcome = ""

    def run(self) -> None:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=30) as sock:
                head = (
                    f"POST /api/uploads/ HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                    f"Authorization: Token {self.token}\r\nContent-Type: {self.ctype}\r\n"
                    f"Content-Length: {len(self.body)}\r\nConnection: close\r\n\r\n"
                )
                sock.sendall(head.encode())
                for offset in range(0, len(self.body), self.CHUNK):
                    sock.sendall(self.body[offset : offset + self.CHUNK])
                    self.sent = min(len(self.body), offset + self.CHUNK)
                    if self.sent >= self.mark * len(self.body):
                        self.reached.set()
                        time.sleep(0.02)
                answer = sock.recv(200)
                self.outcome = f"answered: {answer[:60]!r}" if answer else "closed, no answer"
        except OSError as exc:
            self.outcome = f"{type(exc).__name__}: {exc}"
        finally:
            self.reached.set()
