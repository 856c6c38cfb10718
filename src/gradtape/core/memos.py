"""Bounded memos: what the compiler derives from a built backward, kept per entry.

The compile cache's batched backwards (``compiler/cache.batched_entries``) and a nested
call op's derived programs (``ad/nested.derived_programs``) are both ``EntryMemo``s:
they stand in two layers, so the memo itself is a foundation.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

MAX_DERIVED_PER_ENTRY = 64  # one per number of rows a jacobian used, say


def remember(memo: dict, key: Any, value: Any, limit: int) -> Any:
    """``memo[key] = value``, first emptying ``memo`` if it holds ``limit`` entries: the
    bound of the package's small memos (a miss costs a recomputation, never a result).
    Returns ``value``."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value


class EntryMemo:
    """What is derived from a built backward, per entry and key: weakly keyed (it goes
    with the entry), at most ``limit`` keys per entry (emptied when full)."""

    def __init__(self, limit: int):
        self.limit = limit
        self._table: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        # Reentrant: building one derived program may derive another (ad/nested.py).
        self._lock = threading.RLock()

    def get(self, entry: Any, key: Any) -> Any:
        per_entry = self._table.get(entry)
        return None if per_entry is None else per_entry.get(key)

    def put(self, entry: Any, key: Any, value: Any) -> Any:
        with self._lock:
            per_entry = self._table.get(entry)
            if per_entry is None:
                per_entry = self._table[entry] = {}
            return remember(per_entry, key, value, self.limit)

    def get_or_build(self, entry: Any, key: Any, build: Callable[[], Any]) -> Any:
        """``build()``, once per entry and key (under the lock: these run while a
        backward is built, never on the hot path)."""
        with self._lock:
            found = self.get(entry, key)
            return self.put(entry, key, build()) if found is None else found

    def clear(self) -> None:
        with self._lock:
            self._table.clear()
