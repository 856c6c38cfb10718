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

__all__ = ["BufferTensorArray", "buffer_of"]


class BufferTensorArray(TensorArray):
    """A TensorArray whose elements are the rows of one tensor (``_buffer``)."""

    def __init__(self, like: TensorArray, buffer: Tensor):  # the settings of `like`
        self.__dict__.update(like.__dict__)
        self._elements = []  # never used: the rows of the buffer are the elements
        self._buffer = buffer
        self._element_shape = tuple(buffer.shape[1:])

    def __repr__(self) -> str:
        return (f"<gt.TensorArray dtype={self._dtype.name} size={len(self._buffer)} "
                f"element_shape={self.element_shape} (a loop's buffer)>")

    def _write(self, index: Any, value: Any) -> None:
        from ..ops.stacking import row_write

        self._check_changeable("write")
        value = self._convert(value)
        self._check_shape(value)
        self._buffer = row_write(self._buffer, _index_tensor(index), value)

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
        return self._buffer

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        from ..ops import take

        del name
        return take(self._buffer, convert_to_tensor(indices), axis=0)

    def concat(self, name: str | None = None) -> Tensor:
        from ..ops import reshape

        del name
        if self._buffer.ndim < 2:
            raise InvalidArgumentError("Concat saw a scalar shape at index 0 but requires "
                                       "at least vectors.")
        return reshape(self._buffer, (-1,) + tuple(self._buffer.shape[2:]))

    def size(self, name: str | None = None) -> Tensor:
        del name
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


def buffer_of(ta: TensorArray) -> Tensor:
    """The buffer a loop carries for ``ta``: its elements stacked (zeros where none was
    written). A dynamic-size, empty or foreign array, or one whose element shape is not
    yet known, raises ``NotCompilable``."""
    from ..ops import stack

    if isinstance(ta, BufferTensorArray):
        return ta._buffer
    shape = ta._element_shape
    if ta._dynamic_size or not ta._elements or shape is None or None in shape:
        raise NotCompilable
    from ..core.state import state

    if ta._tracer is not state.tracer:
        raise NotCompilable  # Python's loop raises the clear error
    if all(e is None for e in ta._elements):
        return constant(np.zeros((len(ta._elements),) + tuple(shape), ta._dtype.dtype))
    return stack(ta._all())
