"""The datasets that make elements: slices, one element, a generator, a range, zip and
concatenate."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..core.dtypes import as_dtype
from ..core.errors import InvalidArgumentError
from ..functions.spec import TensorSpec
from . import structure
from .dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset


def _is_dask(value: Any) -> bool:
    return type(value).__module__.startswith("dask.array")


def _slices_leaf(value: Any) -> Any:
    """A Dask array stays lazy (read chunk by chunk); anything else becomes an array."""
    return value if _is_dask(value) else structure.as_array(value)


class TensorSlices(Dataset):
    """``from_tensor_slices``: row ``i`` of every leaf is element ``i``."""

    def __init__(self, tensors: Any):
        self.template = structure.map_nest(_slices_leaf, tensors)
        self.leaves = structure.flatten(self.template)
        if any(np.ndim(leaf) == 0 for leaf in self.leaves):
            raise InvalidArgumentError("from_tensor_slices needs tensors of rank >= 1 to "
                                       "slice; use from_tensors for a single element.")
        sizes = {int(leaf.shape[0]) for leaf in self.leaves}
        if len(sizes) != 1:
            raise InvalidArgumentError(
                f"from_tensor_slices: all components must have the same size in their "
                f"first dimension, got sizes {sorted(sizes)}.")
        self.n = sizes.pop()

    def in_memory(self) -> bool:
        """All leaves are NumPy arrays (rows gathered by fancy indexing)."""
        return not any(_is_dask(leaf) for leaf in self.leaves)

    def rows(self, index: Any) -> Any:
        """The leaves' rows ``index`` (an int, a slice or an index array), nested."""
        return structure.unflatten(self.template, [leaf[index] for leaf in self.leaves])

    def _elements(self) -> Iterator[Any]:
        if self.in_memory():
            for i in range(self.n):
                yield self.rows(i)
            return
        for start, stop in self._chunk_bounds():  # one chunk of rows in memory at a time
            chunk = [np.asarray(leaf[start:stop].compute()) if _is_dask(leaf)
                     else leaf[start:stop] for leaf in self.leaves]
            for i in range(stop - start):
                yield structure.unflatten(self.template, [leaf[i] for leaf in chunk])

    def _chunk_bounds(self) -> list[tuple[int, int]]:
        first = next(leaf for leaf in self.leaves if _is_dask(leaf))
        bounds, start = [], 0
        for size in first.chunks[0]:
            bounds.append((start, start + size))
            start += size
        return bounds

    def _cardinality(self) -> int:
        return self.n

    def _spec(self) -> Any:
        return structure.map_nest(
            lambda leaf: TensorSpec(leaf.shape[1:], np.dtype(leaf.dtype)), self.template)


class Tensors(Dataset):
    """``from_tensors``: one element."""

    def __init__(self, tensors: Any):
        self.element = structure.as_arrays(tensors)

    def _elements(self) -> Iterator[Any]:
        yield self.element

    def _cardinality(self) -> int:
        return 1

    def _spec(self) -> Any:
        return structure.spec_of(self.element)


class Generator(Dataset):
    """``from_generator``: a new ``generator(*args)`` per pass, each element checked
    against the signature."""

    def __init__(self, generator: Callable[..., Any], output_types: Any,
                 output_shapes: Any, args: Any, output_signature: Any):
        if not callable(generator):
            raise TypeError("from_generator: `generator` must be a callable that returns "
                            "an iterator (pass the generator function, not its result).")
        if output_signature is None:
            if output_types is None:
                raise TypeError("from_generator: give `output_signature` (a TensorSpec "
                                "nest), or the deprecated `output_types`.")
            output_signature = _signature(output_types, output_shapes)
        self.generator, self.signature = generator, output_signature
        self.args = tuple(structure.as_array(a) for a in (args or ()))

    def _elements(self) -> Iterator[Any]:
        for value in self.generator(*self.args):
            yield _conformed(self.signature, value)

    def _spec(self) -> Any:
        return self.signature


def _signature(types: Any, shapes: Any) -> Any:
    if shapes is None:
        return structure.map_nest(lambda t: TensorSpec(None, t), types)
    specs = [TensorSpec(shape, dtype) for dtype, shape in
             zip(structure.flatten(types), _shape_leaves(types, shapes))]
    return structure.unflatten(types, specs)


def _shape_leaves(types: Any, shapes: Any) -> list[Any]:
    """The shapes of ``output_shapes``, one per type (a shape is a tuple or list too)."""
    if not structure.is_nest(types):
        return [shapes]
    if isinstance(types, dict):
        return [s for k in types for s in _shape_leaves(types[k], shapes[k])]
    return [s for t, sh in zip(types, shapes) for s in _shape_leaves(t, sh)]


def _conformed(signature: Any, value: Any) -> Any:
    """``value`` as arrays of the signature's dtypes, its shapes checked."""
    if not structure.is_nest(signature):
        return _conformed_leaf(signature, value)
    if isinstance(signature, dict):
        if not isinstance(value, dict) or set(value) != set(signature):
            raise _mismatch(signature, value)
        return {k: _conformed(signature[k], value[k]) for k in signature}
    if not isinstance(value, (tuple, list)) or len(value) != len(signature):
        raise _mismatch(signature, value)
    return tuple(_conformed(s, v) for s, v in zip(signature, value))


def _conformed_leaf(spec: TensorSpec, value: Any) -> np.ndarray:
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    dtype = as_dtype(spec.dtype).as_numpy_dtype
    if array.dtype != dtype and not np.can_cast(array.dtype, dtype, "same_kind"):
        raise _mismatch(spec, value)
    array = array.astype(dtype, copy=False)
    if not spec.shape.is_compatible_with(array.shape):
        raise _mismatch(spec, value)
    return array


def _mismatch(signature: Any, value: Any) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"`generator` yielded an element that did not match the expected structure: "
        f"expected {signature}, got {value!r}. Make the generator yield what "
        f"`output_signature` says.")


class Range(Dataset):
    """``Dataset.range``."""

    def __init__(self, *args: int, dtype: Any):
        self.range = range(*(int(a) for a in args))
        self.dtype = as_dtype(dtype).as_numpy_dtype

    def _elements(self) -> Iterator[Any]:
        dtype = self.dtype
        for i in self.range:
            yield np.asarray(i, dtype)

    def _cardinality(self) -> int:
        return len(self.range)

    def _spec(self) -> Any:
        return TensorSpec([], self.dtype)


def _min_cardinality(counts: list[int]) -> int:
    finite = [n for n in counts if n >= 0]
    if finite:
        return min(finite)
    return UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in counts else INFINITE_CARDINALITY


class Zip(Dataset):
    """``Dataset.zip``: a nest of datasets gives a nest of their elements."""

    def __init__(self, datasets: Any):
        self.template = datasets
        self.datasets = structure.flatten(datasets)
        if not all(isinstance(d, Dataset) for d in self.datasets):
            raise TypeError("Dataset.zip takes datasets (a tuple or dict of them, or "
                            "several arguments); wrap arrays with from_tensor_slices.")

    def _elements(self) -> Iterator[Any]:
        for parts in zip(*(d._elements() for d in self.datasets)):
            yield structure.unflatten(self.template, list(parts))

    def _cardinality(self) -> int:
        return _min_cardinality([d._cardinality() for d in self.datasets])

    def _spec(self) -> Any:
        return structure.unflatten(self.template, [d._spec() for d in self.datasets])


class Concatenate(Dataset):
    """``a.concatenate(b)``."""

    def __init__(self, first: Dataset, second: Dataset):
        structure.check_same_structure(first._spec(), second._spec(), "concatenate")
        self.first, self.second = first, second

    def _elements(self) -> Iterator[Any]:
        yield from self.first._elements()
        yield from self.second._elements()

    def _cardinality(self) -> int:
        a, b = self.first._cardinality(), self.second._cardinality()
        if INFINITE_CARDINALITY in (a, b):
            return INFINITE_CARDINALITY
        if UNKNOWN_CARDINALITY in (a, b):
            return UNKNOWN_CARDINALITY
        return a + b

    def _spec(self) -> Any:
        return structure.spec_relaxed(self.first._spec(), self.second._spec())
