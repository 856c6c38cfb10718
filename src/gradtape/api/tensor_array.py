"""``gt.TensorArray``: TF's ``tf.TensorArray``, as TF 2 runs it eagerly.

A TensorArray is a Python list of tensors. ``write`` stores the tensor itself, ``read``
hands it back, and ``stack``/``gather``/``concat`` are the ``stack`` and ``concatenate``
ops: no primitive of its own, so gradients flow through it on tapes, nested tapes,
jacobians and forward accumulators, and inside ``@gt.function`` a Python loop that
writes it unrolls into the trace.

As TF's eager TensorArray, ``write`` (and ``unstack``, ``scatter``, ``split``) changes the
array and returns it, so both ``ta = ta.write(i, x)`` (TF's idiom, which also works in
``tf.function``) and a bare ``ta.write(i, x)`` work.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.dtypes import DType, as_dtype
from ..core.errors import InvalidArgumentError, OutOfRangeError
from ..core.state import state
from ..core.tensor import Tensor, concrete_value, constant, convert_to_tensor
from ..core.tensor_shape import TensorShape

__all__ = ["TensorArray"]


class TensorArray:
    """A list of same-dtype tensors that loops write one at a time (``tf.TensorArray``).

    ``size`` is the initial length; ``dynamic_size=True`` lets writes grow it. With
    ``clear_after_read`` (the default) an element can be read once eagerly; inside
    ``@gt.function`` it reads any number of times (TF's TensorList ignores the flag).
    ``element_shape`` (a shape, possibly with ``None`` dims) constrains what is written; with
    ``infer_shape`` the first write fixes the unknown dims. An element never written
    reads as zeros of the element shape (as in TF), if that shape is fully known.
    """

    def __init__(self, dtype: Any, size: Any = 0, dynamic_size: bool | None = None,
                 clear_after_read: bool | None = None, tensor_array_name: str | None = None,
                 handle: Any = None, flow: Any = None, infer_shape: bool = True,
                 element_shape: Any = None, colocate_with_first_write_call: bool = True,
                 name: str | None = None):
        del tensor_array_name, flow, colocate_with_first_write_call, name  # graph-only in TF
        if handle is not None:
            raise ValueError("TensorArray handles are not supported: gradtape runs eagerly "
                             "(as TF 2 does outside tf.function).")
        self._dtype: DType = as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        # Inside tf.function TF's TensorArray is a TensorList, which ignores
        # clear_after_read: an element reads many times there (TF's fibonacci example).
        self._clear_after_read = state.tracer is None and (
            True if clear_after_read is None else bool(clear_after_read))
        self._infer_shape = bool(infer_shape)
        self._element_shape = _as_partial_shape(element_shape)
        self._elements: list[Tensor | None] = [None] * _as_size(size)
        self._read_indices: set[int] = set()
        # The @gt.function trace it was made in (None: eagerly): only there may it change.
        self._tracer = state.tracer

    def _check_changeable(self, doing: str) -> None:
        """A TensorArray made outside a trace and written inside it (or the other way)
        would keep the trace's tensors, stale on the calls that reuse the trace."""
        if state.tracer is not self._tracer:
            where = "outside" if self._tracer is None else "inside another"
            raise NotImplementedError(
                f"TensorArray.{doing}: this TensorArray was created {where} @gt.function "
                "trace than the code changing it, so its elements would not follow later "
                "calls. Create the TensorArray in the function that writes it, and pass "
                "tensors (ta.stack()) in and out of @gt.function.")

    # --- properties ---------------------------------------------------------------------
    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def element_shape(self) -> TensorShape | tuple | None:
        """The elements' shape: a TensorShape once fully known, a tuple with ``None`` for
        unknown dims, ``None`` if not even the rank is known."""
        shape = self._element_shape
        if shape is not None and None not in shape:
            return TensorShape(shape)
        return shape

    def __repr__(self) -> str:
        return (f"<gt.TensorArray dtype={self._dtype.name} size={len(self._elements)} "
                f"element_shape={self.element_shape}>")

    # --- writing ------------------------------------------------------------------------
    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """Store ``value`` at ``index``; returns the TensorArray (``ta = ta.write(i, x)``)."""
        del name
        self._write(_as_index(index, "write"), value)
        return self

    def _write(self, index: int, value: Any) -> None:
        self._check_changeable("write")
        if index < 0:
            raise OutOfRangeError(f"Writing to negative indices (index {index}) is not "
                                  "allowed.")
        size = len(self._elements)
        if index >= size:
            if not self._dynamic_size:
                raise OutOfRangeError(
                    f"Tried to write to index {index} but array is not resizeable and size "
                    f"is: {size}. Create the TensorArray with dynamic_size=True to let "
                    "writes grow it.")
            self._elements.extend([None] * (index - size + 1))
        value = self._convert(value)
        self._check_shape(value)
        if index in self._read_indices:
            raise InvalidArgumentError(f"Could not write to TensorArray index {index} "
                                       "because it has already been read.")
        if self._elements[index] is not None:
            raise InvalidArgumentError(f"Could not write to TensorArray index {index} "
                                       "because it has already been written to.")
        self._elements[index] = value

    def _convert(self, value: Any) -> Tensor:
        """``value`` as a tensor of the array's dtype: Python and NumPy values are
        converted to it (TF's preferred dtype), tensors must have it already."""
        if not isinstance(value, Tensor):
            try:
                value = constant(value, dtype=self._dtype.dtype)
            except (TypeError, ValueError):
                value = constant(value)
        else:
            value = convert_to_tensor(value)  # a Variable: a read of its value
        if value.dtype != self._dtype.dtype:
            raise InvalidArgumentError(
                f"TensorArray dtype is {self._dtype.name} but Op is trying to write dtype "
                f"{value.dtype.name}. Cast the value with gt.cast(value, gt.{self._dtype.name})"
                " first.")
        return value

    def _check_shape(self, value: Tensor) -> None:
        shape, expected = tuple(value.shape), self._element_shape
        if expected is not None and not _compatible(expected, shape):
            raise InvalidArgumentError(
                f"Incompatible shape for value ({shape}), expected ({_show(expected)}): every "
                "element of a TensorArray has the element shape (set by element_shape or "
                "the first write).")
        if self._infer_shape:
            self._element_shape = shape

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """Replace the elements by the slices of ``value`` along its first axis."""
        from ..ops import unstack

        del name
        value = self._convert(value)
        if value.ndim == 0:
            raise InvalidArgumentError("TensorArray.unstack needs a value of rank >= 1, "
                                       "got a scalar.")
        tensors = unstack(value)
        if len(tensors) > len(self._elements) and not self._dynamic_size:
            raise InvalidArgumentError(
                f"Cannot unstack {len(tensors)} tensors into a TensorArray of static size "
                f"{len(self._elements)}; create it with dynamic_size=True.")
        self._replace(tensors)
        return self

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        """Write the slices of ``value`` along its first axis at ``indices``."""
        from ..ops import unstack

        del name
        positions = _as_indices(indices)
        value = self._convert(value)
        if value.ndim == 0 or value.shape[0] != len(positions):
            raise InvalidArgumentError(
                f"TensorArray.scatter: value of shape {tuple(value.shape)} does not have "
                f"one slice per index ({len(positions)} indices).")
        for index, piece in zip(positions, unstack(value)):
            self._write(index, piece)
        return self

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        """Replace the elements by consecutive pieces of ``value`` along its first axis,
        of the given ``lengths``."""
        from ..ops import split

        del name
        value = self._convert(value)
        sizes = np.asarray(concrete_value(lengths) if isinstance(lengths, Tensor) else lengths)
        if sizes.ndim != 1:
            raise InvalidArgumentError(f"Expected lengths to be a vector, received shape: "
                                       f"{list(sizes.shape)}.")
        if value.ndim == 0:
            raise InvalidArgumentError("Expected value to be at least a vector, but "
                                       "received shape: [].")
        if int(sizes.sum()) != value.shape[0]:
            raise InvalidArgumentError(
                f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths "
                f"is {int(sizes.sum())} and value's shape is: {list(value.shape)}.")
        if not self._dynamic_size and len(sizes) != len(self._elements):
            raise InvalidArgumentError(
                f"TensorArray's size is not equal to the size of lengths "
                f"({len(self._elements)} vs. {len(sizes)}), and the TensorArray is not "
                "marked as dynamically resizeable.")
        self._replace(split(value, [int(s) for s in sizes]))
        return self

    def _replace(self, tensors: list) -> None:
        self._check_changeable("unstack")
        self._elements = list(tensors)
        self._read_indices.clear()
        if self._infer_shape and tensors and len({tuple(t.shape) for t in tensors}) == 1:
            self._element_shape = tuple(tensors[0].shape)

    # --- reading ------------------------------------------------------------------------
    def read(self, index: Any, name: str | None = None) -> Tensor:
        """The element at ``index`` (the tensor written there: gradients flow to it)."""
        del name
        if isinstance(index, Tensor) and state.tracer is not None and self._elements:
            return self._read_traced(index)
        index = _as_index(index, "read")
        if self._clear_after_read:  # the read changes the array
            self._check_changeable("read")
        self._check_in_range(index, "read from")
        tensor = self._elements[index]
        if tensor is None:
            if index in self._read_indices:
                raise InvalidArgumentError(
                    f"Could not read index {index} twice because it was cleared after a "
                    "previous read (perhaps try setting clear_after_read = false?)")
            tensor = self._zeros(index)
        if self._clear_after_read:
            self._elements[index] = None
            self._read_indices.add(index)
        return tensor

    def _read_traced(self, index: Tensor) -> Tensor:
        """A read at an index of each call inside ``@gt.function`` (a loop body's
        counter): a row of the stacked elements, not a guard on the index. The array is
        not cleared: which element was read is known only at run time."""
        from ..ops import stack

        return stack(self._all())[index]

    def _check_in_range(self, index: int, doing: str) -> None:
        if index < 0:
            raise OutOfRangeError(f"Tried to {doing} negative index {index}: TensorArray "
                                  "indices start at 0.")
        if index >= len(self._elements):
            raise OutOfRangeError(f"Tried to {doing} index {index} but array size is: "
                                  f"{len(self._elements)}.")

    def _zeros(self, index: int) -> Tensor:
        """An element never written: zeros of the element shape (TF), stored."""
        shape = self._element_shape
        if shape is None or None in shape:
            raise InvalidArgumentError(
                f"Could not read from TensorArray index {index} because it has not yet "
                "been written to, and the element shape is not fully known "
                f"({_show(shape)}), so it cannot be read as zeros.")
        zeros = constant(np.zeros(shape, self._dtype.dtype))
        self._elements[index] = zeros
        return zeros

    def _known_shape(self) -> tuple:
        """The element shape, ``()`` if unknown (TF's empty result then)."""
        return () if self._element_shape is None else self._element_shape

    def _all(self) -> list[Tensor]:
        return [self._elements[i] if self._elements[i] is not None else self._zeros(i)
                for i in range(len(self._elements))]

    def stack(self, name: str | None = None) -> Tensor:
        """All elements stacked along a new first axis (shape ``(size,) + element``)."""
        from ..ops import stack

        del name
        if not self._elements:
            return self._empty((0,) + self._known_shape(), "stack")
        return stack(self._all())

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        """The elements at ``indices``, stacked along a new first axis."""
        from ..ops import stack

        del name
        positions = _as_indices(indices)
        for index in positions:
            self._check_in_range(index, "gather")
        if not positions:
            return self._empty((0,) + self._known_shape(), "gather")
        return stack([self._elements[i] if self._elements[i] is not None else self._zeros(i)
                      for i in positions])

    def concat(self, name: str | None = None) -> Tensor:
        """All elements joined along their first axis."""
        from ..ops import concatenate

        del name
        tensors = self._all()
        if not tensors:
            return self._empty((0,) + self._known_shape()[1:], "concat")
        for index, tensor in enumerate(tensors):
            if tensor.ndim == 0:
                raise InvalidArgumentError(f"Concat saw a scalar shape at index {index} but "
                                           "requires at least vectors.")
        return concatenate(tensors, axis=0)

    def _empty(self, shape: tuple, what: str) -> Tensor:
        """What ``what`` gives for an empty TensorArray: zeros of ``shape``."""
        if None in shape:
            raise InvalidArgumentError(f"TensorArray.{what} of an empty TensorArray needs a "
                                       "fully known element_shape.")
        return constant(np.zeros(shape, self._dtype.dtype))

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements, as an int32 tensor."""
        del name
        return constant(np.int32(len(self._elements)))

    def identity(self) -> TensorArray:
        """The same TensorArray (TF's identity only matters for graph control deps)."""
        return self

    def _map_elements(self, fn: Any) -> TensorArray:
        """The array with ``fn`` applied to each written element (``while_loop``'s
        ``back_prop=False`` stops their gradients)."""
        self._elements = [None if e is None else fn(e) for e in self._elements]
        return self

    def close(self, name: str | None = None) -> None:
        """Drop every element."""
        del name
        self._elements.clear()
        self._read_indices.clear()


# --- argument conversion -----------------------------------------------------------------

def _as_size(size: Any) -> int:
    if size is None:
        return 0
    if isinstance(size, Tensor):
        size = concrete_value(size)
    size = int(np.asarray(size))
    if size < 0:
        raise InvalidArgumentError(f"TensorArray size must be >= 0, got {size}.")
    return size


def _as_index(index: Any, doing: str) -> int:
    try:
        return operator.index(index)  # a Python int, or an integer tensor (a guard)
    except TypeError:
        raise TypeError(f"TensorArray.{doing} needs an integer index, got {index!r}.") \
            from None


def _as_indices(indices: Any) -> list[int]:
    values = np.asarray(concrete_value(indices) if isinstance(indices, Tensor) else indices)
    if values.ndim != 1 or (values.size and values.dtype.kind not in "iu"):
        raise InvalidArgumentError(f"TensorArray indices must be a vector of integers, got "
                                   f"{values!r}.")
    return [int(i) for i in values]


def _as_partial_shape(shape: Any) -> tuple | None:
    """An element_shape argument as a tuple of ints and ``None``s (``None``: unknown)."""
    if shape is None:
        return None
    if isinstance(shape, int):
        shape = (shape,)
    return tuple(None if d is None else int(d) for d in shape)


def _compatible(expected: Sequence, shape: tuple) -> bool:
    return len(expected) == len(shape) and all(e is None or e == d
                                               for e, d in zip(expected, shape))


def _show(shape: tuple | None) -> str:
    return "<unknown>" if shape is None else str(list(shape))
