"""A ``TensorArray`` carried by a compiled loop: one preallocated buffer tensor.

Inside a ``@gt.function`` trace, a ``while_loop`` (or AutoGraph's ``for i in
gt.range(n)``) whose loop variables hold a static-size ``TensorArray`` carries it as a
buffer of shape ``(size,) + element_shape``: ``write`` is the ``row_write`` primitive
(its gradient reads the cotangent's row), ``read`` is a row read, ``stack`` is the buffer
itself. The array keeps being one after the loop, so ``ta.stack()`` there is the buffer.
What a buffer cannot hold (``unstack``, ``scatter``, ``split``, a write of another
shape) raises ``NotCompilable`` inside the loop's trace, and the loop runs as Python.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.tensor import Tensor, constant, convert_to_tensor
from ..functions.subtrace import NotCompilable
from .tensor_array import TensorArray

__all__ = ["BufferTensorArray", "buffer_of", "used_rows"]


class BufferTensorArray(TensorArray):
    """A TensorArray whose elements are the rows of one tensor (``_buffer``)."""

    def __init__(self, like: TensorArray, buffer: Tensor,  # the settings of `like`
                 size: Tensor | None = None):
        self.__dict__.update(like.__dict__)
        self._elements = []  # never used: the rows of the buffer are the elements
        self._buffer = buffer
        self._element_shape = tuple(buffer.shape[1:])
        # dynamic_size inside a loop: the rows used so far (the buffer has spare ones).
        self._used = size

    def __repr__(self) -> str:
        return (f"<gt.TensorArray dtype={self._dtype.name} size={len(self._buffer)} "
                f"element_shape={self.element_shape} (a loop's buffer)>")

    def _write(self, index: Any, value: Any) -> None:
        from ..ops.stacking import row_write

        self._check_changeable("write")
        value = self._convert(value)
        self._check_shape(value)
        index = _index_tensor(index)
        self._buffer = row_write(self._buffer, index, value, grow=self._used is not None)
        if self._used is not None:
            from ..ops import cast, maximum

            self._used = maximum(self._used, cast(index, np.int64) + 1)

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """``value`` written at ``index`` (a run-time value: no guard)."""
        del name
        self._write(index, value)
        return self

    def read(self, index: Any, name: str | None = None) -> Tensor:
        """Row ``index`` of the buffer (rows never written read as zeros, as in TF)."""
        del name
        return self._buffer[_index_tensor(index)]

    def stack(self, name: str | None = None) -> Tensor:
        del name
        if self._used is not None:
            raise NotCompilable  # a size of each iteration: Python's loop
        return self._buffer

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        from ..ops import take

        del name
        if self._used is not None:
            raise NotCompilable
        return take(self._buffer, convert_to_tensor(indices), axis=0)

    def concat(self, name: str | None = None) -> Tensor:
        from ..ops import reshape

        del name
        if self._used is not None:
            raise NotCompilable
        if self._buffer.ndim < 2:
            raise InvalidArgumentError("Concat saw a scalar shape at index 0 but requires "
                                       "at least vectors.")
        return reshape(self._buffer, (-1,) + tuple(self._buffer.shape[2:]))

    def size(self, name: str | None = None) -> Tensor:
        del name
        if self._used is not None:
            from ..ops import cast

            return cast(self._used, np.int32)
        return constant(np.int32(len(self._buffer)))

    def _map_elements(self, fn: Any) -> TensorArray:
        self._buffer = fn(self._buffer)
        return self

    def _replace(self, tensors: list) -> None:
        raise NotCompilable  # unstack/split inside a compiled loop: Python's loop

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        raise NotCompilable

    def close(self, name: str | None = None) -> None:
        raise NotCompilable


def _index_tensor(index: Any) -> Any:
    """An index as it is: a tensor stays a run-time value (a Python int stays one)."""
    if isinstance(index, Tensor):
        if index.ndim != 0 or index.dtype.kind not in "iu":
            raise TypeError(f"TensorArray indices must be scalar integers, got "
                            f"{index.dtype.name} of shape {list(index.shape)}.")
        return index
    return int(index)


def buffer_of(ta: TensorArray, capacity: int = 0) -> Tensor:
    """The buffer a loop carries for ``ta``: its elements stacked (zeros where none was
    written), with zero rows up to ``capacity`` (``dynamic_size``). An empty static
    array, a foreign one, or one whose element shape is not yet known raises
    ``NotCompilable``."""
    from ..core.state import state
    from ..ops import concat, stack

    if isinstance(ta, BufferTensorArray):
        if capacity > len(ta._buffer):
            return concat([ta._buffer, _zero_rows(ta, capacity - len(ta._buffer))], 0)
        return ta._buffer
    shape = ta._element_shape
    if (not ta._elements and not ta._dynamic_size) or shape is None or None in shape:
        raise NotCompilable
    if ta._tracer is not state.tracer:
        raise NotCompilable  # Python's loop raises the clear error
    spare = max(capacity - len(ta._elements), 0)
    if all(e is None for e in ta._elements):
        return _zero_rows(ta, len(ta._elements) + spare)
    rows = stack(ta._all())
    return concat([rows, _zero_rows(ta, spare)], 0) if spare else rows


def used_rows(ta: TensorArray) -> int:
    """How many rows of ``ta`` are in use (its size) before a loop."""
    if isinstance(ta, BufferTensorArray):
        return len(ta._buffer)
    return len(ta._elements)


def _zero_rows(ta: TensorArray, n: int) -> Tensor:
    return constant(np.zeros((n,) + tuple(ta._element_shape), ta._dtype.dtype))
