"""The thread-local stack of tapes that are recording right now.

Kept apart from ``tape.py`` so the dispatch hot path (``ops.registry.bind``) can read it
without importing the tape machinery.
"""

from __future__ import annotations

import os
import sys
import threading


class _State(threading.local):
    def __init__(self) -> None:
        # Tapes whose context is open and not paused by stop_recording(), innermost last.
        self.recording: list = []
        # Forward accumulators that are active, innermost last.
        self.accumulators: list = []


state = _State()

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_location() -> tuple[str, int] | None:
    """(file, line) of the innermost frame outside gradtape: where the user called the op."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR):
            return (filename, frame.f_lineno)
        frame = frame.f_back
    return None
