"""How the suite is spread over worker processes (tests/support/parallel.py)."""

import sys
from pathlib import Path

import pytest

from tests.support.parallel import dealt, own_redis_database, rewrite_test_modules


class Item:
    def __init__(self, name: str, slow: bool):
        self.name, self.slow = name, slow

    def get_closest_marker(self, name: str):
        return object() if name == "slow" and self.slow else None


def shares(items: list, workers: int) -> list[list]:
    """The contiguous shares xdist's ``worksteal`` hands out at the start."""
    out, left = [], list(items)
    for i in range(workers):
        size = len(left) // (workers - i)
        out.append(left[:size])
        left = left[size:]
    return out


@pytest.mark.parametrize("workers", [1, 2, 4, 6])
@pytest.mark.parametrize(("n", "n_slow"), [(10, 0), (10, 3), (103, 9), (7, 7), (5, 1)])
def test_each_worker_starts_with_its_share_of_the_slow_tests(workers, n, n_slow):
    slow = {k * n // n_slow for k in range(n_slow)}  # spread through the collection
    items = [Item(f"t{i}", slow=i in slow) for i in range(n)]
    assert sum(item.slow for item in items) == n_slow
    ordered = dealt(items, workers)
    assert sorted(item.name for item in ordered) == sorted(item.name for item in items)
    counts = [sum(item.slow for item in share) for share in shares(ordered, workers)]
    assert sum(counts) == n_slow
    assert max(counts) - min(counts) <= 1, counts
    for share in shares(ordered, workers):  # the slow ones first in each share
        flags = [item.slow for item in share]
        assert flags == sorted(flags, reverse=True)
    fast = [item.name for item in ordered if not item.slow]
    assert fast == [item.name for item in items if not item.slow], "fast tests keep their order"


def test_each_worker_has_a_broker_database_of_its_own():
    assert own_redis_database("redis://127.0.0.1:6379/5", 0) == "redis://127.0.0.1:6379/5"
    assert own_redis_database("redis://127.0.0.1:6379/5", 3) == "redis://127.0.0.1:6379/8"
    assert own_redis_database("redis://h:1/14", 3) == "redis://h:1/1"
    assert own_redis_database("redis://h:1", 2) == "redis://h:1/2"


def test_the_main_process_caches_the_rewritten_test_modules(request, tmp_path, monkeypatch):
    """What the workers then read: a current rewritten copy of each test module."""
    from _pytest.assertion import rewrite

    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path))
    this = Path(__file__)
    pyc = rewrite.get_cache_dir(this) / (this.name[:-3] + rewrite.PYC_TAIL)
    assert rewrite._read_pyc(this, pyc) is None
    assert rewrite_test_modules(request.config) > 100
    code = rewrite._read_pyc(this, pyc)
    assert code is not None and "@pytest_ar" in code.co_names  # the asserts' helpers
    assert rewrite_test_modules(request.config) == 0  # all current: nothing rewritten again
