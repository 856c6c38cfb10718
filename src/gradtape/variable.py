"""Variable: a named, mutable tensor whose updates never disturb what tapes recorded."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .tensor import Tensor, _to_array, format_value

_unnamed = itertools.count()


class Variable(Tensor):
    """TF's ``tf.Variable``: reads inside a recording tape are watched automatically when
    ``trainable``. ``assign*`` replace the held array (never write into it), so values a
    tape recorded earlier stay as they were."""

    __slots__ = ("_trainable", "_name")
    _watch_on_read = True

    def __init__(self, initial_value: Any, trainable: bool = True, name: str | None = None,
                 dtype: Any = None):
        if callable(initial_value):
            initial_value = initial_value()
        super().__init__(initial_value, dtype)
        self._trainable = bool(trainable)
        self._name = name if name is not None else f"Variable_{next(_unnamed)}"

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def name(self) -> str:
        return f"{self._name}:0"

    def _new_value(self, value: Any) -> np.ndarray:
        array = _to_array(value, self.dtype)
        if array.shape != self._value.shape:
            raise ValueError(
                f"Cannot assign a value of shape {array.shape} to variable {self._name!r} "
                f"of shape {self._value.shape}."
            )
        return array

    def assign(self, value: Any, read_value: bool = True) -> Variable | None:
        """Set the value (not recorded by tapes)."""
        self._value = self._new_value(value)
        return self if read_value else None

    def assign_add(self, delta: Any, read_value: bool = True) -> Variable | None:
        """Add ``delta`` to the value (not recorded by tapes)."""
        self._value = self._value + self._new_value(delta)
        return self if read_value else None

    def assign_sub(self, delta: Any, read_value: bool = True) -> Variable | None:
        """Subtract ``delta`` from the value (not recorded by tapes)."""
        self._value = self._value - self._new_value(delta)
        return self if read_value else None

    def read_value(self) -> Tensor:
        """The current value as a plain tensor (a read, which tapes record as the variable)."""
        from .ops import identity

        return identity(self)

    def value(self) -> Tensor:
        return self.read_value()

    def __repr__(self) -> str:
        body = format_value(self._value)
        return (f"<gt.Variable {self.name!r} shape={self.shape} dtype={self.dtype.name}, "
                f"numpy={body}>")

    __str__ = __repr__
