"""Keras's object names and variable paths.

Names are made unique per process as Keras 3's ``uniquify`` does: the first ``Dense`` is
``dense``, then ``dense_1``, ``dense_2``... (``keras.backend.clear_session()`` restarts
the counts). A variable's ``path`` is the layers it was created in, outermost first, then
its name (``sequential/dense/kernel``), as Keras 3's ``name_scope`` stack builds it.
"""

from __future__ import annotations

import collections
import re
from typing import Any

from ..core.state import state

_name_counts: collections.Counter = collections.Counter()


def to_snake_case(name: str) -> str:
    """Keras 3's default-name rule: ``MaxPooling2D`` -> ``max_pooling2d``, ``PReLU`` ->
    ``p_re_lu`` (a digit does not start a word, unlike TF's module rule)."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def uniquify(prefix: str) -> str:
    """``prefix`` the first time, then ``prefix_1``, ``prefix_2``..."""
    count = _name_counts[prefix]
    _name_counts[prefix] += 1
    return prefix if count == 0 else f"{prefix}_{count}"


def clear_session() -> None:
    """Keras's ``clear_session``: restart the automatic names (``dense`` again)."""
    _name_counts.clear()


class layer_scope:
    """Opens ``layer``'s name for the variables it creates, and for the comments of the
    code generated from its ops (``# dense_1 (Dense): ...``); a layer re-entering its own
    scope (``build`` inside ``__call__``) does not nest it twice. The stack is core
    state's (``state.layers``), which the op locations read."""

    def __init__(self, layer: Any):
        self._layer = layer
        self._opened = False

    def __enter__(self) -> None:
        entries = state.layers
        if not entries or entries[-1][1] != id(self._layer):
            layer = self._layer
            entries.append((layer.name, id(layer), type(layer).__name__))
            self._opened = True

    def __exit__(self, *exc: Any) -> None:
        if self._opened:
            state.layers.pop()


def variable_path(name: str) -> str:
    """``name`` under the open layer scopes: ``dense/kernel``."""
    return "/".join([entry[0] for entry in state.layers] + [name])
