"""The compile cache: structural key -> built backward, LRU-bounded and thread-safe.

It is the lookup ladder's third rung (``tape/lookup.py``, which owns the other tables and
``clear_cache``).

Keys are ``Trace.key`` tuples (primitives, params, wiring, avals: never arrays) and
entries hold programs and compiled functions, never arrays: residual values are passed
in at call time, so the cache cannot keep user data alive.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, NamedTuple

from ..core.config import on_change, options
from ..core.memos import MAX_DERIVED_PER_ENTRY, EntryMemo


class CacheInfo(NamedTuple):
    """Statistics of the compile cache (``gt.cache_info()``)."""

    hits: int
    misses: int
    entries: int
    maxsize: int
    compiled: int  # backward functions generated and compiled
    compile_time: float  # seconds spent generating and compiling them
    build_time: float  # seconds spent lowering, differentiating and optimizing


class LRUCache:
    def __init__(self, maxsize: int):
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.maxsize = maxsize
        self.hits = self.misses = self.compiled = 0
        self.compile_time = self.build_time = 0.0

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: Any) -> Any:
        """The entry for ``key`` (counted as a hit), or ``None`` (counted as a miss)."""
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                self.misses += 1
            else:
                self.hits += 1
                self._data.move_to_end(key)
            return entry

    def count_hit(self) -> None:
        """A hit found without a key lookup (a persistent tape's repeated gradient)."""
        with self._lock:
            self.hits += 1

    def put(self, key: Any, entry: Any) -> Any:
        """Store ``entry`` unless another thread stored one first; return the stored one."""
        with self._lock:
            existing = self._data.get(key)
            if existing is not None:
                return existing
            self._data[key] = entry
            self._evict()
            return entry

    def _evict(self) -> None:
        while len(self._data) > self.maxsize:
            _, old = self._data.popitem(last=False)
            release = getattr(old, "release", None)
            if release is not None:
                release()

    def resize(self, maxsize: int) -> None:
        with self._lock:
            self.maxsize = maxsize
            self._evict()

    def record_build(self, seconds: float) -> None:
        with self._lock:
            self.build_time += seconds

    def record_compile(self, seconds: float) -> None:
        with self._lock:
            self.compiled += 1
            self.compile_time += seconds

    def entries(self) -> list[Any]:
        with self._lock:
            return list(self._data.values())

    def clear(self) -> None:
        """Empty the cache and reset its statistics (``lookup.clear`` empties the rest)."""
        with self._lock:
            old = list(self._data.values())
            self._data.clear()
            self.hits = self.misses = self.compiled = 0
            self.compile_time = self.build_time = 0.0
        for entry in old:
            release = getattr(entry, "release", None)
            if release is not None:
                release()

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self.hits, self.misses, len(self._data), self.maxsize,
                             self.compiled, self.compile_time, self.build_time)


backward_cache = LRUCache(options.cache_size)
on_change.setdefault("cache_size", []).append(backward_cache.resize)


def cache_info() -> CacheInfo:
    """Hits, misses, entries, size bound and time spent building/compiling backwards."""
    return backward_cache.info()


# Batched backwards of an entry, by (rows, identity seeds) (compiler/build.py).
batched_entries = EntryMemo(MAX_DERIVED_PER_ENTRY)
