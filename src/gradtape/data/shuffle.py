"""``shuffle`` (TF's buffer algorithm and seeds) and ``batch``, with the fast path for a
shuffled or plain in-memory source: the same element order, whole batches gathered by
NumPy fancy indexing instead of element by element."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..ops.random import _DEFAULT_GLOBAL_SEED, _seeds, entropy
from . import structure
from .dataset import Dataset
from .sources import TensorSlices

_BLOCK = 4096  # uniform draws fetched at once


def _base_seed(seed: int | None) -> int:
    """TF's seed rules: an op seed fixes the order (with the global seed, or TF's
    default one); a global seed alone fixes the sequence of datasets' orders after
    ``set_seed``; neither gives a random order."""
    if seed is not None:
        global_seed = _DEFAULT_GLOBAL_SEED if _seeds.global_seed is None \
            else _seeds.global_seed
        return int(np.random.SeedSequence([entropy(global_seed), entropy(seed)])
                   .generate_state(1, np.uint64)[0])
    return int(_seeds.for_op(None).integers(2**63))


class _Draws:
    """Uniform slot choices, drawn in blocks (one NumPy call per ``_BLOCK``)."""

    def __init__(self, rng: np.random.Generator):
        self.rng, self.block, self.used = rng, np.empty(0), 0

    def slot(self, size: int) -> int:
        if self.used == len(self.block):
            self.block, self.used = self.rng.random(_BLOCK), 0
        u = self.block[self.used]
        self.used += 1
        return int(u * size)


def buffer_shuffled(items: Iterable[Any], buffer_size: int, draws: _Draws) -> Iterator[Any]:
    """TF's shuffle buffer: fill ``buffer_size`` items; each output is a uniformly random
    item of the buffer, whose slot the next input takes; at the end the buffer drains
    in random order. Memory: ``buffer_size`` items."""
    source = iter(items)
    buffer = []
    for item in source:
        buffer.append(item)
        if len(buffer) == buffer_size:
            break
    for item in source:
        slot = draws.slot(len(buffer))
        yield buffer[slot]
        buffer[slot] = item
    while buffer:
        slot = draws.slot(len(buffer))
        yield buffer[slot]
        buffer[slot] = buffer[-1]
        buffer.pop()


def buffer_order(n: int, buffer_size: int, rng: np.random.Generator) -> np.ndarray:
    """``buffer_shuffled(range(n), buffer_size, _Draws(rng))`` as an index array: the
    same uniform draws (``_Draws``'s blocks are one stream of ``rng``), all slots at once.
    While the input lasts, step ``j`` outputs what slot ``s[j]`` holds: the item the last
    earlier step with the same slot wrote there (row ``k + t``), else the slot's first
    row; so that part is one stable sort. Only the drain is a Python loop."""
    k = min(buffer_size, n)
    sizes = np.full(n, k, np.intp)  # a full buffer while the input lasts,
    sizes[n - k:] = np.arange(k, 0, -1)  # then draining
    slots = (rng.random(n) * sizes).astype(np.intp)
    steady = slots[:n - k]
    by_slot = np.argsort(steady, kind="stable")  # each slot's steps, in time order
    grouped = steady[by_slot]
    follows = np.zeros(len(grouped), bool)  # the step before it took the same slot
    follows[1:] = grouped[1:] == grouped[:-1]
    earlier = np.empty_like(by_slot)
    earlier[1:] = by_slot[:-1]
    order = np.empty(n, np.intp)
    order[by_slot] = np.where(follows, k + earlier, grouped)
    buffer = np.arange(k)  # what each slot holds when the input ends
    last = np.ones(len(grouped), bool)
    last[:-1] = ~follows[1:]
    buffer[grouped[last]] = k + by_slot[last]
    held, drained = buffer.tolist(), []
    take = drained.append
    for slot in slots[n - k:].tolist():
        take(held[slot])
        held[slot] = held[-1]
        held.pop()
    order[n - k:] = drained
    return order


class Shuffle(Dataset):
    """``shuffle(buffer_size, seed, reshuffle_each_iteration)``."""

    def __init__(self, input: Dataset, buffer_size: int, seed: int | None,
                 reshuffle: bool):
        self.input, self.buffer_size, self.reshuffle = input, buffer_size, reshuffle
        self.base_seed = _base_seed(seed)
        self.passes = 0

    def _draws(self) -> _Draws:
        """A new pass's draws: the same each pass, or the next pass's own."""
        index = self.passes if self.reshuffle else 0
        self.passes += 1
        return _Draws(np.random.default_rng([self.base_seed, index]))

    def index_order(self) -> np.ndarray:
        """The order of an in-memory source's rows in the next pass."""
        return buffer_order(self.input.n, self.buffer_size, self._draws().rng)

    def _elements(self) -> Iterator[Any]:
        if _in_memory(self.input):
            source = self.input
            for i in self.index_order():
                yield source.rows(i)
            return
        yield from buffer_shuffled(self.input._elements(), self.buffer_size, self._draws())

    def _cardinality(self) -> int:
        return self.input._cardinality()

    def _spec(self) -> Any:
        return self.input._spec()


def _in_memory(dataset: Dataset) -> bool:
    return isinstance(dataset, TensorSlices) and dataset.in_memory()


def batch(input: Dataset, batch_size: int, drop_remainder: bool) -> Dataset:
    """``Dataset.batch``: gathered rows when the input is an in-memory source, shuffled
    or not; element by element otherwise."""
    if _in_memory(input) or (isinstance(input, Shuffle) and _in_memory(input.input)):
        return GatheredBatch(input, batch_size, drop_remainder)
    return Batch(input, batch_size, drop_remainder)


class Batch(Dataset):
    """Consecutive elements stacked (the last batch smaller unless ``drop_remainder``)."""

    def __init__(self, input: Dataset, batch_size: int, drop_remainder: bool):
        self.input, self.batch_size, self.drop_remainder = input, batch_size, drop_remainder

    def _elements(self) -> Iterator[Any]:
        pending = []
        for element in self.input._elements():
            pending.append(element)
            if len(pending) == self.batch_size:
                yield structure.stack(pending)
                pending = []
        if pending and not self.drop_remainder:
            yield structure.stack(pending)

    def _cardinality(self) -> int:
        n = self.input._cardinality()
        if n < 0:
            return n
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def _spec(self) -> Any:  # TF's: the batch dimension is known with drop_remainder
        return structure.batched_spec(self.input._spec(),
                                      self.batch_size if self.drop_remainder else None)


class GatheredBatch(Batch):
    """``batch`` over an in-memory source: each batch's rows taken at once."""

    def _elements(self) -> Iterator[Any]:
        shuffled = isinstance(self.input, Shuffle)
        source = self.input.input if shuffled else self.input
        n, size = source.n, self.batch_size
        order = self.input.index_order() if shuffled else None
        stop = n - n % size if self.drop_remainder else n
        for start in range(0, stop, size):
            end = min(start + size, n)
            yield source.rows(slice(start, end) if order is None else order[start:end])
