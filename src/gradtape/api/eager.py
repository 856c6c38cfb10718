"""TF's questions about the execution mode: ``tf.executing_eagerly`` and
``tf.get_static_value`` (is this tensor's value known without running the function?)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.state import state
from ..core.tensor import Tensor
from ..core.variable import Variable
from ..ir.nodes import Var

__all__ = ["executing_eagerly", "get_static_value"]


def executing_eagerly() -> bool:
    """TF's ``tf.executing_eagerly()``: True outside ``@gt.function`` (and inside its
    ``gt.init_scope()``), False while a ``@gt.function`` traces."""
    return state.tracer is None


def _symbolic(tracer: Any, tensor: Tensor) -> bool:
    """Whether ``tensor`` stands for a value of each call of the trace: an argument, a
    variable's read or an op's result (not a constant or a tensor made before it)."""
    if tensor._id < tracer.start_id:
        return False
    var = tracer.env.get(tensor._id)
    if not isinstance(var, Var):
        return False  # made inside from a value (no op yet), or a literal: a constant
    return not any(var is const for const, _ in tracer.inputs.get("const", ()))


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """TF's ``tf.get_static_value``: ``tensor``'s value as a NumPy array if it is known
    without running the function, else ``None``. Eagerly every tensor's is; while a
    ``@gt.function`` traces, a constant's is and an argument's (or anything computed
    from one) is not. A variable's value can change: ``None``. A non-tensor is returned
    as it is. ``partial`` is accepted (a value is known whole or not at all here)."""
    del partial
    if isinstance(tensor, Variable):
        return None
    if not isinstance(tensor, Tensor):
        return tensor
    tracer = state.tracer
    if tracer is not None and _symbolic(tracer, tensor):
        return None
    return np.asarray(tensor._value)
