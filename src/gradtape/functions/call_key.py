"""The cache key of a call of a ``@gt.function``: each tensor's shape and dtype, each
Variable's identity, and every other argument by value (so it must be hashable), in
``nest.flatten`` order, with the tensor leaves the trace takes as inputs."""

from __future__ import annotations

import dis
import types
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
