"""``gt.math``: TF's ``tf.math`` names over gradtape's ops.

A name that is also top-level is the same function object (``gt.math.reduce_sum is
gt.reduce_sum``, ``gt.math.argmax is gt.argmax``): the top-level TF names follow TF.
The TF names gradtape had no op for are defined below from existing ops, so they
differentiate through those.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .. import ops
from ..core.errors import InvalidArgumentError
from ..core.namespaces import namespace as public_namespace
from ..core.tensor import Tensor, _to_array, wrap
from ..ops import nn
from ..ops.registry import operand
from . import array_ops as _array_ops
from . import math_special as _math_special
from . import segment_ops as _segment_ops

__all__ = ["add_n", "count_nonzero", "reduce_all", "reduce_any", "rsqrt", "squared_difference",
           "namespace"]


def add_n(inputs: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.math.add_n``: the elementwise sum of a list of tensors of one shape and
    dtype (differentiable)."""
    del name
    items = list(inputs) if isinstance(inputs, (list, tuple)) else None
    if not items:
        raise ValueError("inputs must be an iterable of at least one Tensor with the same "
                         f"dtype and shape, got {inputs!r}.")
    tensors = [operand(x) for x in items]
    first = tensors[0]
    for t in tensors[1:]:
        if t.shape != first.shape or t.dtype != first.dtype:
            raise InvalidArgumentError(
                "add_n needs inputs of one shape and dtype; got "
                f"{first.dtype.name}{list(first.shape)} and {t.dtype.name}{list(t.shape)}.")
    return functools.reduce(ops.add, tensors[1:], first) if len(tensors) > 1 \
        else ops.identity(first)


def rsqrt(x: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.math.rsqrt``: ``1 / sqrt(x)``."""
    del name
    return ops.reciprocal(ops.sqrt(x))


def squared_difference(x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.math.squared_difference``: ``(x - y) ** 2``."""
    del name
    return ops.square(ops.subtract(x, y))


def _bool_operand(x: Any, what: str) -> Tensor:
    t = x if isinstance(x, Tensor) else wrap(_to_array(x))
    if t.dtype != np.bool_:
        raise InvalidArgumentError(f"{what} needs a bool tensor, got {t.dtype.name}; "
                                   "compare first (x > 0) or gt.cast(x, gt.bool).")
    return t


def reduce_all(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """TF's ``tf.reduce_all``: logical and over ``axis`` (all axes when None)."""
    del name
    return ops.reduce_min(_bool_operand(input_tensor, "reduce_all"), axis, keepdims)


def reduce_any(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """TF's ``tf.reduce_any``: logical or over ``axis`` (all axes when None)."""
    del name
    return ops.reduce_max(_bool_operand(input_tensor, "reduce_any"), axis, keepdims)


def count_nonzero(input: Any, axis: Any = None, keepdims: bool = False,
                  dtype: Any = np.int64, name: str | None = None) -> Tensor:
    """TF's ``tf.math.count_nonzero``: how many elements are not zero (int64)."""
    del name
    nonzero = ops.cast(ops.not_equal(input, 0), dtype)
    return ops.reduce_sum(nonzero, axis, keepdims)


# TF's tf.math name -> the function (top-level objects where they exist).
_SAME_AS_TOP_LEVEL = [
    "abs", "acos", "acosh", "add", "argmax", "argmin", "asin", "asinh", "atan", "atan2",
    "atanh", "ceil", "conj", "cos", "cosh", "cumprod", "cumsum", "divide", "equal", "exp",
    "expm1", "floor", "floordiv", "floormod", "greater", "greater_equal", "imag", "less",
    "less_equal", "log", "log1p", "log_softmax", "logical_and", "logical_not", "logical_or",
    "logical_xor", "maximum", "minimum",
    "mod", "multiply", "negative", "not_equal", "pow", "real", "reciprocal", "reduce_logsumexp",
    "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_std", "reduce_sum",
    "reduce_variance", "rint", "round", "sigmoid", "sign", "sin", "sinh", "softmax",
    "softplus", "sqrt", "square", "subtract", "tan", "tanh",
]
_SAME_AS_TOP_LEVEL += ["truncatemod"]
_RENAMED = {"is_nan": ops.isnan, "is_finite": ops.isfinite, "is_inf": ops.isinf,
            "truediv": ops.divide, "log_sigmoid": nn.log_sigmoid}
_DEFINED_HERE = {"add_n": add_n, "rsqrt": rsqrt, "squared_difference": squared_difference,
                 "reduce_all": reduce_all, "reduce_any": reduce_any,
                 "count_nonzero": count_nonzero, "l2_normalize": nn.l2_normalize,
                 **{name: getattr(_segment_ops, name) for name in _segment_ops.__all__
                    if "segment" in name},
                 **{name: getattr(_array_ops, name) for name in
                    ("top_k", "bincount", "divide_no_nan")}}


namespace = public_namespace(
    "gradtape.math", "TF's tf.math names over gradtape's ops.",
    {**{name: getattr(ops, name) for name in _SAME_AS_TOP_LEVEL}, **_RENAMED, **_DEFINED_HERE,
     **_math_special.MATH_MEMBERS, "special": _math_special.special_namespace})
