"""Variable: a named, mutable tensor whose updates never disturb what tapes recorded."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import operators
from .backends import kind_of
from .state import state
from .tensor import Tensor, _to_array, format_value


class Variable(Tensor):
    """TF's ``tf.Variable``: reads inside a recording tape are watched automatically when
    ``trainable``. ``assign*`` replace the held array (never write into it), so values a
    tape recorded earlier stay as they were, and a later ``gradient`` uses them."""

    __slots__ = ("_trainable", "_name", "_version")
    _watch_on_read = True

    def __init__(self, initial_value: Any, trainable: bool = True, name: str | None = None,
                 dtype: Any = None):
        if callable(initial_value):
            initial_value = initial_value()
        tracer = state.tracer
        if tracer is None:
            super().__init__(initial_value, dtype)
        else:  # an initializer runs once (a random one too): the tracer lets it read
            tracer.initializing += 1
            try:
                super().__init__(initial_value, dtype)
            finally:
                tracer.initializing -= 1
        self._trainable = bool(trainable)
        self._name = name if name is not None else "Variable"
        self._version = 0  # bumped by every assign: tapes compare it to what they saw

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def name(self) -> str:
        return f"{self._name}:0"

    @property
    def initializer(self) -> None:
        """TF's ``v.initializer``: the op that initializes the variable in a graph; ``None``
        when running eagerly (as TF 2's eager variables), where it is initialized on
        creation. ``self.evaluate(v.initializer)`` in TF's tests is a no-op."""
        return None

    def _accessed(self) -> None:
        """TF's "variable accessed": recording tapes watch a trainable variable that is
        read or assigned."""
        if self._trainable:
            for tape in state.recording:
                tape.on_variable_read(self)

    def _new_value(self, value: Any) -> np.ndarray:
        if isinstance(value, Tensor) and value.dtype != self.dtype:
            raise ValueError(
                f"Cannot assign a {value.dtype.name} tensor to variable {self.name!r} of "
                f"dtype {self.dtype.name}; convert it first with gt.cast(value, "
                f"'{self.dtype.name}')."
            )
        array = _to_array(value, self.dtype)
        if array.shape != self._value.shape:
            raise ValueError(
                f"Cannot assign value to variable {self.name!r}: shape mismatch. The "
                f"variable shape {self._value.shape} and the assigned value shape "
                f"{array.shape} are incompatible; assign a value of shape {self._value.shape}."
            )
        return self._in_own_library(array)

    def _in_own_library(self, array: Any) -> Any:
        """A NumPy ``array`` as an array of the variable's library (a Dask array chunked
        like the value), as a TF variable keeps its device whatever the assigned value's."""
        kind = kind_of(self._value)
        if kind is None or kind_of(array) is not None:
            return array
        return kind.from_constant(array, like=self._value)

    def _set(self, array: Any) -> None:
        # A new array object, never a write into the old one: records still hold it. A
        # NumPy variable stays NumPy (assigning a Dask value computes it); a variable of
        # another library's array keeps that library's arrays (``_new_value``).
        self._value = array if kind_of(self._value) is not None else np.asarray(array)
        self._version += 1
        self._accessed()

    def assign(self, value: Any, read_value: bool = True) -> Variable | None:
        """Set the value (not recorded by tapes)."""
        if state.tracer is not None:  # inside @gt.function: an output of the trace
            return state.tracer.assign(self, "assign", value, read_value)
        self._set(self._new_value(value))
        return self if read_value else None

    def assign_add(self, delta: Any, read_value: bool = True) -> Variable | None:
        """Add ``delta`` to the value (not recorded by tapes)."""
        if state.tracer is not None:
            return state.tracer.assign(self, "assign_add", delta, read_value)
        self._set(self._value + self._new_value(delta))
        return self if read_value else None

    def assign_sub(self, delta: Any, read_value: bool = True) -> Variable | None:
        """Subtract ``delta`` from the value (not recorded by tapes)."""
        if state.tracer is not None:
            return state.tracer.assign(self, "assign_sub", delta, read_value)
        self._set(self._value - self._new_value(delta))
        return self if read_value else None

    def numpy(self) -> np.ndarray:
        """The current value as a NumPy array (a read: recording tapes watch it)."""
        self._accessed()
        return super().numpy()

    def read_value(self) -> Tensor:
        """The current value as a plain tensor (a read, which tapes record as the variable)."""
        return operators.ops().identity(self)

    def value(self) -> Tensor:
        """Same as :meth:`read_value`."""
        return self.read_value()

    def __repr__(self) -> str:
        head = f"<gt.Variable {self.name!r} shape={self.shape} dtype={self.dtype.name}"
        if state.tracer is not None:  # read at call time: no value to show, as TF's graph
            return head + ">"
        return f"{head}, numpy={format_value(self._value)}>"

    __str__ = __repr__
