"""``gt.TensorSpec``: TF's description of a tensor argument (shape, dtype, name), used by
``gt.function(input_signature=...)`` and ``get_concrete_function``.

A dimension may be ``None`` (any size). Traces are still made per concrete shape (the
tracer specializes every equation on its input shapes): a spec validates and converts
the arguments, it does not make one trace serve every size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.dtypes import DType, as_dtype, float32
from ..core.tensor import Tensor, constant
from ..core.tensor_shape import TensorShape

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


class UnknownShape(SpecShape):
    """The shape of unknown rank, ``TensorShape(None)``: any tensor fits it."""

    __slots__ = ()

    def __new__(cls) -> UnknownShape:
        return tuple.__new__(cls, ())

    @property
    def rank(self) -> None:  # type: ignore[override]
        return None

    ndims = rank

    @property
    def dims(self) -> None:  # type: ignore[override]
        return None

    def as_list(self) -> list[int]:
        raise ValueError("as_list() is not defined on an unknown TensorShape.")

    def is_fully_defined(self) -> bool:
        return False

    def num_elements(self) -> None:  # type: ignore[override]
        return None

    def is_compatible_with(self, other: Any) -> bool:
        return True

    def __eq__(self, other: Any) -> bool:
        """TF: unknown shapes equal each other only (not ``[]``)."""
        return isinstance(other, UnknownShape)

    __hash__ = SpecShape.__hash__

    def __repr__(self) -> str:
        return "TensorShape(None)"

    def __str__(self) -> str:
        return "<unknown>"

    def __reduce__(self) -> tuple:
        return (UnknownShape, ())


def _dim(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"gt.TensorSpec: a dimension must be a non-negative int or None, "
                        f"got {value!r}.")
    if value < 0:  # TF's Dimension raises ValueError for it
        raise ValueError(f"Dimension {value} must be >= 0: a dimension of gt.TensorSpec "
                         "is a non-negative int, or None for any size.")
    return int(value)


class TensorSpec:
    """TF's ``tf.TensorSpec(shape, dtype=tf.float32, name=None)``.

    ``shape`` is a list or tuple of ints and ``None`` (a dimension of any size), or
    ``None``: a tensor of any rank and shape.
    """

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape: Any, dtype: Any = float32, name: str | None = None):
        self._shape = UnknownShape() if shape is None else SpecShape(shape)
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
        return (_shape_key(self._shape), self._dtype, self._name) == \
            (_shape_key(other._shape), other._dtype, other._name)

    def __hash__(self) -> int:
        return hash((_shape_key(self._shape), self._dtype, self._name))

    def is_compatible_with(self, value: Any) -> bool:
        """Whether a tensor, array or spec has this dtype and a shape this spec admits."""
        if isinstance(value, TensorSpec):
            if isinstance(value.shape, UnknownShape):  # fits only a spec of any rank
                return value.dtype == self._dtype and isinstance(self._shape, UnknownShape)
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


def _shape_key(shape: SpecShape) -> tuple | None:
    """What identifies a spec's shape: ``None`` for unknown rank (not ``()``, a scalar)."""
    return None if isinstance(shape, UnknownShape) else tuple(shape)


def _shape_fits(shape: tuple, spec: tuple) -> bool:
    if isinstance(spec, UnknownShape):
        return True
    return len(shape) == len(spec) and all(s is None or s == d for d, s in zip(shape, spec))


# --- nested signatures -----------------------------------------------------------------------

def is_spec_structure(value: Any) -> bool:
    """Whether ``value`` is a ``TensorSpec`` or a list, tuple or dict nesting only them (TF
    accepts such nests as the entries of an ``input_signature``)."""
    if isinstance(value, TensorSpec):
        return True
    if isinstance(value, dict):
        return all(is_spec_structure(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(is_spec_structure(v) for v in value)
    return False


def conform_structure(spec: Any, value: Any, where: str, path: str) -> Any:
    """``value`` matched against a nest of specs (errors name ``where`` and the argument's
    ``path``, e.g. ``pair[0]``): the same structure, each tensor checked
    (``TensorSpec.conform``). Lists and tuples match each other, as in TF; the function
    gets the spec's container type."""
    if isinstance(spec, TensorSpec):
        return spec.conform(value, f"{where}, argument `{path}`")
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            raise TypeError(
                f"{where}, argument `{path}`: expected a dict with keys "
                f"{sorted(spec, key=repr)} (the input_signature's structure), got "
                f"{_kind(value)}.")
        return {k: conform_structure(s, value[k], where, f"{path}[{k!r}]")
                for k, s in spec.items()}
    if not isinstance(value, (list, tuple)) or len(value) != len(spec):
        raise TypeError(
            f"{where}, argument `{path}`: expected a {type(spec).__name__} of {len(spec)} "
            f"(the input_signature's structure), got {_kind(value)}.")
    items = [conform_structure(s, v, where, f"{path}[{i}]")
             for i, (s, v) in enumerate(zip(spec, value))]
    return type(spec)(items)


def _kind(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    if isinstance(value, dict):
        return f"a dict with keys {sorted(value, key=repr)}"
    return f"a {type(value).__name__}"
