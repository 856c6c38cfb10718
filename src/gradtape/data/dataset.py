"""``Dataset``: the base of every pipeline stage, its reading methods and the
transformations (each a class of ``sources.py``, ``transforms.py`` or ``shuffle.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.state import state
from . import structure
from .missing import missing_method

AUTOTUNE = -1  # TF's tf.data.AUTOTUNE
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class _DatasetType(type):
    def __getattr__(cls, name: str) -> Any:  # Dataset.counter, Dataset.list_files...
        raise missing_method(f"type object {cls.__name__!r}", name)


class Dataset(metaclass=_DatasetType):
    """TF's ``tf.data.Dataset``: build one with ``from_tensor_slices``, ``from_tensors``,
    ``from_generator``, ``range`` or ``zip``, chain transformations, iterate it."""

    def __getattr__(self, name: str) -> Any:  # only names the stage does not have
        raise missing_method(f"{type(self).__name__!r} object", name)

    # --- what each stage defines ----------------------------------------------------------
    def _elements(self) -> Iterator[Any]:
        """A fresh pass over the elements, as nests of NumPy arrays."""
        raise NotImplementedError

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self) -> Any:
        """The element spec; by default that of the first element (a stage whose
        element shapes depend on a user function: ``map``, ``flat_map``...)."""
        for element in self._elements():
            return structure.spec_of(element)
        raise InvalidArgumentError("The dataset is empty, so its element_spec is unknown.")

    # --- reading --------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Any]:
        if state.tracer is not None:  # inside @gt.function: elements read at run time
            from .in_function import traced_iterator
            return traced_iterator(self)
        return map(structure.as_tensors, self._elements())

    def as_numpy_iterator(self) -> Iterator[Any]:
        """The elements as NumPy arrays (nests kept), a scalar as a NumPy scalar, as
        TF's ``.numpy()`` gives it."""
        for element in self._elements():
            yield structure.map_nest(_numpy_value, element)

    @property
    def element_spec(self) -> Any:
        """The ``TensorSpec`` nest of an element (``None`` for a dimension that varies)."""
        return self._spec()

    def cardinality(self) -> int:
        """The number of elements, or ``INFINITE_CARDINALITY`` (-1) or
        ``UNKNOWN_CARDINALITY`` (-2)."""
        return self._cardinality()

    def __len__(self) -> int:
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self) -> bool:
        return True  # TF's: a dataset is truthy even when len() is unknown

    def reduce(self, initial_state: Any, reduce_func: Callable[[Any, Any], Any]) -> Any:
        """Folds ``reduce_func(state, element)`` over the elements."""
        result = initial_state
        for element in self:
            result = reduce_func(result, element)  # TF: (state, element), unpacked no further
        return result

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        return transformation_func(self)

    def get_single_element(self, name: str | None = None) -> Any:
        """The one element of the dataset (TF's ``InvalidArgumentError`` unless it has
        exactly one)."""
        elements = iter(self)
        for element in elements:
            for _ in elements:
                raise InvalidArgumentError("Dataset had more than one element.")
            return element
        raise InvalidArgumentError("Dataset was empty.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} element_spec={self.element_spec}>"

    # --- creation -------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors: Any, name: str | None = None) -> Dataset:
        """One element per row of the first axis (of every leaf of a tuple/dict nest).
        A Dask array is read one chunk at a time."""
        return sources.TensorSlices(tensors)

    @staticmethod
    def from_tensors(tensors: Any, name: str | None = None) -> Dataset:
        """One element: ``tensors``."""
        return sources.Tensors(tensors)

    @staticmethod
    def from_generator(generator: Callable[..., Any], output_types: Any = None,
                       output_shapes: Any = None, args: Any = None,
                       output_signature: Any = None, name: str | None = None) -> Dataset:
        """The elements ``generator(*args)`` yields, each checked against
        ``output_signature`` (or the deprecated ``output_types``/``output_shapes``)."""
        return sources.Generator(generator, output_types, output_shapes, args,
                                 output_signature)

    @staticmethod
    def range(*args: int, output_type: Any = np.int64, name: str | None = None) -> Dataset:
        """``range(stop)``, ``range(start, stop[, step])``: int64 scalars."""
        return sources.Range(*args, dtype=output_type)

    @staticmethod
    def zip(*datasets: Any, name: str | None = None) -> Dataset:
        """Elements of the datasets side by side (a tuple or dict of datasets, or
        several datasets), as many as the shortest has."""
        if len(datasets) == 1:
            datasets = datasets[0]
        return sources.Zip(datasets)

    def concatenate(self, dataset: Dataset, name: str | None = None) -> Dataset:
        """This dataset's elements, then ``dataset``'s."""
        return sources.Concatenate(self, dataset)

    # --- transformations ------------------------------------------------------------------
    def batch(self, batch_size: int, drop_remainder: bool = False,
              num_parallel_calls: Any = None, deterministic: Any = None,
              name: str | None = None) -> Dataset:
        return shuffle.batch(self, _positive(batch_size, "batch_size"), drop_remainder)

    def padded_batch(self, batch_size: int, padded_shapes: Any = None,
                     padding_values: Any = None, drop_remainder: bool = False,
                     name: str | None = None) -> Dataset:
        return transforms.PaddedBatch(self, _positive(batch_size, "batch_size"),
                                      padded_shapes, padding_values, drop_remainder)

    def unbatch(self, name: str | None = None) -> Dataset:
        return transforms.Unbatch(self)

    def shuffle(self, buffer_size: int, seed: int | None = None,
                reshuffle_each_iteration: bool = True, name: str | None = None) -> Dataset:
        """TF's buffer: each element out is a uniformly random one of the next
        ``buffer_size``, replaced by the next input."""
        return shuffle.Shuffle(self, _positive(buffer_size, "buffer_size"), seed,
                               reshuffle_each_iteration)

    def map(self, map_func: Callable[..., Any], num_parallel_calls: Any = None,
            deterministic: Any = None, name: str | None = None) -> Dataset:
        """``map_func`` on each element: a tuple's components as separate arguments, a
        dict or a single tensor as one. ``num_parallel_calls`` is accepted (runs in
        order)."""
        return transforms.Map(self, map_func)

    def filter(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        return transforms.Filter(self, predicate)

    def flat_map(self, map_func: Callable[..., Dataset], name: str | None = None) -> Dataset:
        return transforms.FlatMap(self, map_func)

    def interleave(self, map_func: Callable[..., Dataset], cycle_length: Any = None,
                   block_length: int = 1, num_parallel_calls: Any = None,
                   deterministic: Any = None, name: str | None = None) -> Dataset:
        return transforms.Interleave(self, map_func, cycle_length, block_length)

    def repeat(self, count: int | None = None, name: str | None = None) -> Dataset:
        return transforms.Repeat(self, -1 if count is None else int(count))

    def take(self, count: int, name: str | None = None) -> Dataset:
        return transforms.Take(self, int(count))

    def skip(self, count: int, name: str | None = None) -> Dataset:
        return transforms.Skip(self, int(count))

    def take_while(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        return transforms.TakeWhile(self, predicate)

    def cache(self, filename: str = "", name: str | None = None) -> Dataset:
        """Keeps the elements in memory after the first full pass (``filename`` must be
        ``""``: a file cache is not built)."""
        if filename:
            raise NotImplementedError(
                "Dataset.cache(filename) is not supported: gradtape caches in memory "
                "only; call cache() without a filename.")
        return transforms.Cache(self)

    def prefetch(self, buffer_size: int, name: str | None = None) -> Dataset:
        """Accepted for TF programs: elements are produced when read (no thread)."""
        return transforms.Passthrough(self)

    def enumerate(self, start: int = 0, name: str | None = None) -> Dataset:
        return transforms.Enumerate(self, int(start))

    def window(self, size: int, shift: int | None = None, stride: int = 1,
               drop_remainder: bool = False, name: str | None = None) -> Dataset:
        """A dataset of windows, each a dataset (a nest of datasets for nested
        elements), as TF's; ``flat_map(lambda w: w.batch(size))`` makes them batches."""
        size = _positive(size, "size")
        return transforms.Window(self, size, _positive(shift or size, "shift"),
                                 _positive(stride, "stride"), drop_remainder)


def _numpy_value(leaf: Any) -> Any:
    return leaf[()] if isinstance(leaf, np.ndarray) and leaf.ndim == 0 else leaf


def _positive(value: Any, what: str) -> int:
    value = int(value)
    if value <= 0:
        raise InvalidArgumentError(f"`{what}` must be greater than zero, got {value}.")
    return value


def _as_args(element: Any) -> tuple:
    """A tuple element's components as separate arguments, as TF calls user functions."""
    return element if type(element) is tuple else (element,)


def cardinality(dataset: Dataset) -> int:
    """``tf.data.experimental.cardinality``."""
    return dataset.cardinality()


from . import shuffle, sources, transforms  # noqa: E402  (they subclass Dataset)
