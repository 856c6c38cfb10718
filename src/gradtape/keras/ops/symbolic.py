"""The decorator that makes a ``keras.ops`` function take KerasTensors too."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ...ops.promotion import numpy_rule
from ..keras_tensor import any_symbolic, symbolic_apply

__all__ = ["keras_op"]


def keras_op(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` on tensors as it is; on KerasTensors, a recorded ``fn.__name__`` operation
    (the op's name in the graph and in ``summary()``, as Keras 3 names it). Keras promotes
    the operands itself, so gt.config(dtype_promotion="tf") leaves its ops alone."""
    fn = numpy_rule(fn)

    @functools.wraps(fn)
    def op(*args: Any, **kwargs: Any) -> Any:
        if any_symbolic(args, kwargs):
            return symbolic_apply(fn.__name__, fn, args, kwargs)
        return fn(*args, **kwargs)

    return op
