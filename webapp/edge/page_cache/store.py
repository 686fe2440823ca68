"""Where pages are kept: each process's recent copies, in front of the pages' Redis when
there is one; bounded in bytes and in variants of one address."""

import hashlib
import logging
import threading
import time
from collections import OrderedDict

from webapp.edge.page_cache.versions import current_versions, ensure_bounded, pages, shared

log = logging.getLogger(__name__)


# Each process's copies of recent pages (see _Recent): in front of Redis, or the whole
# cache when there is no Redis for pages.
RECENT_MAX_BYTES = 64 * 1024**2


# Variants of one address (its query parameters; for signed-in pages, per class of
# viewers) kept at once, here and in the pages' Redis: past it the least recently stored
# goes, so a client making up parameter values by the thousand keeps at most this many
# copies of one page, not the whole cache.
VARIANTS_MAX = 64


# What a stored copy costs beyond its bytes (its key, tuple, headers and bookkeeping).
ENTRY_OVERHEAD_BYTES = 1024


class _Recent:
    """This process's copies of the pages it served lately: in front of the pages' Redis
    (a hit then costs one small read, the versions, instead of moving the whole page out
    of Redis), or the whole cache without one. A copy counts only under the current
    versions, so it is never staler than Redis. Bounded in bytes and in variants of one
    address (``VARIANTS_MAX``), least recently used out first."""

    def __init__(self, max_bytes: int, variants_max: int = VARIANTS_MAX) -> None:
        self.max_bytes = max_bytes
        self.variants_max = variants_max
        self.entries: OrderedDict[str, tuple[tuple, str]] = OrderedDict()
        self.groups: dict[str, OrderedDict[str, None]] = {}
        self.size = 0
        self.lock = threading.Lock()

    def get(self, key: str, versions: tuple) -> tuple | None:
        with self.lock:
            found = self.entries.get(key)
            if found is None or found[0][0] != versions:
                return None
            self.entries.move_to_end(key)
            self.groups[found[1]].move_to_end(key)
            return found[0]

    def peek(self, key: str) -> tuple | None:
        """The copy whatever its versions (a stale page, for when the database is away)."""
        with self.lock:
            found = self.entries.get(key)
            return found[0] if found else None

    def put(self, key: str, entry: tuple, group: str) -> None:
        size = _size(entry)
        if size > self.max_bytes // 8:
            return
        with self.lock:
            self._drop(key)
            self.entries[key] = (entry, group)
            self.groups.setdefault(group, OrderedDict())[key] = None
            self.size += size
            variants = self.groups[group]
            while len(variants) > self.variants_max:
                self._drop(next(iter(variants)))
            while self.size > self.max_bytes:
                self._drop(next(iter(self.entries)))

    def _drop(self, key: str) -> None:
        found = self.entries.pop(key, None)
        if found is None:
            return
        entry, group = found
        self.size -= _size(entry)
        variants = self.groups[group]
        del variants[key]
        if not variants:
            del self.groups[group]

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.groups.clear()
            self.size = 0


def _size(entry: tuple) -> int:
    content, extra = entry[3], entry[4]
    headers = sum(len(name) + len(value) for name, value in entry[2])
    if isinstance(content, tuple):  # a signed-in page's parts, with their size
        return extra + headers + ENTRY_OVERHEAD_BYTES
    return len(content) + len(extra or b"") + headers + ENTRY_OVERHEAD_BYTES


_recent = _Recent(RECENT_MAX_BYTES)


# What else forgets its copies with the pages (``webapp.edge.viewer_pages``' viewers).
_ON_CLEAR: list = []


def on_clear(forget) -> None:
    if forget not in _ON_CLEAR:
        _ON_CLEAR.append(forget)


def clear() -> None:
    """Drop every stored page (tests, and an operator's ``cache clear``)."""
    _recent.clear()
    for forget in _ON_CLEAR:
        forget()
    if shared():
        pages().clear()


def lookup(key: str, scopes: tuple[str, ...], group: str) -> tuple[tuple, tuple | None]:
    """The current versions and the stored entry for ``key`` (of any versions: the
    caller compares)."""
    ensure_bounded()
    versions = current_versions(*scopes)
    return versions, stored(key, versions, group)


def stored(key: str, versions: tuple, group: str) -> tuple | None:
    """The entry stored for ``key``: this process's copy under ``versions``, else the
    shared one (copied here when it is of ``versions``), else a stale copy, else None."""
    entry = _recent.get(key, versions)
    if entry is None and shared():
        entry = pages().get(key)
        if _valid(entry) and entry[0] == versions:
            _recent.put(key, entry, group)
    if entry is None:
        entry = _recent.peek(key)
    return entry if _valid(entry) else None


def _valid(entry) -> bool:
    # An entry of another shape was stored by an earlier release: rendered again.
    return isinstance(entry, tuple) and len(entry) == 5 and isinstance(entry[0], tuple)


def keep(key: str, entry: tuple, group: str) -> None:
    """Keep ``entry`` under ``key``, one of the variants of ``group`` (an address, and for
    signed-in pages the class of viewers): with the pages' Redis, the group's newest
    ``VARIANTS_MAX`` are kept there too (a sorted set of its keys by time)."""
    if shared():
        cache = pages()
        cache.set(key, entry)
        client = cache._cache.get_client(write=True)
        index = cache.make_key(f"mleboard:variants:{_digest(group)}")
        pipe = client.pipeline()
        pipe.zadd(index, {key: time.time()})
        pipe.zcard(index)
        pipe.expire(index, 24 * 3600)
        _, count, _ = pipe.execute()
        if count > VARIANTS_MAX:
            dropped = client.zpopmin(index, count - VARIANTS_MAX)
            names = [name.decode() if isinstance(name, bytes) else name for name, _ in dropped]
            if names:
                client.delete(*(cache.make_key(name) for name in names))
    _recent.put(key, entry, group)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
