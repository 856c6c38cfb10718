"""The cache key of a call of a ``@gt.function``: each tensor's shape and dtype, each
Variable's identity, and every other argument by value (so it must be hashable), in
``nest.flatten`` order, with the tensor leaves the trace takes as inputs, and the
tensors the function captures (``CaptureProbe``)."""

from __future__ import annotations

import dis
import inspect
import operator
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.tensor import Tensor
from ..core.variable import Variable
from .protocols import tracing_key


def _hashable(value: Any, name: str) -> Any:
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"@gt.function {name!r} got an argument of type {type(value).__name__} that is "
            f"not hashable: {value!r}. Arguments that are not tensors or arrays are part of "
            "the signature (a new value traces again), so they must be hashable. Pass it "
            "as a tensor (gt.constant), a tuple instead of a list of numbers, or capture "
            "it in a closure."
        ) from None
    return value


def walk_call_key(value: Any, key: list, leaves: list, name: str) -> None:
    """Append ``value``'s signature to ``key`` and its tensor leaves to ``leaves``, in
    ``nest.flatten`` order."""
    cls = value.__class__
    if cls is Tensor:
        array = value._value
        key.append((array.shape, array.dtype))
        leaves.append(value)
    elif isinstance(value, Variable):
        key.append(("variable", value._id, value.shape, value.dtype))
    elif isinstance(value, Tensor):
        key.append((value.shape, value.dtype))
        leaves.append(value)
    elif isinstance(value, (np.ndarray, np.generic)):
        key.append((value.shape, value.dtype))
        leaves.append(value)
    elif isinstance(value, dict):
        keys = sorted(value)
        key.append((cls, tuple(keys)))
        for k in keys:
            walk_call_key(value[k], key, leaves, name)
    elif isinstance(value, (list, tuple)):
        key.append((cls, len(value)))
        for item in value:
            walk_call_key(item, key, leaves, name)
    else:
        protocol_key = tracing_key(value)  # TF's __tf_tracing_type__, if it has one
        key.append(protocol_key if protocol_key is not None
                   else (cls, _hashable(value, name)))


def global_names(code: types.CodeType) -> tuple[str, ...]:
    """The names ``code`` (and the code nested in it: comprehensions, lambdas) reads as
    globals, whose tensors are part of the key (api.py's capture probe): not its
    attribute names (``tape.watch``), which each warm call would look up for nothing."""
    names = [i.argval for i in dis.get_instructions(code)
             if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += global_names(const)
    return tuple(dict.fromkeys(names))


_contents = operator.attrgetter("cell_contents")
_SEQUENCES = frozenset((list, tuple))


class CaptureProbe:
    """Variables and tensors a function reaches through its closure cells and the globals
    it names (directly, or in a list, tuple or dict): their identity is part of the
    signature, so rebinding one traces again (a trace reads the objects it captured)."""

    MAX_CONTAINER = 256  # longer containers are not scanned on every call

    def __init__(self, function: Callable[..., Any]):
        function = inspect.unwrap(getattr(function, "__func__", function))
        code = getattr(function, "__code__", None)
        self.cells = tuple(getattr(function, "__closure__", None) or ())
        self.names = global_names(code) if code is not None else ()
        self._lookup = getattr(function, "__globals__", {}).get
        # What the last scan saw, when it found no container: (cell, its value) and
        # (global name, its value) pairs. The same objects again (the usual warm call)
        # give the same result without a scan: one identity test each, nothing built.
        # They are held, so none can be freed and another take its address.
        self._remembered = False
        self._cells_seen: tuple = ()
        self._names_seen: tuple = ()
        self._found: tuple = ()

    def key(self) -> tuple:
        """The tensors' ids: this call's part of the signature."""
        if not self._remembered:
            return self._scan()
        try:
            for cell, value in self._cells_seen:
                if cell.cell_contents is not value:
                    return self._scan()
        except ValueError:  # an empty cell (a name the function binds later)
            return self._scan()
        lookup = self._lookup
        for global_name, value in self._names_seen:
            if lookup(global_name) is not value:
                return self._scan()
        return self._found

    def _scan(self) -> tuple:
        cells = [(c, _contents(c)) for c in self.cells if _filled(c)]
        names = [(n, self._lookup(n)) for n in self.names]
        found: list[int] = []
        remember = len(cells) == len(self.cells)  # an empty cell is looked at anew
        for _, value in cells + names:
            cls = value.__class__
            if cls in _SEQUENCES:
                remember = False  # its items may change in place
                if 0 < len(value) <= self.MAX_CONTAINER and isinstance(value[0], Tensor):
                    found.extend(v._id for v in value if isinstance(v, Tensor))
            elif cls is dict:
                remember = False
                if 0 < len(value) <= self.MAX_CONTAINER:
                    found.extend(v._id for v in value.values() if isinstance(v, Tensor))
            elif isinstance(value, Tensor):
                found.append(value._id)
        result = tuple(found)
        self._remembered = remember
        if remember:
            self._cells_seen, self._names_seen, self._found = tuple(cells), tuple(names), result
        return result


def _filled(cell: types.CellType) -> bool:
    try:
        _contents(cell)
    except ValueError:  # empty
        return False
    return True
