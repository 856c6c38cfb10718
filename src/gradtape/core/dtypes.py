"""TF's dtype objects (``gt.float32``, ``gt.DType``, ``gt.as_dtype``) over NumPy's dtypes.

A ``DType`` stands for one NumPy dtype: NumPy accepts it wherever it takes a dtype (it
reads the ``dtype`` attribute: ``np.zeros(3, gt.float32)``, ``np.dtype(gt.int32)``), and
it compares equal to that dtype, its scalar type and its name, and hashes like the NumPy
dtype. ``Tensor.dtype`` stays a plain NumPy dtype (see docs/porting.md).

``gt.dtypes`` (TF's ``tf.dtypes``) holds these names and ``cast``, an op (the package
root adds it: this foundation imports nothing above ``core``).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .namespaces import public_dir

__all__ = ["DType", "as_dtype", "float16", "half", "float32", "float64", "double", "int8",
           "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
           "complex64", "complex128", "string"]

# TF's DataType enum values (types.proto), for ``as_datatype_enum``.
_TF_ENUMS = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
             "complex64": 8, "int64": 9, "bool": 10, "uint16": 17, "complex128": 18,
             "float16": 19, "uint32": 22, "uint64": 23, "string": 7}


class DType:
    """One dtype, TF-style: ``gt.float32.is_floating``, ``gt.int32.max``, ``repr`` as
    ``gt.float32`` and ``str`` as TF prints it (``<dtype: 'float32'>``)."""

    __slots__ = ("_np",)

    def __init__(self, np_dtype: Any):
        self._np = np.dtype(np_dtype)

    # --- NumPy's view: np.dtype(d), np.zeros(3, d), arr.astype(d) read this ------------
    @property
    def dtype(self) -> np.dtype:
        return self._np

    @property
    def as_numpy_dtype(self) -> type:
        """The NumPy scalar type (``np.float32``), as in TF."""
        return self._np.type

    # --- TF's properties ---------------------------------------------------------------
    @property
    def name(self) -> str:
        return "string" if self._np.kind == "O" else self._np.name  # bytes objects: tf.string

    @property
    def is_floating(self) -> builtins.bool:
        return self._np.kind == "f"

    @property
    def is_integer(self) -> builtins.bool:
        return self._np.kind in "iu"

    @property
    def is_complex(self) -> builtins.bool:
        return self._np.kind == "c"

    @property
    def is_bool(self) -> builtins.bool:
        return self._np.kind == "b"

    @property
    def is_unsigned(self) -> builtins.bool:
        return self._np.kind == "u"

    @property
    def is_numpy_compatible(self) -> builtins.bool:
        return True

    @property
    def is_quantized(self) -> builtins.bool:
        return False

    @property
    def size(self) -> int:
        """Bytes per element."""
        return self._np.itemsize

    @property
    def min(self) -> Any:
        """The smallest value (``-max`` for floats); TypeError for bool and complex, as TF."""
        return self._limits().min

    @property
    def max(self) -> Any:
        """The largest value; TypeError for bool and complex, as TF."""
        return self._limits().max

    def _limits(self) -> Any:
        kind = self._np.kind
        if kind == "f":
            return np.finfo(self._np)
        if kind in "iu":
            return np.iinfo(self._np)
        raise TypeError(f"Cannot find minimum or maximum value of {self} with type "
                        f"{self.name}: only integer and floating dtypes have limits.")

    @property
    def real_dtype(self) -> DType:
        """float32 for complex64, float64 for complex128, itself otherwise."""
        if self._np.kind == "c":
            return as_dtype(np.dtype(f"float{self._np.itemsize * 4}"))
        return self

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def as_datatype_enum(self) -> int:
        return _TF_ENUMS[self.name]

    def is_compatible_with(self, other: Any) -> builtins.bool:
        return self == other

    # --- equality with anything NumPy reads as this dtype ----------------------------------
    def __eq__(self, other: Any) -> builtins.bool:
        if other is self:
            return True
        if other is None:  # np.dtype(None) is float64; TF's float64 != None
            return False
        try:
            return self._np == numpy_dtype(other)
        except (TypeError, ValueError):
            return False

    def __ne__(self, other: Any) -> builtins.bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        # NumPy's dtype hash: a DType and np.dtype('float32') are the same dict key.
        return hash(self._np)

    def __repr__(self) -> str:
        return f"gt.{self.name}"

    def __str__(self) -> str:
        return f"<dtype: '{self.name}'>"

    def __reduce__(self) -> tuple:
        return (as_dtype, (self.name,))


def _numpy_dtype(value: Any) -> np.dtype:
    """NumPy's dtype for ``value``, with TF's reading of Python's ``float`` (float32)."""
    if value is builtins.float:
        return np.dtype(np.float32)
    return np.dtype(value)


_BY_NUMPY: dict[np.dtype, DType] = {}


def _define(name: str) -> DType:
    dtype = DType(name)
    _BY_NUMPY[dtype.dtype] = dtype
    return dtype


float16 = _define("float16")
float32 = _define("float32")
float64 = _define("float64")
int8 = _define("int8")
int16 = _define("int16")
int32 = _define("int32")
int64 = _define("int64")
uint8 = _define("uint8")
uint16 = _define("uint16")
uint32 = _define("uint32")
uint64 = _define("uint64")
bool = _define("bool")  # TF's tf.bool; this module says builtins.bool for the builtin
complex64 = _define("complex64")
complex128 = _define("complex128")
half = float16
double = float64
# TF's tf.string: tensors of bytes, held as NumPy object arrays; never differentiated.
string = DType(np.object_)
_BY_NUMPY[string.dtype] = string

_ALIASES = {"half": float16, "float": float32, "double": float64, "string": string}


def as_dtype(type_value: Any) -> DType:
    """TF's ``tf.as_dtype``: the DType for a DType, a NumPy dtype or scalar type, or a
    name (``"float32"``, ``"half"``, ``"double"``)."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str) and type_value in _ALIASES:
        return _ALIASES[type_value]
    try:
        found = _BY_NUMPY.get(_numpy_dtype(type_value)) if type_value is not None else None
    except (TypeError, ValueError):
        found = None
    if found is None:
        raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType: use one "
                        "of gt.float16/32/64, gt.int8/16/32/64, gt.uint8/16/32/64, gt.bool, "
                        "gt.complex64/128 or their names.")
    return found


def numpy_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype for any dtype argument gradtape takes (a DType, a NumPy dtype or
    type, a name)."""
    if isinstance(dtype, DType):
        return dtype.dtype
    if isinstance(dtype, str) and dtype in _ALIASES:
        return _ALIASES[dtype].dtype
    return _numpy_dtype(dtype)

__dir__ = public_dir(globals())  # what users see as gt.dtypes
