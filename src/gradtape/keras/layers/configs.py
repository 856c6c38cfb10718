"""A layer's ``get_config`` entries as Keras 3 writes them: initializers and
regularizers as ``{"class_name", "config"}`` dicts, activations by name, tuples and plain
values as they are, so ``type(layer).from_config(layer.get_config())`` rebuilds it."""

from __future__ import annotations

from typing import Any

from .. import activations, initializers, regularizers


def config_entries(layer: Any, *names: str) -> dict[str, Any]:
    """``{name: getattr(layer, name)}``, each value serialized as Keras 3 does."""
    return {name: serialized(getattr(layer, name)) for name in names}


def serialized(value: Any) -> Any:
    if isinstance(value, initializers.Initializer):
        return initializers.serialize(value)
    if isinstance(value, regularizers.Regularizer):
        return regularizers.serialize(value)
    if callable(value) and getattr(value, "__module__", None) == activations.__name__:
        return activations.serialize(value)
    return value
