"""The live server's requests in flight, counted, so a browser test can wait for the last
one before its database is emptied."""

from __future__ import annotations

import threading

from tests.support.polling import wait_until


class InFlight:
    """The live server's requests still being served: from the call of the site until the
    server closes the response (a streamed one included). A browser test's page waits for
    none to be left before the test's database is emptied, so a request the browser sent
    as it closed never holds a table the emptying needs (a deadlock the server reports)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0

    def _add(self, n: int) -> None:
        with self._lock:
            self.count += n

    def wrap(self, application):
        def counted(environ, start_response):
            self._add(1)
            try:
                result = application(environ, start_response)
            except BaseException:
                self._add(-1)
                raise
            return _ClosedWhenDone(result, lambda: self._add(-1))

        return counted

    def wait_idle(self, timeout: float = 30) -> None:
        wait_until(lambda: self.count == 0, timeout=timeout, interval=0.05)


class _ClosedWhenDone:
    """A WSGI response that calls ``done`` once when the server closes it."""

    def __init__(self, result, done) -> None:
        self._result = result
        self._done = done

    def __iter__(self):
        return iter(self._result)

    def close(self) -> None:
        try:
            close = getattr(self._result, "close", None)
            if close is not None:
                close()
        finally:
            done, self._done = self._done, None
            if done is not None:
                done()


LIVE_REQUESTS = InFlight()
