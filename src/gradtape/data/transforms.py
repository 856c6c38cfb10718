"""The transformations other than ``shuffle`` and ``batch``: each a ``Dataset`` reading
its input lazily."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..functions.spec import TensorSpec
from . import structure
from .dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, _as_args


def _call(fn: Callable[..., Any], element: Any) -> Any:
    """``fn`` on an element's tensors: a tuple's components as separate arguments."""
    return fn(*_as_args(structure.as_tensors(element)))


def _truth(value: Any) -> bool:
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if array.shape != () or array.dtype != np.bool_:
        raise InvalidArgumentError(
            f"A predicate must return a scalar bool tensor, got dtype {array.dtype} and "
            f"shape {array.shape}.")
    return bool(array)


class _Stage(Dataset):
    """A stage over one input, with its input's cardinality and spec by default."""

    def __init__(self, input: Dataset):
        self.input = input

    def _cardinality(self) -> int:
        return self.input._cardinality()

    def _spec(self) -> Any:
        return self.input._spec()


class Passthrough(_Stage):
    """``prefetch``: elements as they are read."""

    def _elements(self) -> Iterator[Any]:
        return self.input._elements()


class Map(_Stage):
    def __init__(self, input: Dataset, fn: Callable[..., Any]):
        super().__init__(input)
        self.fn = fn

    def _elements(self) -> Iterator[Any]:
        for element in self.input._elements():
            yield structure.as_arrays(_as_nest(_call(self.fn, element)))

    _spec = Dataset._spec  # the function's results: read from the first element


def _as_nest(value: Any) -> Any:
    """What a ``map`` function returned: a list of components is a tuple, as in TF."""
    return tuple(value) if isinstance(value, list) else value


class Filter(_Stage):
    def __init__(self, input: Dataset, predicate: Callable[..., Any]):
        super().__init__(input)
        self.predicate = predicate

    def _elements(self) -> Iterator[Any]:
        for element in self.input._elements():
            if _truth(_call(self.predicate, element)):
                yield element

    def _cardinality(self) -> int:
        n = self.input._cardinality()
        return INFINITE_CARDINALITY if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY


class TakeWhile(Filter):
    def _elements(self) -> Iterator[Any]:
        for element in self.input._elements():
            if not _truth(_call(self.predicate, element)):
                return
            yield element

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY


class FlatMap(_Stage):
    """The elements of the dataset ``fn`` returns for each element, one after another."""

    def __init__(self, input: Dataset, fn: Callable[..., Dataset]):
        super().__init__(input)
        self.fn = fn

    def _dataset(self, element: Any) -> Dataset:
        result = self.fn(*_as_args(_as_datasets_or_tensors(element)))
        if not isinstance(result, Dataset):
            raise TypeError(f"The function given to flat_map/interleave must return a "
                            f"Dataset, got {type(result).__name__}.")
        return result

    def _elements(self) -> Iterator[Any]:
        for element in self.input._elements():
            yield from self._dataset(element)._elements()

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    _spec = Dataset._spec


def _as_datasets_or_tensors(element: Any) -> Any:
    """A window's datasets stay datasets; arrays become tensors."""
    return structure.map_nest(
        lambda leaf: leaf if isinstance(leaf, Dataset) else structure.as_tensors(leaf),
        element)


class Interleave(FlatMap):
    """``cycle_length`` datasets open at once, ``block_length`` elements from each in
    turn (TF's order with ``deterministic=True``)."""

    def __init__(self, input: Dataset, fn: Callable[..., Dataset], cycle_length: Any,
                 block_length: int):
        super().__init__(input, fn)
        self.cycle_length = 1 if cycle_length in (None, -1) else int(cycle_length)
        self.block_length = int(block_length)

    def _elements(self) -> Iterator[Any]:
        inputs = self.input._elements()
        open_ = [self._dataset(e)._elements()
                 for e in itertools.islice(inputs, self.cycle_length)]
        while open_:
            for slot, source in enumerate(list(open_)):
                block = list(itertools.islice(source, self.block_length))
                yield from block
                if len(block) < self.block_length:
                    following = next(inputs, None)
                    open_[slot] = None if following is None else \
                        self._dataset(following)._elements()
            open_ = [s for s in open_ if s is not None]


class Repeat(_Stage):
    def __init__(self, input: Dataset, count: int):
        super().__init__(input)
        self.count = count

    def _elements(self) -> Iterator[Any]:
        passes = itertools.count() if self.count < 0 else range(self.count)
        for _ in passes:
            empty = True
            for element in self.input._elements():
                empty = False
                yield element
            if empty:
                return  # TF: repeating an empty dataset ends

    def _cardinality(self) -> int:
        n = self.input._cardinality()
        if self.count < 0:
            return 0 if n == 0 else INFINITE_CARDINALITY if n != UNKNOWN_CARDINALITY \
                else UNKNOWN_CARDINALITY
        return n * self.count if n >= 0 else n


class Take(_Stage):
    def __init__(self, input: Dataset, count: int):
        super().__init__(input)
        self.count = count

    def _elements(self) -> Iterator[Any]:
        if self.count < 0:  # TF: take(-1) takes everything
            return self.input._elements()
        return itertools.islice(self.input._elements(), self.count)

    def _cardinality(self) -> int:
        n = self.input._cardinality()
        if self.count < 0:
            return n
        if n == INFINITE_CARDINALITY:
            return self.count
        return min(n, self.count) if n >= 0 else UNKNOWN_CARDINALITY


class Skip(Take):
    def _elements(self) -> Iterator[Any]:
        if self.count < 0:  # TF: skip(-1) skips everything
            return iter(())
        return itertools.islice(self.input._elements(), self.count, None)

    def _cardinality(self) -> int:
        n = self.input._cardinality()
        if self.count < 0:
            return 0
        return max(n - self.count, 0) if n >= 0 else n


class Cache(_Stage):
    """The first complete pass is kept; later passes read the kept elements."""

    def __init__(self, input: Dataset):
        super().__init__(input)
        self.kept: list[Any] | None = None

    def _elements(self) -> Iterator[Any]:
        if self.kept is not None:
            yield from self.kept
            return
        seen = []
        for element in self.input._elements():
            seen.append(element)
            yield element
        self.kept = seen


class Enumerate(_Stage):
    """``(index, element)`` pairs, the index int64 from ``start``."""

    def __init__(self, input: Dataset, start: int):
        super().__init__(input)
        self.start = start

    def _elements(self) -> Iterator[Any]:
        for i, element in enumerate(self.input._elements(), self.start):
            yield np.asarray(i, np.int64), element

    def _spec(self) -> Any:
        return TensorSpec([], np.int64), self.input._spec()


class Unbatch(_Stage):
    def _elements(self) -> Iterator[Any]:
        for element in self.input._elements():
            leaves = structure.flatten(element)
            for i in range(len(leaves[0]) if leaves else 0):
                yield structure.unflatten(element, [leaf[i] for leaf in leaves])

    def _cardinality(self) -> int:
        n = self.input._cardinality()
        return INFINITE_CARDINALITY if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _spec(self) -> Any:
        return structure.map_nest(
            lambda s: TensorSpec(s.shape.as_list()[1:], s.dtype), self.input._spec())


class PaddedBatch(_Stage):
    """Batches whose elements are padded to the longest of the batch in each dimension
    (or to ``padded_shapes``), with ``padding_values`` (0 by default)."""

    def __init__(self, input: Dataset, batch_size: int, padded_shapes: Any,
                 padding_values: Any, drop_remainder: bool):
        super().__init__(input)
        self.batch_size, self.drop_remainder = batch_size, drop_remainder
        self.padded_shapes, self.padding_values = padded_shapes, padding_values

    def _elements(self) -> Iterator[Any]:
        source = self.input._elements()
        while True:
            pending = list(itertools.islice(source, self.batch_size))
            if not pending or (self.drop_remainder and len(pending) < self.batch_size):
                return
            yield self._padded(pending)

    def _padded(self, elements: list[Any]) -> Any:
        columns = list(zip(*(structure.flatten(e) for e in elements)))
        shapes = self._leaf_options(self.padded_shapes, len(columns))
        values = self._leaf_options(self.padding_values, len(columns))
        return structure.unflatten(elements[0], [
            _pad_stack(column, shape, value)
            for column, shape, value in zip(columns, shapes, values)])

    def _leaf_options(self, option: Any, count: int) -> list[Any]:
        if option is None:
            return [None] * count
        if structure.is_nest(self.input._spec()):
            return structure.flatten(_shapes_as_leaves(option))
        return [option]

    def _cardinality(self) -> int:
        n = self.input._cardinality()
        if n < 0:
            return n
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def _spec(self) -> Any:
        return structure.batched_spec(
            structure.map_nest(lambda s: TensorSpec([None] * (s.shape.rank or 0), s.dtype),
                               self.input._spec()),
            self.batch_size if self.drop_remainder else None)


def _shapes_as_leaves(option: Any) -> Any:
    """A shape given as a list stays one leaf inside a tuple/dict nest."""
    if isinstance(option, dict):
        return {k: _shapes_as_leaves(v) for k, v in option.items()}
    if isinstance(option, tuple) and not all(isinstance(d, (int, type(None))) for d in option):
        return tuple(_shapes_as_leaves(v) for v in option)
    return (option,) if isinstance(option, tuple) else option


def _pad_stack(column: tuple, shape: Any, value: Any) -> np.ndarray:
    longest = np.max([np.shape(a) for a in column], axis=0) if column[0].ndim else ()
    target = list(longest)
    if shape is not None:
        for axis, dim in enumerate(list(shape)):
            if dim is not None and int(dim) >= 0:
                if int(dim) < target[axis]:
                    raise InvalidArgumentError(
                        f"padded_batch: an element of shape {tuple(longest)} is larger "
                        f"than padded_shapes {tuple(shape)}.")
                target[axis] = int(dim)
    fill = 0 if value is None else structure.as_array(value)
    out = np.full((len(column), *target), fill, dtype=column[0].dtype)
    for i, array in enumerate(column):
        out[(i, *(slice(0, d) for d in array.shape))] = array
    return out


class Window(_Stage):
    """Datasets of ``size`` elements every ``shift``, ``stride`` apart; a nest element
    gives a nest of datasets, as TF's."""

    def __init__(self, input: Dataset, size: int, shift: int, stride: int,
                 drop_remainder: bool):
        super().__init__(input)
        self.size, self.shift, self.stride = size, shift, stride
        self.drop_remainder = drop_remainder

    def _elements(self) -> Iterator[Any]:
        span = (self.size - 1) * self.stride + 1
        held: list[Any] = []  # the elements a window may still need: at most `span`
        source = self.input._elements()
        while True:
            held.extend(itertools.islice(source, span - len(held)))
            window = held[:span:self.stride]
            if not window or (self.drop_remainder and len(window) < self.size):
                return
            yield self._as_datasets(window)
            beyond = self.shift - len(held)  # a shift past the held elements skips input
            held = held[self.shift:]
            if beyond > 0:
                for _ in itertools.islice(source, beyond):
                    pass

    def _as_datasets(self, window: list[Any]) -> Any:
        from .sources import TensorSlices
        columns = [np.stack(c) for c in zip(*(structure.flatten(e) for e in window))]
        return structure.unflatten(window[0], [TensorSlices(c) for c in columns])

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self) -> Any:
        return structure.map_nest(lambda s: _DatasetSpec(s), self.input._spec())


class _DatasetSpec:
    """TF's ``DatasetSpec``: the spec of an element that is itself a dataset."""

    def __init__(self, element_spec: Any):
        self.element_spec = element_spec

    def __repr__(self) -> str:
        return f"DatasetSpec({self.element_spec!r}, TensorShape([]))"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _DatasetSpec) and other.element_spec == self.element_spec
