"""``np.random.choice(n, p=t)`` with a tensor ``p`` draws as with ``t``'s array.

NumPy's random functions do not dispatch to ``__array_function__``; they convert a
tensor with ``np.asarray``, which gives the same values, so most of them already draw
as with the array (``multinomial``, ``dirichlet``, ``permutation``, ``choice(t)``...).
``choice``'s ``p`` is the exception: NumPy checks that ``p`` sums to 1 within the
tolerance of ``p``'s own float dtype only when ``p`` is an ndarray, and within
float64's (1.5e-8) otherwise, so a float32 softmax as a tensor is rejected where its
array is accepted (the actor-critic pattern
``np.random.choice(n, p=np.squeeze(action_probs))``: ``np.squeeze`` of a tensor is a
tensor). NumPy has no protocol for this, so gradtape puts a thin wrapper over the
module-level ``np.random.choice``: it hands NumPy each tensor's array (the drop warning
names the user's line when a tape watches the tensor) and calls NumPy's own function on
the same global state, so seeded draws are the array's. The methods of a
``Generator`` or ``RandomState`` instance belong to C types that cannot be wrapped:
``docs/semantics.md`` says to pass ``p=t.numpy()`` there.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..core.tensor import Tensor
from .numpy_dispatch import as_arrays

__all__ = ["install"]

_WRAPPED = ("choice",)  # the module-level functions whose result differs for a tensor


def _wrapper(name: str, numpy_function: Any) -> Any:
    label = f"np.random.{name}"

    @functools.wraps(numpy_function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(a, Tensor) for a in args) or \
                any(isinstance(v, Tensor) for v in kwargs.values()):
            args = as_arrays(args, label)
            kwargs = {k: as_arrays(v, label) for k, v in kwargs.items()}
        return numpy_function(*args, **kwargs)

    wrapper.numpy_function = numpy_function  # NumPy's own, for whoever needs it
    return wrapper


def install() -> None:
    """Wrap the module-level functions once (importing gradtape twice keeps one wrapper)."""
    for name in _WRAPPED:
        current = getattr(np.random, name)
        if getattr(current, "numpy_function", None) is None:
            setattr(np.random, name, _wrapper(name, current))


install()
