"""Keras 3's masks: which time steps of a sequence are real (the ``Masking`` layer is
in ``masking.py``). A mask rides with the tensor a layer returned (``_keras_mask``): ``Masking`` and
``Embedding(mask_zero=True)`` make one, a layer whose ``call`` takes ``mask`` receives
its first input's, and a layer that ``supports_masking`` passes on what its
``compute_mask`` says (the input's mask unless it overrides it). A layer that does not
support masking drops the mask, with Keras's warning.

Tensors have fixed slots, so the masks are kept here by tensor identity, each entry
removed when its tensor dies: with no mask alive, the layer call's check is one test of
an empty dict.
"""

from __future__ import annotations

import inspect
import warnings
import weakref
from typing import Any

from ...core.tensor import Tensor

__all__ = ["fill_named_masks", "get_keras_mask", "propagate", "set_keras_mask"]

# id(tensor) -> (a weak reference to the tensor, its mask).
masks: dict[int, tuple[Any, Any]] = {}


def _forget(key: int) -> Any:
    return lambda _ref: masks.pop(key, None)


def set_keras_mask(tensor: Any, mask: Any) -> None:
    """Attaches ``mask`` (a boolean tensor, ``(batch, time)``) to ``tensor``."""
    if not isinstance(tensor, Tensor):
        return
    key = id(tensor)
    masks[key] = (weakref.ref(tensor, _forget(key)), mask)


def get_keras_mask(tensor: Any) -> Any:
    """The mask attached to ``tensor``, or None."""
    entry = masks.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        return None
    return entry[1]


def first_leaf(value: Any) -> Any:
    """The first tensor of a layer's first argument (lists: their first element)."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return value


_named_masks: dict[type, tuple] = {}


def _named_mask_arguments(cls: type) -> tuple:
    """``(argument, position, mask argument)`` for each argument ``x`` of ``cls.call``
    that has an ``x_mask`` parameter (``MultiHeadAttention``'s query, value, key)."""
    found = _named_masks.get(cls)
    if found is None:
        names = list(inspect.signature(cls.call).parameters)[1:]  # without self
        found = tuple((n, i, f"{n}_mask") for i, n in enumerate(names)
                      if f"{n}_mask" in names)
        _named_masks[cls] = found
    return found


def fill_named_masks(cls: type, args: tuple, kwargs: dict) -> None:
    """Keras 3 hands a tensor argument ``x``'s mask to the ``x_mask`` parameter of
    ``call`` when it is not given (so attention skips an embedding's padding)."""
    for name, position, mask_name in _named_mask_arguments(cls):
        if kwargs.get(mask_name) is not None:
            continue
        value = args[position] if position < len(args) else kwargs.get(name)
        mask = None if value is None else get_keras_mask(first_leaf(value))
        if mask is not None:
            kwargs[mask_name] = mask


def propagate(layer: Any, inputs: Any, outputs: Any, previous: Any) -> None:
    """Keras 3's ``_set_mask_metadata``: after ``layer`` returned ``outputs`` from
    ``inputs`` (whose mask was ``previous``), attach its ``compute_mask`` to the outputs
    that have none; a layer without masking support that receives a mask warns."""
    if not layer.supports_masking:
        if previous is not None:
            warnings.warn(
                f"Layer '{layer.name}' (of type {type(layer).__name__}) was passed an "
                "input with a mask attached to it. However, this layer does not support "
                "masking and will therefore destroy the mask information. Downstream "
                "layers will not see the mask.", UserWarning, stacklevel=4)
        return
    leaves = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    if all(get_keras_mask(t) is not None for t in leaves):
        return
    computed = layer.compute_mask(inputs, previous)
    if computed is None:
        return
    computed = list(computed) if isinstance(computed, (list, tuple)) else [computed]
    for tensor, mask in zip(leaves, computed):
        if mask is not None and get_keras_mask(tensor) is None:
            set_keras_mask(tensor, mask)

