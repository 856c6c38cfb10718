"""Elements as nests: tuples and dicts of NumPy arrays, with TF's dtypes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.tensor import Tensor, convert_to_tensor
from ..functions.spec import TensorSpec


def is_nest(value: Any) -> bool:
    return isinstance(value, (tuple, dict))


def map_nest(fn: Callable[[Any], Any], value: Any) -> Any:
    """``fn`` on each leaf of a nest of tuples (named tuples too) and dicts."""
    if isinstance(value, dict):
        return {key: map_nest(fn, v) for key, v in value.items()}
    if isinstance(value, tuple):
        items = [map_nest(fn, v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return fn(value)


def flatten(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in flatten(v)]
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in flatten(v)]
    return [value]


def unflatten(template: Any, leaves: list[Any]) -> Any:
    """``leaves`` in ``template``'s structure (the inverse of ``flatten``)."""
    remaining = iter(leaves)
    return map_nest(lambda _: next(remaining), template)


def as_array(value: Any) -> np.ndarray:
    """A leaf as TF converts it: Python floats to float32, ints to int32, NumPy arrays
    and tensors keep their dtype."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, Tensor):
        return np.asarray(value.numpy())
    return np.asarray(convert_to_tensor(value).numpy())


def as_arrays(element: Any) -> Any:
    """An element's leaves as arrays; a list (TF reads it as one tensor) stays a leaf."""
    return map_nest(as_array, element)


def _is_dataset(leaf: Any) -> bool:
    return hasattr(leaf, "_elements")  # a window's element: a dataset, kept as it is


def as_tensors(element: Any) -> Any:
    return map_nest(lambda a: a if _is_dataset(a) else convert_to_tensor(a), element)


def as_numpy(element: Any) -> Any:
    return map_nest(lambda a: a.numpy() if isinstance(a, Tensor) else np.asarray(a),
                    element)


def spec_of(element: Any) -> Any:
    """The ``TensorSpec`` nest of one element."""
    return map_nest(lambda a: TensorSpec(np.shape(a), np.asarray(a).dtype), element)


def spec_relaxed(spec: Any, other: Any) -> Any:
    """The most specific spec both nests fit: differing dimensions become ``None``."""
    def relax(pair: tuple) -> TensorSpec:
        a, b = pair
        if a.shape.rank != b.shape.rank:
            return TensorSpec(None, a.dtype)
        dims = [x if x == y else None for x, y in zip(a.shape.as_list(), b.shape.as_list())]
        return TensorSpec(dims, a.dtype)
    zipped = unflatten(spec, list(zip(flatten(spec), flatten(other))))
    return map_nest(relax, zipped) if is_nest(zipped) else relax(zipped)


def batched_spec(spec: Any, batch: int | None) -> Any:
    return map_nest(lambda s: TensorSpec([batch, *s.shape.as_list()] if s.shape.rank
                                         is not None else None, s.dtype), spec)


def stack(elements: list[Any]) -> Any:
    """A batch: the elements' leaves stacked along a new first axis."""
    columns = zip(*(flatten(e) for e in elements))
    return unflatten(elements[0], [np.stack(column) for column in columns])


def check_same_structure(first: Any, second: Any, what: str) -> None:
    if spec_structure(first) != spec_structure(second):
        raise TypeError(f"{what}: the datasets' elements have different structures "
                        f"({spec_structure(first)} and {spec_structure(second)}); "
                        f"give them the same nest of tuples and dicts.")


def spec_structure(value: Any) -> Any:
    return map_nest(lambda _: "*", value)
