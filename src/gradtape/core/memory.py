"""Opt-in: keep freed array memory in the process heap (glibc only).

Importing gradtape changes nothing in the allocator: glibc's settings belong to the
whole process, and a library import must not change how its host's memory behaves (with
the thresholds raised, a program that freed 1.6 GB of arrays kept 500 MiB of it).

glibc already adapts by itself: freeing a large block raises its mmap threshold (up to
32 MiB) and its trim threshold to twice that, so a training step's temporaries come back
from the heap on the next step without fresh page faults. On the 1e6-element elementwise
gradient the raised thresholds measured no faster than glibc's defaults (docs/memory.md).

A program that wants the old behaviour (freed blocks up to 32 MiB kept for reuse, as the
pooling allocators of TensorFlow and PyTorch do, at the cost of memory not going back to
the system) opts in: ``gt.config(hold_freed_memory=True)``, or ``GRADTAPE_HOLD_MEMORY=1``
in the environment before importing gradtape.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from typing import Any

# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# The largest mmap threshold glibc accepts on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX).
_MMAP_THRESHOLD_MAX = 32 * 1024 * 1024
_TRIM_THRESHOLD = 1024 * 1024 * 1024
# glibc's initial values of both (DEFAULT_MMAP_THRESHOLD_MIN, DEFAULT_TRIM_THRESHOLD).
_GLIBC_DEFAULT_THRESHOLD = 128 * 1024

held = False


def _glibc() -> Any:
    """glibc through ctypes, or ``None`` (another platform, or musl: no mallopt)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):
        return None
    return libc


def hold_freed_memory(hold: bool = True) -> bool:
    """Ask glibc to keep freed blocks up to 32 MiB for reuse (``hold``), for the whole
    process; or, after that, to go back to its default thresholds and return what it
    keeps to the system (``hold=False``; glibc's dynamic adjustment stays off). Returns
    whether memory is held now (always False off glibc)."""
    global held
    if hold == held:
        return held
    libc = _glibc()
    if libc is None:
        return False
    if hold:
        held = bool(libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)) and bool(
            libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
    else:
        libc.mallopt(_M_MMAP_THRESHOLD, _GLIBC_DEFAULT_THRESHOLD)
        libc.mallopt(_M_TRIM_THRESHOLD, _GLIBC_DEFAULT_THRESHOLD)
        libc.malloc_trim(0)
        held = False
    return held


def requested_by_environment() -> bool:
    """``GRADTAPE_HOLD_MEMORY=1``: the user's opt-in before import."""
    return os.environ.get("GRADTAPE_HOLD_MEMORY", "0").strip().lower() in ("1", "true", "yes")
