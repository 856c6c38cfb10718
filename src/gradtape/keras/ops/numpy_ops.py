"""``keras.ops``' NumPy-like functions (Keras 3's signatures: ``sum(x, axis=None,
keepdims=False)``...) on gradtape's ops, so tapes differentiate through them. Values
follow NumPy's definitions; a function's default dtype is Keras's (``float32`` for
``zeros``, ``int32`` for ``argmax``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops as g
from ...api import creation
from ...core.tensor import Tensor, convert_to_tensor
from .symbolic import keras_op

_FLOATX = "float32"


def _t(x: Any) -> Tensor:
    return convert_to_tensor(x)


def _flattened(x: Any, axis: Any) -> tuple[Tensor, Any]:
    """NumPy's ``axis=None``: the op runs over the flattened array."""
    x = _t(x)
    return (g.reshape(x, (-1,)), 0) if axis is None else (x, axis)


# --- elementwise, one operand --------------------------------------------------------------
def _unary(name: str, fn: Any) -> Any:
    def op(x: Any) -> Tensor:
        return fn(_t(x))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Keras's ``ops.{name}(x)``: elementwise, as NumPy's."
    return keras_op(op)


absolute = _unary("absolute", g.abs)
abs = absolute  # Keras's alias: recorded as "absolute", as Keras 3 does
arccos = _unary("arccos", g.arccos)
arccosh = _unary("arccosh", g.arccosh)
arcsin = _unary("arcsin", g.arcsin)
arcsinh = _unary("arcsinh", g.arcsinh)
arctan = _unary("arctan", g.arctan)
arctanh = _unary("arctanh", g.arctanh)
ceil = _unary("ceil", g.ceil)
conjugate = _unary("conjugate", g.conj)
conj = conjugate
cos = _unary("cos", g.cos)
cosh = _unary("cosh", g.cosh)
exp = _unary("exp", g.exp)
expm1 = _unary("expm1", g.expm1)
floor = _unary("floor", g.floor)
imag = _unary("imag", g.imag)
isfinite = _unary("isfinite", g.isfinite)
isinf = _unary("isinf", g.isinf)
isnan = _unary("isnan", g.isnan)
log = _unary("log", g.log)
log10 = _unary("log10", g.log10)
log1p = _unary("log1p", g.log1p)
log2 = _unary("log2", g.log2)
logical_not = _unary("logical_not", g.logical_not)
negative = _unary("negative", g.negative)
real = _unary("real", g.real)
reciprocal = _unary("reciprocal", g.reciprocal)
sign = _unary("sign", g.sign)
sin = _unary("sin", g.sin)
sinh = _unary("sinh", g.sinh)
sqrt = _unary("sqrt", g.sqrt)
square = _unary("square", g.square)
tan = _unary("tan", g.tan)
tanh = _unary("tanh", g.tanh)
ravel = _unary("ravel", lambda x: g.reshape(x, (-1,)))
copy = _unary("copy", g.identity)


# --- elementwise, two operands (NumPy's broadcasting) --------------------------------------
def _binary(name: str, fn: Any) -> Any:
    def op(x1: Any, x2: Any) -> Tensor:
        return fn(_t(x1), _t(x2))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Keras's ``ops.{name}(x1, x2)``: elementwise, broadcast as NumPy's."
    return keras_op(op)


add = _binary("add", g.add)
subtract = _binary("subtract", g.subtract)
multiply = _binary("multiply", g.multiply)
divide = _binary("divide", g.divide)
true_divide = _binary("true_divide", g.divide)
floor_divide = _binary("floor_divide", g.floor_divide)
mod = _binary("mod", g.mod)
power = _binary("power", g.power)
maximum = _binary("maximum", g.maximum)
minimum = _binary("minimum", g.minimum)
arctan2 = _binary("arctan2", g.arctan2)
logaddexp = _binary("logaddexp", g.logaddexp)
equal = _binary("equal", g.equal)
not_equal = _binary("not_equal", g.not_equal)
less = _binary("less", g.less)
less_equal = _binary("less_equal", g.less_equal)
greater = _binary("greater", g.greater)
greater_equal = _binary("greater_equal", g.greater_equal)
logical_and = _binary("logical_and", g.logical_and)
logical_or = _binary("logical_or", g.logical_or)
logical_xor = _binary("logical_xor", g.logical_xor)
matmul = _binary("matmul", g.matmul)
dot = _binary("dot", g.dot)
outer = _binary("outer", g.outer)
hypot = _binary("hypot", g.hypot)


@keras_op
def round(x: Any, decimals: int = 0) -> Tensor:
    """NumPy's ``round`` (halves to even)."""
    if decimals == 0:
        return g.round(_t(x))
    scale = 10.0 ** decimals
    return g.round(_t(x) * scale) / scale


@keras_op
def clip(x: Any, x_min: Any, x_max: Any) -> Tensor:
    """``x`` limited to ``[x_min, x_max]``."""
    return g.clip(_t(x), x_min, x_max)


@keras_op
def where(condition: Any, x1: Any = None, x2: Any = None) -> Any:
    """``x1`` where ``condition``, else ``x2``; with neither, the indices (NumPy's
    ``nonzero``) as a tuple of int32 tensors."""
    if x1 is None and x2 is None:
        indices = np.nonzero(np.asarray(_t(condition).numpy()))
        return tuple(convert_to_tensor(i.astype(np.int32)) for i in indices)
    if x1 is None or x2 is None:
        raise ValueError("keras.ops.where takes both `x1` and `x2`, or neither.")
    return g.where(_t(condition), _t(x1), _t(x2))


# --- reductions ---------------------------------------------------------------------------
def _reduction(name: str, fn: Any) -> Any:
    def op(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
        return fn(_t(x), axis=_axis(axis), keepdims=keepdims)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Keras's ``ops.{name}(x, axis=None, keepdims=False)``."
    return keras_op(op)


def _axis(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


sum = _reduction("sum", g.sum)
mean = _reduction("mean", g.mean)
max = _reduction("max", g.max)
min = _reduction("min", g.min)
amax = _reduction("amax", g.max)
amin = _reduction("amin", g.min)
std = _reduction("std", g.std)
var = _reduction("var", g.var)
prod = _reduction("prod", g.prod)
logsumexp = _reduction("logsumexp", g.logsumexp)


@keras_op
def any(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return g.cast(g.max(g.cast(g.not_equal(_t(x), 0), "int8"), axis=_axis(axis),
                        keepdims=keepdims), "bool")


@keras_op
def all(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return g.cast(g.min(g.cast(g.not_equal(_t(x), 0), "int8"), axis=_axis(axis),
                        keepdims=keepdims), "bool")


@keras_op
def count_nonzero(x: Any, axis: Any = None) -> Tensor:
    return g.sum(g.cast(g.not_equal(_t(x), 0), "int32"), axis=_axis(axis))


@keras_op
def average(x: Any, axis: Any = None, weights: Any = None) -> Tensor:
    """NumPy's ``average``: the mean, weighted by ``weights`` along ``axis``."""
    x = _t(x)
    if weights is None:
        return g.mean(x, axis=axis)
    weights = g.cast(_t(weights), x.dtype)
    if axis is not None and weights.ndim == 1 and x.ndim > 1:
        shape = [1] * x.ndim
        shape[axis] = -1
        weights = g.reshape(weights, shape)
    return g.sum(x * weights, axis=axis) / g.sum(weights * g.ones_like(x), axis=axis)


def _index_of(find: Any, x: Any, axis: Any, keepdims: bool) -> Tensor:
    """``find`` (``g.argmax``/``g.argmin``) as Keras's: int32, of the flattened ``x``
    when ``axis`` is None (``keepdims`` then gives ``x``'s rank of size-1 axes, NumPy's
    shape), with -0.0 below 0.0 as Keras's backends order them."""
    rank = _t(x).ndim
    x, axis_ = _flattened(_signed_zeros_ordered(_t(x)), axis)
    found = g.cast(find(x, axis=axis_), "int32")
    if keepdims:
        found = g.reshape(found, [1] * rank) if axis is None else \
            g.expand_dims(found, axis)
    return found


def _signed_zeros_ordered(x: Tensor) -> Tensor:
    """Keras's argmax/argmin input: a float ``x`` (at least float32) with each -0.0 as
    the smallest negative number, so 0.0 wins argmax over -0.0 and -0.0 wins argmin."""
    if x.dtype.kind != "f" or x.ndim == 0:
        return x
    if x.dtype.itemsize < 4:
        x = g.cast(x, "float32")
    negative_zero = g.logical_and(g.equal(x, 0.0), np.signbit(x))
    return g.where(negative_zero, -np.finfo(x.dtype).tiny, x)


@keras_op
def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """The index of the largest entry (of the flattened ``x`` when ``axis`` is None)."""
    return _index_of(g.argmax, x, axis, keepdims)


@keras_op
def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """The index of the smallest entry (of the flattened ``x`` when ``axis`` is None)."""
    return _index_of(g.argmin, x, axis, keepdims)


@keras_op
def cumsum(x: Any, axis: Any = None, dtype: Any = None) -> Tensor:
    x, axis = _flattened(x, axis)
    return g.cumsum(x if dtype is None else g.cast(x, dtype), axis=axis)


@keras_op
def cumprod(x: Any, axis: Any = None, dtype: Any = None) -> Tensor:
    x, axis = _flattened(x, axis)
    return g.cumprod(x if dtype is None else g.cast(x, dtype), axis=axis)


@keras_op
def sort(x: Any, axis: int = -1) -> Tensor:
    return g.sort(_t(x), axis=axis)


@keras_op
def argsort(x: Any, axis: int = -1) -> Tensor:
    return g.cast(g.argsort(_t(x), axis=axis, stable=True), "int32")


@keras_op
def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    return g.trace(_t(x), offset=offset, axis1=axis1, axis2=axis2)


@keras_op
def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    return g.diagonal(_t(x), offset=offset, axis1=axis1, axis2=axis2)


# --- shapes --------------------------------------------------------------------------------
@keras_op
def reshape(x: Any, newshape: Any) -> Tensor:
    """``x`` in ``newshape`` (one entry may be -1; ``None`` counts as -1)."""
    shape = [-1 if d is None else d for d in ((newshape,) if isinstance(newshape, int)
                                             else newshape)]
    return g.reshape(_t(x), shape)


@keras_op
def transpose(x: Any, axes: Any = None) -> Tensor:
    return g.transpose(_t(x), axes=None if axes is None else tuple(axes))


@keras_op
def expand_dims(x: Any, axis: Any) -> Tensor:
    x = _t(x)
    for a in sorted(axis) if isinstance(axis, (list, tuple)) else [axis]:
        x = g.expand_dims(x, a)
    return x


@keras_op
def squeeze(x: Any, axis: Any = None) -> Tensor:
    return g.squeeze(_t(x), axis=_axis(axis))


@keras_op
def moveaxis(x: Any, source: Any, destination: Any) -> Tensor:
    return g.moveaxis(_t(x), source, destination)


@keras_op
def swapaxes(x: Any, axis1: int, axis2: int) -> Tensor:
    return g.swapaxes(_t(x), axis1, axis2)


@keras_op
def broadcast_to(x: Any, shape: Any) -> Tensor:
    return g.broadcast_to(_t(x), tuple(shape))


@keras_op
def flip(x: Any, axis: Any = None) -> Tensor:
    return g.flip(_t(x), axis=axis)


@keras_op
def roll(x: Any, shift: Any, axis: Any = None) -> Tensor:
    if axis is None:  # NumPy: roll the flattened array, then restore the shape
        x = _t(x)
        return g.reshape(g.roll(g.reshape(x, (-1,)), shift, axis=0), tuple(x.shape))
    return g.roll(_t(x), shift, axis=axis)


@keras_op
def tile(x: Any, repeats: Any) -> Tensor:
    """NumPy's ``tile``: ``repeats`` shorter than ``x.ndim`` counts from the last axis."""
    x = _t(x)
    repeats = [repeats] if isinstance(repeats, int) else list(repeats)
    while x.ndim < len(repeats):
        x = g.expand_dims(x, 0)
    repeats = [1] * (x.ndim - len(repeats)) + repeats
    return g.tile(x, repeats)


@keras_op
def repeat(x: Any, repeats: Any, axis: Any = None) -> Tensor:
    x, axis = _flattened(x, axis)
    return g.repeat(x, repeats, axis=axis)


@keras_op
def concatenate(xs: Any, axis: int | None = 0) -> Tensor:
    tensors = [_t(x) for x in xs]
    if axis is None:
        tensors, axis = [g.reshape(t, (-1,)) for t in tensors], 0
    return g.concatenate(tensors, axis=axis)


@keras_op
def append(x1: Any, x2: Any, axis: int | None = None) -> Tensor:
    return concatenate([x1, x2], axis=axis)


@keras_op
def stack(x: Any, axis: int = 0) -> Tensor:
    return g.stack([_t(t) for t in x], axis=axis)


@keras_op
def vstack(xs: Any) -> Tensor:
    return g.vstack([_t(x) for x in xs])


@keras_op
def hstack(xs: Any) -> Tensor:
    return g.hstack([_t(x) for x in xs])


@keras_op
def unstack(x: Any, num: int | None = None, axis: int = 0) -> list[Tensor]:
    return g.unstack(_t(x), num=num, axis=axis)


@keras_op
def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """NumPy's ``split``: ``n`` equal parts, or cut before each index of a list."""
    x = _t(x)
    if isinstance(indices_or_sections, int):
        if x.shape[axis] % indices_or_sections:
            raise ValueError(f"array split does not result in an equal division: "
                             f"{x.shape[axis]} entries into {indices_or_sections}.")
        return g.split(x, indices_or_sections, axis=axis)
    bounds = [0, *indices_or_sections, x.shape[axis]]
    return g.split(x, [b - a for a, b in zip(bounds, bounds[1:])], axis=axis)


@keras_op
def take(x: Any, indices: Any, axis: int | None = None) -> Tensor:
    return g.take(_t(x), _t(indices), axis=axis)


@keras_op
def take_along_axis(x: Any, indices: Any, axis: int | None = None) -> Tensor:
    x, axis = _flattened(x, axis) if axis is None else (_t(x), axis)
    return g.take_along_axis(x, _t(indices), axis=axis)


@keras_op
def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = None) -> Tensor:
    x = _t(x)
    widths = np.broadcast_to(np.asarray(pad_width), (x.ndim, 2)).tolist()
    return g.pad(x, widths, mode=mode.upper(), constant_values=constant_values or 0)


@keras_op
def tril(x: Any, k: int = 0) -> Tensor:
    return g.tril(_t(x), k=k)


@keras_op
def triu(x: Any, k: int = 0) -> Tensor:
    return g.triu(_t(x), k=k)


@keras_op
def einsum(subscripts: str, *operands: Any) -> Tensor:
    return g.einsum(subscripts, *[_t(x) for x in operands])


@keras_op
def tensordot(x1: Any, x2: Any, axes: Any = 2) -> Tensor:
    return g.tensordot(_t(x1), _t(x2), axes=axes)


@keras_op
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tensor:
    """NumPy's ``linalg.norm`` (vector norms along an axis, matrix norms along two)."""
    return np.linalg.norm(_t(x), ord=ord, axis=_axis(axis), keepdims=keepdims)


@keras_op
def size(x: Any) -> int:
    return int(np.prod(_t(x).shape))


def ndim(x: Any) -> int:
    """The number of axes (of a tensor or a KerasTensor)."""
    return len(x.shape) if hasattr(x, "shape") else np.ndim(x)


# --- creation ------------------------------------------------------------------------------
def zeros(shape: Any, dtype: Any = None) -> Tensor:
    return creation.zeros(shape, dtype=dtype or _FLOATX)


def ones(shape: Any, dtype: Any = None) -> Tensor:
    return creation.ones(shape, dtype=dtype or _FLOATX)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    return convert_to_tensor(np.full(shape, fill_value, dtype=dtype or _default(fill_value)))


def _default(value: Any) -> str:
    """Keras's default dtype of a Python value: ``int32`` for ints, ``float32``."""
    kind = np.asarray(value).dtype.kind
    return "bool" if kind == "b" else "int32" if kind in "iu" else _FLOATX


@keras_op
def zeros_like(x: Any, dtype: Any = None) -> Tensor:
    x = _t(x)
    return g.zeros_like(x) if dtype is None else g.cast(g.zeros_like(x), dtype)


@keras_op
def ones_like(x: Any, dtype: Any = None) -> Tensor:
    x = _t(x)
    return g.ones_like(x) if dtype is None else g.cast(g.ones_like(x), dtype)


@keras_op
def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    x = _t(x)
    return convert_to_tensor(np.full(tuple(x.shape), fill_value, dtype=dtype or x.dtype))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Tensor:
    """NumPy's ``arange``; ints give ``int32`` and floats ``float32``, as Keras's."""
    if stop is None:
        start, stop = 0, start
    return convert_to_tensor(np.arange(start, stop, step).astype(
        dtype or _default([start, stop, step])))


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    values, step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True, axis=axis)
    tensor = convert_to_tensor(values.astype(dtype or _FLOATX))
    return (tensor, step) if retstep else tensor


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Tensor:
    return convert_to_tensor(np.eye(N, M, k, dtype=dtype or _FLOATX))


def identity(n: int, dtype: Any = None) -> Tensor:
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Tensor:
    return convert_to_tensor(np.tri(N, M, k, dtype=dtype or _FLOATX))


def array(x: Any, dtype: Any = None) -> Tensor:
    return convert_to_tensor(x, dtype=dtype)

__all__ = ["abs", "absolute", "add", "all", "amax", "amin", "any", "append", "arange",
           "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
           "argmax", "argmin", "argsort", "array", "average", "broadcast_to", "ceil",
           "clip", "concatenate", "conj", "conjugate", "copy", "cos", "cosh",
           "count_nonzero", "cumprod", "cumsum", "diagonal", "divide", "dot", "einsum",
           "equal", "exp", "expand_dims", "expm1", "eye", "flip", "floor",
           "floor_divide", "full", "full_like", "greater", "greater_equal", "hstack",
           "hypot", "identity", "imag", "isfinite", "isinf", "isnan", "less",
           "less_equal", "linspace", "log", "log10", "log1p", "log2", "logaddexp",
           "logical_and", "logical_not", "logical_or", "logical_xor", "logsumexp",
           "matmul", "max", "maximum", "mean", "min", "minimum", "mod", "moveaxis",
           "multiply", "ndim", "negative", "norm", "not_equal", "ones", "ones_like",
           "outer", "pad", "power", "prod", "ravel", "real", "reciprocal", "repeat",
           "reshape", "roll", "round", "sign", "sin", "sinh", "size", "sort", "split",
           "sqrt", "square", "squeeze", "stack", "std", "subtract", "sum", "swapaxes",
           "take", "take_along_axis", "tan", "tanh", "tensordot", "tile", "trace",
           "transpose", "tri", "tril", "triu", "true_divide", "unstack", "var",
           "vstack", "where", "zeros", "zeros_like"]
