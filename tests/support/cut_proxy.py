"""A TCP proxy for tests: forwards a local port to the site, and cuts every connection
once, the first time the bytes sent towards the site pass ``cut_at`` (as a dropped Wi-Fi
or a closed laptop would). Afterwards it forwards normally. Loopback only."""

from __future__ import annotations

import socket
import threading


class CutProxy:
    def __init__(self, target_port: int, cut_at: int | None):
        self.target = ("127.0.0.1", target_port)
        self.cut_at = cut_at
        self.sent_up = 0  # bytes towards the site, all connections
        self.cuts = 0
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self._lock:
                self._open += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, source: socket.socket, dest: socket.socket, up: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if up:
                    with self._lock:
                        self.sent_up += len(data)
                        cut = self.cut_at is not None and self.sent_up >= self.cut_at
                        if cut:
                            self.cut_at = None  # once
                            self.cuts += 1
                    if cut:
                        self._cut_all()
                        return
                dest.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, dest):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _cut_all(self) -> None:
        with self._lock:
            sockets, self._open = self._open, []
        for sock in sockets:
            # shutdown wakes the threads blocked on the socket (close alone would not) and
            # tells both ends the connection is gone; then it is released.
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self) -> None:
        self._stop.set()
        self.server.close()
        self._cut_all()
