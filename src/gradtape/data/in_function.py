"""Iterating a dataset inside ``@gt.function``: the tracer unrolls the Python loop, one
step per element, and each element is a ``numpy_function`` equation that pulls it from
a pass opened at run time. So every call reads the dataset anew (a shuffle reshuffles),
never the values seen while tracing; the cost is one equation per element, and a trace
as long as the dataset."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core.errors import InvalidArgumentError
from ..functions.py_function import numpy_function
from . import structure
from .dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset


class _Pass:
    """The run-time pass: element 0 opens a new pass over the dataset."""

    def __init__(self, dataset: Dataset):
        self.dataset, self.elements = dataset, iter(())

    def element(self, index: int) -> list[Any]:
        if index == 0:
            self.elements = self.dataset._elements()
        element = next(self.elements, None)
        if element is None:
            raise InvalidArgumentError(
                f"The dataset iterated inside @gt.function gave fewer elements ({index}) "
                f"than when the function was traced: the trace unrolled the loop, one "
                f"step per element. Iterate it outside the function, or keep its length "
                f"fixed.")
        return structure.flatten(element)


def traced_iterator(dataset: Dataset) -> Iterator[Any]:
    """The elements as the trace's ``numpy_function`` results, in the element's nest."""
    count = _length(dataset)
    run = _Pass(dataset)
    spec = dataset._spec()
    dtypes = [s.dtype for s in structure.flatten(spec)]
    for index in range(count):
        leaves = numpy_function(lambda i=index: run.element(i), [], dtypes,
                                name="dataset_element")
        if not isinstance(leaves, (list, tuple)):
            leaves = [leaves]
        yield structure.unflatten(spec, list(leaves))


def _length(dataset: Dataset) -> int:
    """How many steps the trace unrolls: the cardinality, or a counting pass."""
    count = dataset._cardinality()
    if count == INFINITE_CARDINALITY:
        raise InvalidArgumentError(
            "An infinite dataset cannot be iterated inside @gt.function (the tracer "
            "unrolls the loop); use dataset.take(n), or iterate it outside the function.")
    if count == UNKNOWN_CARDINALITY:
        count = sum(1 for _ in dataset._elements())
    return count
