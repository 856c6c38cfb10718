"""``keras.ops``' core and math functions: ``cast``, ``shape``,
``convert_to_tensor``, ``stop_gradient``, ``slice``, ``erf``, ``rsqrt``..."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import ops as g
from ...api import control_flow
from ...api import math as tf_math
from ...api.math_special import MATH_MEMBERS
from ...core.state import state
from ...core.tensor import Tensor
from ...core.tensor import convert_to_tensor as _convert
from ...ops.shape import stop_gradient as _stop_gradient
from ..keras_tensor import KerasTensor
from .symbolic import keras_op


def _t(x: Any) -> Tensor:
    return _convert(x)


@keras_op
def cast(x: Any, dtype: Any) -> Tensor:
    return g.cast(_t(x), dtype)


def convert_to_tensor(x: Any, dtype: Any = None, sparse: Any = None,
                      ragged: Any = None) -> Any:
    """A tensor of ``x`` (a KerasTensor stays itself, as in Keras 3)."""
    del sparse, ragged
    if isinstance(x, KerasTensor):
        return x if dtype is None else cast(x, dtype)
    return _convert(x, dtype=dtype)


def convert_to_numpy(x: Any) -> np.ndarray:
    return np.asarray(_t(x).numpy())


def shape(x: Any) -> tuple:
    """The static shape as a tuple (``None`` where a KerasTensor's size is unknown)."""
    if isinstance(x, KerasTensor):
        return x.shape
    return tuple(_t(x).shape)


def dtype(x: Any) -> str:
    return np.dtype(getattr(x, "dtype", np.asarray(x).dtype)).name


def is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


@keras_op
def stop_gradient(variable: Any) -> Tensor:
    return _stop_gradient(_t(variable))


def _block(start_indices: Any, sizes: Any) -> tuple:
    return tuple(builtins.slice(int(s), int(s) + int(n))
                 for s, n in zip(start_indices, sizes))


@keras_op
def slice(inputs: Any, start_indices: Any, shape: Any) -> Tensor:
    """The block of ``shape`` starting at ``start_indices``."""
    return g.getitem(_t(inputs), _block(start_indices, shape))


@keras_op
def erf(x: Any) -> Tensor:
    return MATH_MEMBERS["erf"](_t(x))


@keras_op
def erfinv(x: Any) -> Tensor:
    return MATH_MEMBERS["erfinv"](_t(x))


@keras_op
def rsqrt(x: Any) -> Tensor:
    return tf_math.rsqrt(_t(x))


def cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any]) -> Any:
    return control_flow.cond(pred, true_fn, false_fn)


def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any,
               maximum_iterations: int | None = None) -> Any:
    return control_flow.while_loop(cond, body, loop_vars,
                                   maximum_iterations=maximum_iterations)


def fori_loop(lower: int, upper: int, body_fun: Callable[[Any, Any], Any],
              init_val: Any) -> Any:
    """``body_fun(i, value)`` for ``i`` in ``range(lower, upper)``, from ``init_val``.
    Inside ``@gt.function`` one compiled loop (``i`` a tensor, as Keras's TF backend
    gives it), its bounds values of each call; eagerly a Python loop."""
    if state.tracer is not None:
        lower, upper = _convert(lower), _convert(upper)
        return control_flow.while_loop(
            lambda i, value: i < upper, lambda i, value: (i + 1, body_fun(i, value)),
            (lower, init_val))[1]
    value = init_val
    for i in range(int(lower), int(upper)):
        value = body_fun(i, value)
    return value


__all__ = ["cast", "cond", "convert_to_numpy", "convert_to_tensor", "dtype", "erf",
           "erfinv", "fori_loop", "is_tensor", "rsqrt", "shape", "slice", "stop_gradient",
           "while_loop"]
