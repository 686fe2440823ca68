"""Server-Timing header: the server time of every response, so pages can be measured
from outside (benchmarks, the browser's devtools) without guessing at network time."""

import time


class ServerTimingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed_ms = (time.perf_counter() - started) * 1000
        response["Server-Timing"] = f"app;dur={elapsed_ms:.1f}"
        return response
