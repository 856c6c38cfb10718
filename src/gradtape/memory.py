"""Keep freed array memory in the process heap (glibc only).

A tape keeps the forward values its backward reads, so a training step allocates its
large temporaries while earlier ones are still alive. glibc hands such blocks back to
the operating system when they are freed, and every step then pays to fault fresh pages
in: on a 1e6-element elementwise gradient that tripled the time of the step. Raising
glibc's mmap and trim thresholds keeps freed blocks (each up to 32 MiB) for reuse, as
the pooling allocators of TensorFlow and PyTorch do. It affects the whole process, so
it can be switched off with ``GRADTAPE_HOLD_MEMORY=0`` before importing gradtape.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# The largest mmap threshold glibc accepts on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX).
_MMAP_THRESHOLD_MAX = 32 * 1024 * 1024
_TRIM_THRESHOLD = 1024 * 1024 * 1024

held = False


def hold_freed_memory() -> bool:
    """Ask glibc to keep freed blocks up to 32 MiB for reuse. Returns whether it did
    (False off glibc, or when ``GRADTAPE_HOLD_MEMORY=0``)."""
    global held
    if os.environ.get("GRADTAPE_HOLD_MEMORY", "1") == "0" or not sys.platform.startswith(
            "linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False  # not glibc (musl has no mallopt): nothing to tune
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    held = bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)) and bool(
        mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
    return held
