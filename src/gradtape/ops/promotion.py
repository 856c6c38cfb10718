"""``gt.config(dtype_promotion="tf")``: binary ops follow TF's dtype rule instead of
NumPy's promotion.

In "numpy" mode (the default) ``float32 + float64`` is float64, as NumPy computes it. In
"tf" mode two tensors of different float dtypes raise TF's ``InvalidArgumentError``
("cannot compute AddV2 as input #1(zero-based) was expected to be a float tensor but is a
double tensor"), and a NumPy array or scalar beside a tensor is converted to the
tensor's dtype, as TF converts it; Python numbers stay weak (they take the tensor's dtype)
in both modes. ``matmul`` follows ``tf.matmul``: its first operand sets the dtype.

The binary ops call ``_prepare`` only when it is set (under NumPy 1 it makes Python
scalars weak; in "tf" mode it also checks), so the default mode costs the one global
read the ops already made. This module installs it when the option changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import config as _config
from ..core.errors import InvalidArgumentError
from ..core.tensor import Tensor
from . import elementwise
from .linalg import products
from .operands import _NUMPY1, weak_scalars

__all__ = ["MODES"]

MODES = ("numpy", "tf")

# gradtape's primitive name -> the TF op a mismatch names, as TF's message does.
_TF_OPS = {"add": "AddV2", "subtract": "Sub", "multiply": "Mul", "divide": "RealDiv",
           "power": "Pow", "maximum": "Maximum", "minimum": "Minimum", "arctan2": "Atan2",
           "mod": "FloorMod", "fmod": "TruncateMod", "floor_divide": "FloorDiv",
           "less": "Less", "less_equal": "LessEqual", "greater": "Greater",
           "greater_equal": "GreaterEqual", "equal": "Equal", "not_equal": "NotEqual",
           "matmul": "MatMul"}
# TF's names of the float dtypes in its message.
_TF_DTYPE_NAMES = {"float16": "half", "float32": "float", "float64": "double"}


def _numpy_dtype(x: Any) -> np.dtype | None:
    value = x._value if isinstance(x, Tensor) else x
    dtype = getattr(value, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else None


def _mismatch(prim: Any, expected: np.dtype, got: np.dtype) -> InvalidArgumentError:
    op = _TF_OPS.get(prim.name, prim.name)
    want, have = (_TF_DTYPE_NAMES.get(d.name, d.name) for d in (expected, got))
    return InvalidArgumentError(
        f"cannot compute {op} as input #1(zero-based) was expected to be a {want} tensor "
        f"but is a {have} tensor [Op:{op}] (gt.config(dtype_promotion=\"tf\") raises "
        f"where TF does: cast one operand, e.g. gt.cast(x, gt.{expected.name}), or feed "
        f"{expected.name} data).")


def _converted(value: Any, dtype: np.dtype) -> Any:
    """A NumPy array or scalar beside a float tensor, as TF converts it: in the tensor's
    float dtype. Python numbers, other kinds and IR values are left to the op."""
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f" \
            and value.dtype != dtype:
        return value.astype(dtype)
    return value


def _tf_rule(prim: Any, x: Any, y: Any, first_sets_dtype: bool = False) -> tuple[Any, Any]:
    x_dtype, y_dtype = _numpy_dtype(x), _numpy_dtype(y)
    x_float = x_dtype is not None and x_dtype.kind == "f"
    y_float = y_dtype is not None and y_dtype.kind == "f"
    if x_float and y_float and x_dtype != y_dtype:
        x_tensor, y_tensor = isinstance(x, Tensor), isinstance(y, Tensor)
        if x_tensor and y_tensor or first_sets_dtype and y_tensor:
            raise _mismatch(prim, x_dtype, y_dtype)
        if x_tensor:
            y = _converted(y, x_dtype)
        elif y_tensor:
            x = _converted(x, y_dtype)
    return weak_scalars(x, y) if _NUMPY1 else (x, y)


def _tf_binary(prim: Any, x: Any, y: Any) -> tuple[Any, Any]:
    return _tf_rule(prim, x, y)


def _tf_matmul(prim: Any, a: Any, b: Any) -> tuple[Any, Any]:
    return _tf_rule(prim, a, b, first_sets_dtype=True)


def _numpy1_weak(prim: Any, x: Any, y: Any) -> tuple[Any, Any]:
    return weak_scalars(x, y)


def check_mode(value: Any) -> str:
    if value not in MODES:
        raise ValueError(f"gt.config: dtype_promotion must be one of "
                         f"{', '.join(map(repr, MODES))}, got {value!r}.")
    return value


def install(mode: str) -> None:
    """Give the binary ops the ``_prepare`` of ``mode``."""
    tf_mode = mode == "tf"
    elementwise._prepare = _tf_binary if tf_mode else (_numpy1_weak if _NUMPY1 else None)
    products._prepare = _tf_matmul if tf_mode else None


_config.on_change.setdefault("dtype_promotion", []).append(install)
_config.validators["dtype_promotion"] = check_mode
install(_config.options.dtype_promotion)
