"""The validation client agents call: ``validate_submission.sh SUBMISSION_FILE``.

Standard library only: the harness puts this file's source into the agent's container
(as ``/home/validate_submission.sh``, wrapped for ``sh``) where only ``python3`` exists.
It POSTs the file, as multipart form field ``file`` (MLE-bench's ``/validate`` contract),
over the unix socket named by ``$VALIDATION_SOCKET`` and prints the JSON answer, e.g.
``{"result": "Submission is valid.", "valid": true}``. Exit status: 0 when the service
answered, 1 on a usage error or when it could not be reached, 2 when it refused the request
(too large, too many requests).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import sys
import uuid

DEFAULT_SOCKET = "/home/validation/validate.sock"
CHUNK = 1024 * 1024


class UnixHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection over a unix socket (the host is only used in the Host header)."""

    def __init__(self, socket_path: str, timeout: float = 120.0) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = socket_path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


def multipart_parts(field: str, filename: str) -> tuple[bytes, bytes, str]:
    """Return (head, tail, content type) framing one file in a ``multipart/form-data`` body."""
    boundary = uuid.uuid4().hex
    filename = filename.replace("\\", "_").replace('"', "_").replace("\r", "_").replace("\n", "_")
    head = (
        f"--{boundary}\r\n"
        f'Content-Disposition: form-data; name="{field}"; filename="{filename}"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    ).encode()
    return head, f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def multipart_body(field: str, filename: str, data: bytes) -> tuple[bytes, str]:
    """Return (body, content type) for a one-file ``multipart/form-data`` request."""
    head, tail, content_type = multipart_parts(field, filename)
    return head + data + tail, content_type


def request(socket_path: str, method: str, path: str, body=b"", headers=None):
    """Send one request; return (HTTP status, decoded JSON or text).

    ``body`` is bytes, or an iterable of bytes sent as they come (give Content-Length).
    """
    conn = UnixHTTPConnection(socket_path)
    try:
        try:
            conn.request(method, path, body=body or None, headers=headers or {})
            response = conn.getresponse()
        except (BrokenPipeError, ConnectionResetError):
            # The service refused the request (too large, too many) before reading all of
            # it and closed; its answer is still waiting in the socket.
            if conn.sock is None:
                raise
            response = http.client.HTTPResponse(conn.sock, method=method)
            response.begin()
        raw = response.read().decode("utf-8", errors="replace")
    finally:
        conn.close()
    try:
        return response.status, json.loads(raw)
    except ValueError:
        return response.status, raw


def validate_file(path: str, socket_path: str | None = None):
    """Ask the service about the file at ``path``; return (HTTP status, answer)."""
    socket_path = socket_path or os.environ.get("VALIDATION_SOCKET", DEFAULT_SOCKET)
    head, tail, content_type = multipart_parts("file", os.path.basename(path))
    with open(path, "rb") as fh:  # streamed: a large file is never held in memory
        size = os.fstat(fh.fileno()).st_size

        def body():
            yield head
            while chunk := fh.read(CHUNK):
                yield chunk
            yield tail

        headers = {
            "Content-Type": content_type,
            "Content-Length": str(len(head) + size + len(tail)),
        }
        return request(socket_path, "POST", "/validate", body(), headers)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"Usage: {argv[0] if argv else 'validate_submission.sh'} <submission_file>")
        return 1
    if not os.path.isfile(argv[1]):
        print(f"File {argv[1]} does not exist.")
        return 1
    try:
        status, answer = validate_file(argv[1])
    except OSError as exc:
        print(json.dumps({"error": f"validation service unreachable: {exc}"}))
        return 1
    print(json.dumps(answer) if not isinstance(answer, str) else answer)
    return 0 if status == 200 else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
