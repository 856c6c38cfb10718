"""What ``fit``, ``evaluate`` and ``predict`` read: arrays or a ``gt.data.Dataset``, as
an iterator of batches ``(x, y[, sample_weight])`` per epoch, with Keras 3's rules for
``batch_size``, ``steps_per_epoch`` and a dataset that runs out."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from ..data.dataset import Dataset


def is_dataset(x: Any) -> bool:
    return isinstance(x, Dataset)


def check_dataset_arguments(x: Any, y: Any, sample_weight: Any, batch_size: Any,
                            validation_split: float = 0.0) -> None:
    """Keras 3 refuses what a dataset already holds: its batches carry ``y`` and
    ``sample_weight``, and are batched."""
    if y is not None:
        raise ValueError("When `x` is a Dataset, `y` must be None: the dataset's "
                         "elements are `(x, y)` or `(x, y, sample_weight)` batches.")
    if sample_weight is not None:
        raise ValueError("When `x` is a Dataset, `sample_weight` must be None: give it "
                         "as the third component of the dataset's elements.")
    if batch_size is not None:
        raise ValueError(f"When `x` is a Dataset, `batch_size` must be None (got "
                         f"{batch_size}): the dataset is batched already; use "
                         f"`dataset.batch(n)`.")
    if validation_split:
        raise ValueError("`validation_split` is only supported for arrays and tensors, "
                         "not a Dataset; pass `validation_data=` a Dataset instead.")


def dataset_steps(dataset: Dataset) -> int | None:
    """The batches in one pass, when the dataset knows it."""
    n = dataset.cardinality()
    return n if n >= 0 else None


class EpochBatches:
    """Batches per epoch: a fresh pass each epoch, or with ``steps_per_epoch``
    Keras 3's one iterator kept across epochs and restarted when a finite source is
    used up. When the data runs out before ``steps_per_epoch`` steps, Keras's warning,
    and ``stopped`` is set (``fit`` ends)."""

    def __init__(self, new_pass: Callable[[], Iterator[Any]], steps_per_epoch: int | None,
                 batches_per_pass: int | None):
        self.new_pass, self.steps_per_epoch = new_pass, steps_per_epoch
        self.batches_per_pass = batches_per_pass
        self.current: Iterator[Any] | None = None
        self.stopped = False

    @property
    def steps(self) -> int | None:
        return self.steps_per_epoch or self.batches_per_pass

    def epoch(self) -> Iterator[Any]:
        if self.steps_per_epoch is None:
            yield from self.new_pass()
            return
        if self.current is None:
            self.current = self.new_pass()
        for _ in range(self.steps_per_epoch):
            batch = next(self.current, None)
            if batch is None:
                self._ran_out()
                return
            yield batch
        if self.batches_per_pass is not None and self._used_up():
            self.current = None

    def _used_up(self) -> bool:
        self.seen = getattr(self, "seen", 0) + self.steps_per_epoch
        if self.seen >= self.batches_per_pass:
            self.seen = 0
            return True
        return False

    def _ran_out(self) -> None:
        self.stopped = True
        warnings.warn("Your input ran out of data; interrupting training. Make sure "
                      "that your dataset or generator can generate at least "
                      "`steps_per_epoch * epochs` batches. You may need to use the "
                      "`.repeat()` function when building your dataset.",
                      UserWarning, stacklevel=4)


class Lookahead:
    """One epoch's batches for the loop in ``fit``/``evaluate``: ``has_next()`` reads
    one batch ahead (no ``on_batch_begin`` without a batch), and the step function gets
    this same iterator at every step of the epoch, as Keras 3 hands ``train_function``
    one iterator per epoch (a new iterator tells a step function that a new epoch
    began)."""

    def __init__(self, batches: Iterator[Any]):
        self._batches = iter(batches)
        self._ahead: Any = _NONE

    def __iter__(self) -> Lookahead:
        return self

    def __next__(self) -> Any:
        ahead = self._ahead
        if ahead is _NONE:
            return next(self._batches)
        self._ahead = _NONE
        return ahead

    def has_next(self) -> bool:
        if self._ahead is _NONE:
            self._ahead = next(self._batches, _NONE)
        return self._ahead is not _NONE


class OneBatchPerCall:
    """``predict``'s iterator for its step function: the same object at every call (so
    the step reads the model's Python state once per ``predict``), giving one batch per
    call (a runner returns only its last step's outputs; ``predict`` keeps each's)."""

    def __init__(self, batches: Iterator[Any]):
        self._batches = Lookahead(batches)
        self._given = True

    def __iter__(self) -> OneBatchPerCall:
        return self

    def __next__(self) -> Any:
        if self._given:
            raise StopIteration
        self._given = True
        return next(self._batches)

    def next_call(self) -> bool:
        """Lets the next call take one batch; whether there is one."""
        self._given = False
        return self._batches.has_next()


_NONE = object()  # nothing read ahead (or the end)


def limited(batches: Iterator[Any], steps: int | None) -> Iterator[Any]:
    """At most ``steps`` batches (``evaluate``/``predict``'s ``steps``)."""
    if steps is None:
        return batches
    return (batch for _, batch in zip(range(int(steps)), batches))


def array_steps(n: int, batch_size: int) -> int:
    return math.ceil(n / batch_size)


def first_input(batch: Any) -> Any:
    """``x`` of a dataset batch (``predict`` ignores ``y`` and ``sample_weight``)."""
    return batch[0] if type(batch) is tuple else batch
