"""TensorShape: TF's shape object, as a tuple subclass so every tuple use keeps working."""

from __future__ import annotations

import math
from typing import Any


class TensorShape(tuple):
    """The shape of a tensor (``t.shape``): a tuple of ints with TF's methods.

    Slicing and ``+`` give plain tuples; it hashes and unpacks as a tuple. A dim may be
    ``None`` (unknown, as in ``element_shape`` or a ``TensorSpec``). As TF's, it equals
    a list or tuple of the same dims (``t.shape == [2, 3]``), unknown dims equal to
    unknown ones, and ``!=`` is the negation of ``==`` (TF 2.9 on)."""

    __slots__ = ()

    def __new__(cls, dims: Any = ()) -> TensorShape:
        if isinstance(dims, int):
            dims = (dims,)
        return tuple.__new__(cls, (None if d is None else int(d) for d in dims))

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, list):  # TF's as_shape(other); tuples compare as they are
            other = tuple(other)
        return tuple.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    @property
    def rank(self) -> int:
        return len(self)

    ndims = rank

    @property
    def dims(self) -> list[int | None]:
        return list(self)

    def as_list(self) -> list[int | None]:
        return list(self)

    def num_elements(self) -> int | None:
        """The number of elements; ``None`` if a dim is unknown (TF)."""
        return None if None in self else math.prod(self)

    def is_fully_defined(self) -> bool:
        return None not in self

    def is_compatible_with(self, other: Any) -> bool:
        other = tuple(other)
        return len(other) == len(self) and all(
            o is None or d is None or o == d for o, d in zip(other, self))

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {tuple(other)} are incompatible.")

    def assert_has_rank(self, rank: int) -> None:
        if len(self) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}.")

    def merge_with(self, other: Any) -> TensorShape:
        """The shape with the dims of both (an unknown dim takes the other's)."""
        self.assert_is_compatible_with(other)
        return TensorShape(o if d is None else d for d, o in zip(self, tuple(other)))

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
