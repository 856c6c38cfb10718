"""``gt.scipy``: SciPy's ``stats``, ``special``, ``signal`` and ``linalg`` functions on
tensors, differentiable (like ``jax.scipy``).

SciPy itself converts tensors with ``np.asarray``, so ``scipy.stats.norm.pdf(t)`` cannot
see a tape; these functions are gradtape's own. The submodules load on first use, and
SciPy is imported only when a function needs one of its implementations (``pip install
-e '.[scipy]'`` in the clone).

Imports: ``core``, ``ir``, ``ops``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["linalg", "signal", "special", "stats"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'gradtape.scipy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return list(__all__)
