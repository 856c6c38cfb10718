"""``gt.config(dtype_promotion="tf")``: ops follow TF's dtype rule instead of NumPy's
promotion.

In "numpy" mode (the default) ``float32 + float64`` is float64 and ``int32 + float32``
float64, as NumPy computes them. In "tf" mode two tensors of different dtypes given to
one op raise TF's ``InvalidArgumentError`` ("cannot compute AddV2 as input
#1(zero-based) was expected to be a float tensor but is a double tensor"), as TF's
kernels do. The rule lives in one place: ``bind`` calls :func:`check_operands` for every
op, and a primitive declares which of its inputs must share a dtype (``same_dtype``:
binary ops and comparisons, ``where``'s branches, ``clip``, ``matmul``, ``einsum``,
``concatenate``, ``solve``, ``convolve``, and so every op built from them: ``dot``,
``tensordot``, ``stack``, ``add_n``...). Eager ops and the ops of a ``@gt.function``
trace (which run on tensors while it traces) are checked; the programs gradtape builds
for a backward are not (their values are IR values, not tensors).

Beside a tensor, a NumPy array or scalar is converted to the tensor's dtype as TF
converts it (a float or integer array beside a float tensor, an integer one beside an
integer tensor); a float array or Python float beside an integer tensor raises TF's
``TypeError`` ("Cannot convert 0.5 to EagerTensor of dtype int32"). Python numbers are
weak in both modes. ``matmul`` follows ``tf.matmul``: its first operand is converted on
its own, so a float64 array there meets a float32 tensor and raises. The binary ops do
the conversion in ``_prepare``, which this module installs when the option changes; the
default mode costs ``bind`` one global read.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import config as _config
from ..core.errors import InvalidArgumentError
from ..core.tensor import Tensor
from . import elementwise, registry
from .linalg import products
from .operands import _NUMPY1, weak_scalars
from .registry import holds_tensor

__all__ = ["MODES", "check_operands", "numpy_rule"]

MODES = ("numpy", "tf")

# gradtape's primitive name -> the TF op a mismatch names, as TF's message does.
_TF_OPS = {"add": "AddV2", "subtract": "Sub", "multiply": "Mul", "divide": "RealDiv",
           "power": "Pow", "maximum": "Maximum", "minimum": "Minimum", "arctan2": "Atan2",
           "mod": "FloorMod", "fmod": "TruncateMod", "floor_divide": "FloorDiv",
           "less": "Less", "less_equal": "LessEqual", "greater": "Greater",
           "greater_equal": "GreaterEqual", "equal": "Equal", "not_equal": "NotEqual",
           "logical_and": "LogicalAnd", "logical_or": "LogicalOr",
           "matmul": "MatMul", "matvec": "MatMul", "vecmat": "MatMul",
           "einsum": "Einsum", "concatenate": "ConcatV2", "where": "SelectV2",
           "clip": "ClipByValue", "solve": "MatrixSolve", "convolve": "Conv"}
# TF's names of the dtypes whose NumPy names differ, in its messages.
_TF_DTYPE_NAMES = {"float16": "half", "float32": "float", "float64": "double"}


def _tf_name(dtype: np.dtype) -> str:
    return _TF_DTYPE_NAMES.get(dtype.name, dtype.name)


class _Scope(threading.local):
    numpy_rule = 0  # > 0 inside a function of a namespace that promotes by itself


_scope = _Scope()


def numpy_rule(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` keeping NumPy's promotion under ``dtype_promotion="tf"``: for the
    namespaces that promote their operands themselves before TF's kernels see them
    (``tf.experimental.numpy``, ``keras.ops`` and KerasTensor arithmetic: TF's tnp and
    Keras 3 do). Off, it costs one global read."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if registry._dtype_rule is None:
            return function(*args, **kwargs)
        _scope.numpy_rule += 1
        try:
            return function(*args, **kwargs)
        finally:
            _scope.numpy_rule -= 1

    return wrapper


def check_operands(prim: Any, args: tuple) -> None:
    """TF's rule for one op: the tensors among the inputs ``prim.same_dtype`` names
    share one dtype, or TF's ``InvalidArgumentError`` names the first that differs."""
    group = prim.same_dtype
    if group is None or _scope.numpy_rule:
        return
    start = group.indices(len(args))[0]
    expected = None
    for index, arg in enumerate(args[group], start):
        if isinstance(arg, Tensor):
            dtype = arg.dtype
            if expected is None:
                expected = dtype
            elif dtype != expected:
                raise _mismatch(prim, expected, dtype, index)


def _mismatch(prim: Any, expected: np.dtype, got: np.dtype,
              index: int) -> InvalidArgumentError:
    op = _TF_OPS.get(prim.name, prim.name)
    return InvalidArgumentError(
        f"cannot compute {op} as input #{index}(zero-based) was expected to be a "
        f"{_tf_name(expected)} tensor but is a {_tf_name(got)} tensor [Op:{op}] "
        f"(gt.config(dtype_promotion=\"tf\") raises where TF does: cast one operand, "
        f"e.g. gt.cast(x, gt.{expected.name}), or feed {expected.name} data).")


def _tensor_dtype(x: Any) -> np.dtype | None:
    if isinstance(x, Tensor):
        dtype = x.dtype
        return dtype if isinstance(dtype, np.dtype) else None
    return None


def _converted(value: Any, dtype: np.dtype) -> Any:
    """A NumPy array, NumPy scalar or Python number beside a tensor of ``dtype``, as TF
    converts it; IR values, lists and other kinds are left to the op."""
    if isinstance(value, (np.ndarray, np.generic)):
        kind = value.dtype.kind
    elif value.__class__ is float:
        kind = "F"  # a Python float: weak, but it cannot become an integer
    else:
        return value
    if dtype.kind == "f" and kind in "fiu" and value.dtype != dtype:
        return value.astype(dtype)
    if dtype.kind in "iu" and kind in "fF":
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name} "
                        f"(gt.config(dtype_promotion=\"tf\") follows TF: cast the tensor "
                        f"first, e.g. gt.cast(x, gt.float32)).")
    if dtype.kind in "iu" and kind in "iu" and value.dtype != dtype:
        return value.astype(dtype)
    return value


def _tf_binary(prim: Any, x: Any, y: Any) -> tuple[Any, Any]:
    """The conversion TF makes before a binary op: the non-tensor operand takes the
    tensor's dtype (``bind`` then checks two tensors)."""
    if _scope.numpy_rule:
        return weak_scalars(x, y) if _NUMPY1 else (x, y)
    x_dtype, y_dtype = _tensor_dtype(x), _tensor_dtype(y)
    if x_dtype is not None and y_dtype is None:
        y = _converted(y, x_dtype)
    elif y_dtype is not None and x_dtype is None:
        x = _converted(x, y_dtype)
    return weak_scalars(x, y) if _NUMPY1 else (x, y)


def _tf_matmul(prim: Any, a: Any, b: Any) -> tuple[Any, Any]:
    """``tf.matmul`` converts ``a`` on its own and ``b`` to ``a``'s dtype."""
    if _scope.numpy_rule:
        return a, b
    a_dtype = _tensor_dtype(a)
    if a_dtype is not None and _tensor_dtype(b) is None:
        b = _converted(b, a_dtype)
    return a, b


def _tf_list(values: Any) -> Any:
    """TF's conversion of one list input: the non-tensors take its first tensor's dtype
    (Python numbers too: a list has no weak scalars once packed)."""
    dtype = next((d for d in map(_tensor_dtype, values) if d is not None), None)
    if dtype is None or _scope.numpy_rule:
        return values
    return [v if isinstance(v, Tensor) else _converted(_array_of(v), dtype) for v in values]


def _array_of(value: Any) -> Any:
    """A Python number or a list of numbers as NumPy's array (a list holding a tensor
    is left for ``operand`` to stack)."""
    if value.__class__ in (bool, int, float) or \
            isinstance(value, (list, tuple)) and not holds_tensor(value):
        return np.asarray(value)
    return value


def _numpy1_weak(prim: Any, x: Any, y: Any) -> tuple[Any, Any]:
    return weak_scalars(x, y)


def check_mode(value: Any) -> str:
    if value not in MODES:
        raise ValueError(f"gt.config: dtype_promotion must be one of "
                         f"{', '.join(map(repr, MODES))}, got {value!r}.")
    return value


def install(mode: str) -> None:
    """Give ``bind`` the check and the binary ops the ``_prepare`` of ``mode``."""
    tf_mode = mode == "tf"
    registry._dtype_rule = check_operands if tf_mode else None
    registry._list_rule = _tf_list if tf_mode else None
    elementwise._prepare = _tf_binary if tf_mode else (_numpy1_weak if _NUMPY1 else None)
    products._prepare = _tf_matmul if tf_mode else None


_config.on_change.setdefault("dtype_promotion", []).append(install)
_config.validators["dtype_promotion"] = check_mode
install(_config.options.dtype_promotion)
