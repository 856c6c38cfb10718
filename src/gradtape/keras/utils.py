"""``keras.utils``: seeding, the session reset and the progress bar."""

from __future__ import annotations

import random as _python_random

import numpy as np

from ..api import random
from .naming import clear_session
from .progbar import Progbar

__all__ = ["Progbar", "clear_session", "set_random_seed"]


def set_random_seed(seed: int) -> None:
    """Seeds Python's ``random``, NumPy's global generator and ``gt.random`` (so layers'
    initial weights, ``Dropout`` and ``fit``'s shuffling repeat), as Keras's does."""
    if not isinstance(seed, (int, np.integer)):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed!r}")
    _python_random.seed(seed)
    np.random.seed(seed)
    random.set_seed(int(seed))
