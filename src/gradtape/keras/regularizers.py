"""``keras.regularizers``: weight penalties a layer adds to its ``losses``."""

from __future__ import annotations

from typing import Any

from .. import ops
from ..api.creation import zeros
from ..core.tensor import Tensor

__all__ = ["L1", "L1L2", "L2", "Regularizer", "get", "l1", "l1_l2", "l2", "serialize"]


class Regularizer:
    """Base class: ``regularizer(weight)`` is a scalar penalty."""

    def __call__(self, x: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__.")

    def get_config(self) -> dict:
        return {}


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x**2)``."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x: Any) -> Tensor:
        penalty = zeros((), x.dtype)
        if self.l1:
            penalty = penalty + self.l1 * ops.reduce_sum(ops.abs(x))
        if self.l2:
            penalty = penalty + self.l2 * ops.reduce_sum(ops.square(x))
        return penalty

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1: float = 0.01):
        super().__init__(l1=l1)

    def get_config(self) -> dict:
        return {"l1": self.l1}


class L2(L1L2):
    def __init__(self, l2: float = 0.01):
        super().__init__(l2=l2)

    def get_config(self) -> dict:
        return {"l2": self.l2}


l1, l2, l1_l2 = L1, L2, L1L2
_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": L1L2, "L1": L1, "L2": L2, "L1L2": L1L2}


def get(identifier: Any) -> Any:
    """A regularizer from a name (``"l2"``), an instance or a callable; ``None`` stays."""
    if identifier is None or callable(identifier) and not isinstance(identifier, type):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    if isinstance(identifier, type) and issubclass(identifier, Regularizer):
        return identifier()
    if isinstance(identifier, dict) and identifier.get("class_name") in _BY_NAME:
        return _BY_NAME[identifier["class_name"]](**identifier.get("config", {}))
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}; pass "
                     f"one of {sorted(_BY_NAME)}, a Regularizer, or a callable.")


def serialize(regularizer: Regularizer) -> dict:
    """Keras 3's form in a layer config: ``{"class_name": "L2", "config": {"l2": ...}}``."""
    return {"class_name": type(regularizer).__name__, "config": regularizer.get_config()}
