"""TensorShape: TF's shape object, as a tuple subclass so every tuple use keeps working."""

from __future__ import annotations

import math
from typing import Any


class TensorShape(tuple):
    """The shape of a tensor (``t.shape``): a tuple of ints with TF's methods.

    Shapes here are always fully known (eager tensors). Slicing and ``+`` give plain
    tuples; it compares, hashes and unpacks as a tuple. Unlike TF's it does not equal a
    list (``t.shape == [2, 3]`` is False; use ``t.shape.as_list() == [2, 3]``): a Python
    ``__eq__`` made every shape comparison in the library several times slower."""

    __slots__ = ()

    def __new__(cls, dims: Any = ()) -> TensorShape:
        if isinstance(dims, int):
            dims = (dims,)
        return tuple.__new__(cls, (int(d) for d in dims))

    @property
    def rank(self) -> int:
        return len(self)

    ndims = rank

    @property
    def dims(self) -> list[int]:
        return list(self)

    def as_list(self) -> list[int]:
        return list(self)

    def num_elements(self) -> int:
        return math.prod(self)

    def is_fully_defined(self) -> bool:
        return True

    def is_compatible_with(self, other: Any) -> bool:
        other = tuple(other)
        return len(other) == len(self) and all(
            o is None or o == d for o, d in zip(other, self))

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {tuple(other)} are incompatible.")

    def assert_has_rank(self, rank: int) -> None:
        if len(self) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}.")

    def merge_with(self, other: Any) -> TensorShape:
        self.assert_is_compatible_with(other)
        return self

    def concatenate(self, other: Any) -> TensorShape:
        return TensorShape(tuple(self) + tuple(other))

    def __repr__(self) -> str:
        return f"TensorShape({list(self)})"

    def __str__(self) -> str:
        return tuple.__repr__(self)

    def __reduce__(self) -> tuple:
        return (TensorShape, (tuple(self),))


# Shapes repeat: one TensorShape per distinct shape makes ``t.shape`` a dict lookup.
_CACHE: dict[tuple, TensorShape] = {}
_CACHE_LIMIT = 4096


def shape_of(shape: tuple) -> TensorShape:
    """The (shared) TensorShape for a NumPy shape tuple."""
    found = _CACHE.get(shape)
    if found is None:
        found = TensorShape(shape)
        if len(_CACHE) >= _CACHE_LIMIT:
            # Start over rather than stop caching: the shapes in use now get shared again.
            _CACHE.clear()
        _CACHE[shape] = found
    return found
