"""How an elementwise op takes its operands (the eager hot path of ``a * b``).

A tensor, an IR value or a plain number is taken as it is; any other operand beside a
tensor is checked to be numbers (TF's error otherwise); under NumPy 1 a Python scalar
beside a 0-d tensor takes its dtype, as NumPy 2 (NEP 50) does.
"""

from __future__ import annotations

import numpy as np

from ..core.backends import kind_of
from ..core.tensor import Tensor
from ..core.variable import Variable
from ..ir.nodes import IRValue, Literal, Var
from .registry import holds_tensor, operand

_OPERAND_TYPES = (Tensor, IRValue)
_NUMPY1 = np.lib.NumpyVersion(np.__version__) < "2.0.0"
_KINDS_FOR = {bool: "b", int: "iufc", float: "fc", complex: "c"}


def _weak(scalar, dtype: np.dtype):
    kinds = _KINDS_FOR.get(scalar.__class__)
    if kinds is None or dtype.kind not in kinds:
        return scalar
    try:
        return dtype.type(scalar)
    except OverflowError:  # NEP 50 raises here too; NumPy 1 would widen the dtype
        return scalar


def weak_scalars(*args):
    """NumPy 2's rule (NEP 50) under NumPy 1, for eager 0-d tensors: a Python scalar
    takes the dtype of the tensor beside it when that dtype can hold its kind, so
    ``float32 * 2.0`` stays float32 (NumPy 1's value-based casting made it float64).
    Arrays of rank >= 1 already keep their dtype in NumPy 1, and IR programs are left
    as they are (their avals follow the installed NumPy)."""
    dtype = next((a._value.dtype for a in args
                  if isinstance(a, Tensor) and not a._value.ndim), None)
    if dtype is None:
        return args
    return tuple(_weak(a, dtype) if a.__class__ in _KINDS_FOR else a for a in args)


# Operand classes binary ops take as they are, tested first (the hot path); any other
# operand beside a tensor goes through _checked_operand.
_PLAIN_OPERANDS = frozenset((Tensor, Variable, Var, Literal, bool, int, float, complex,
                             np.ndarray, np.float64, np.float32, np.int64, np.int32, np.bool_))
_NUMBER_KINDS = "biufc"


def _checked_operand(value):
    """A non-tensor operand beside a tensor, as NumPy will use it, or TF's error for a
    value that is not numbers (``Fraction``, ``Decimal``, ``None``, a string, a list of
    them): NumPy would compute with Python objects, and a tensor of that is broken."""
    if isinstance(value, _OPERAND_TYPES):
        return value
    if isinstance(value, (list, tuple)) and holds_tensor(value):
        return operand(value)  # TF packs a list holding tensors: differentiable
    if isinstance(value, (bool, int, float, complex)):
        return value
    array_like = isinstance(value, (list, tuple, np.generic)) or hasattr(value, "__array__")
    if not array_like or _dtype_kind(value) not in _NUMBER_KINDS:
        raise ValueError(f"Attempt to convert a value ({value!r}) with an unsupported type "
                         f"({type(value)}) to a Tensor. Use a Python or NumPy number, a "
                         "NumPy array or a tensor (float(value) for a Fraction or Decimal).")
    return value


def _dtype_kind(value) -> str:
    """The dtype kind of an array-like operand; another library's array (a Dask array)
    by its dtype, since ``np.asarray`` would compute it."""
    kind = kind_of(value)
    if kind is not None:
        return kind.numpy_dtype(value.dtype).kind
    return np.asarray(value).dtype.kind


def floating_operand(x, what: str, error: type[Exception] = ValueError):
    """``x`` as a tensor, or ``error`` (the type TF raises for that op) if it is not of a
    real floating dtype."""
    x = operand(x)
    if not np.issubdtype(x.dtype, np.floating):
        raise error(f"{what} must be a floating-point tensor, got {x.dtype}; cast it "
                    "first (gt.cast(x, 'float32')).")
    return x
