"""``gt.TensorSpec``: TF's description of a tensor argument (shape, dtype, name), used by
``gt.function(input_signature=...)`` and ``get_concrete_function``.

A dimension may be ``None`` (any size). Traces are still made per concrete shape (the
tracer specializes every equation on its input shapes): a spec validates and converts
the arguments, it does not make one trace serve every size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tensor import Tensor, constant
from ..core.tensor_shape import TensorShape
from ..dtypes import DType, as_dtype, float32

__all__ = ["TensorSpec"]


class SpecShape(TensorShape):
    """A spec's shape: a ``TensorShape`` whose dimensions may be ``None`` (any size)."""

    __slots__ = ()

    def __new__(cls, dims: Any = ()) -> SpecShape:
        if isinstance(dims, int):
            dims = (dims,)
        return tuple.__new__(cls, (None if d is None else _dim(d) for d in dims))

    def is_fully_defined(self) -> bool:
        return None not in self

    def num_elements(self) -> int | None:  # type: ignore[override]
        return super().num_elements() if self.is_fully_defined() else None

    def __repr__(self) -> str:
        return f"TensorShape({list(self)})"

    def __reduce__(self) -> tuple:
        return (SpecShape, (tuple(self),))


def _dim(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise TypeError(f"gt.TensorSpec: a dimension must be a non-negative int or None, "
                        f"got {value!r}.")
    return int(value)


class TensorSpec:
    """TF's ``tf.TensorSpec(shape, dtype=tf.float32, name=None)``.

    ``shape`` is a list or tuple of ints and ``None`` (a dimension of any size).
    """

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape: Any, dtype: Any = float32, name: str | None = None):
        if shape is None:
            raise NotImplementedError(
                "gt.TensorSpec(None): shapes of unknown rank are not supported; give the "
                "rank, with None for dimensions of any size (e.g. [None, None]).")
        self._shape = SpecShape(shape)
        self._dtype = as_dtype(dtype)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"gt.TensorSpec: name must be a str or None, got {name!r}.")
        self._name = name

    @classmethod
    def from_tensor(cls, tensor: Any, name: str | None = None) -> TensorSpec:
        """The spec of ``tensor`` (its full shape and dtype), as TF's."""
        value = tensor._value if isinstance(tensor, Tensor) else np.asarray(tensor)
        return cls(value.shape, value.dtype, name)

    @property
    def shape(self) -> SpecShape:
        return self._shape

    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def name(self) -> str | None:
        return self._name

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self._shape}, dtype={self._dtype!r}, name={self._name!r})"

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, TensorSpec):
            return NotImplemented
        return (tuple(self._shape), self._dtype, self._name) == \
            (tuple(other._shape), other._dtype, other._name)

    def __hash__(self) -> int:
        return hash((tuple(self._shape), self._dtype, self._name))

    def is_compatible_with(self, value: Any) -> bool:
        """Whether a tensor, array or spec has this dtype and a shape this spec admits."""
        if isinstance(value, TensorSpec):
            shape, dtype = tuple(value.shape), value.dtype.dtype
        else:
            value = value._value if isinstance(value, Tensor) else np.asarray(value)
            shape, dtype = value.shape, value.dtype
        return dtype == self._dtype.dtype and _shape_fits(shape, self._shape)

    def conform(self, value: Any, where: str) -> Any:
        """``value`` checked against the spec (``where`` names the argument in errors):
        tensors and arrays as they are, Python values converted to the spec's dtype."""
        if not isinstance(value, (Tensor, np.ndarray, np.generic)):
            try:
                value = constant(value, dtype=self._dtype.dtype)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{where}: cannot convert {value!r} to a tensor for {self}: "
                                f"{exc}") from None
        array = value._value if isinstance(value, Tensor) else value
        if array.dtype != self._dtype.dtype:
            raise TypeError(
                f"{where}: got a {array.dtype.name} tensor, but the input_signature says "
                f"{self}. Cast it first (gt.cast(x, {self._dtype!r})) or change the spec.")
        if not _shape_fits(array.shape, self._shape):
            raise TypeError(
                f"{where}: got a tensor of shape {tuple(array.shape)}, but the "
                f"input_signature says {self}. Pass a tensor of a compatible shape (None "
                "dimensions take any size) or change the spec.")
        return value


def _shape_fits(shape: tuple, spec: tuple) -> bool:
    return len(shape) == len(spec) and all(s is None or s == d for d, s in zip(shape, spec))
