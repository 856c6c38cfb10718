"""``keras.activations``: Keras 3's activation functions, as gt ops (differentiable).

``get`` resolves what layers take as ``activation=``: ``None`` (linear), a name
(``"relu"``), or a callable (``tf.nn.relu``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import ops
from ..core.tensor import Tensor, convert_to_tensor
from ..ops import nn

__all__ = [
    "deserialize", "elu", "exponential", "gelu", "get", "hard_sigmoid", "leaky_relu",
    "linear", "log_softmax", "relu", "relu6", "selu", "serialize", "sigmoid", "silu",
    "softmax", "softplus", "softsign", "swish", "tanh",
]


def relu(x: Any, negative_slope: float = 0.0, max_value: float | None = None,
         threshold: float = 0.0) -> Tensor:
    """``max(x, 0)``; with ``negative_slope`` a leaky slope below ``threshold``, with
    ``max_value`` clipped above."""
    x = convert_to_tensor(x)
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return nn.relu(x)
    below = x < threshold
    out = ops.where(below, negative_slope * (x - threshold), x) if negative_slope else \
        ops.where(below, ops.zeros_like(x), x)
    if max_value is not None:
        out = ops.minimum(out, convert_to_tensor(max_value, dtype=out.dtype))
    return out


def leaky_relu(x: Any, negative_slope: float = 0.2) -> Tensor:
    return nn.leaky_relu(x, alpha=negative_slope)


def relu6(x: Any) -> Tensor:
    return nn.relu6(x)


def elu(x: Any, alpha: float = 1.0) -> Tensor:
    """``x`` above 0, ``alpha * (exp(x) - 1)`` below."""
    if alpha == 1.0:
        return nn.elu(x)
    x = convert_to_tensor(x)
    return ops.where(x > 0, x, alpha * ops.expm1(ops.minimum(x, ops.zeros_like(x))))


def selu(x: Any) -> Tensor:
    return nn.selu(x)


def gelu(x: Any, approximate: bool = False) -> Tensor:
    return nn.gelu(x, approximate=approximate)


def sigmoid(x: Any) -> Tensor:
    return nn.sigmoid(x)


def hard_sigmoid(x: Any) -> Tensor:
    """Keras 3's ``relu6(x + 3) / 6``."""
    return nn.relu6(convert_to_tensor(x) + 3.0) / 6.0


def silu(x: Any) -> Tensor:
    """``x * sigmoid(x)``."""
    return nn.silu(x)


swish = silu


def softplus(x: Any) -> Tensor:
    return nn.softplus(x)


def softsign(x: Any) -> Tensor:
    x = convert_to_tensor(x)
    return x / (ops.abs(x) + 1.0)


def tanh(x: Any) -> Tensor:
    return nn.tanh(x)


def exponential(x: Any) -> Tensor:
    return ops.exp(x)


def softmax(x: Any, axis: int = -1) -> Tensor:
    return nn.softmax(x, axis=axis)


def log_softmax(x: Any, axis: int = -1) -> Tensor:
    return nn.log_softmax(x, axis=axis)


def linear(x: Any) -> Any:
    """The identity (what ``activation=None`` means)."""
    return x


_BY_NAME: dict[str, Callable[..., Any]] = {
    fn.__name__: fn for fn in (relu, leaky_relu, relu6, elu, selu, gelu, sigmoid,
                               hard_sigmoid, silu, softplus, softsign, tanh, exponential,
                               softmax, log_softmax, linear)
}
_BY_NAME["swish"] = silu


def get(identifier: Any) -> Callable[..., Any]:
    """The activation for ``identifier``: ``None`` is ``linear``, a name is looked up, a
    callable is returned as it is."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:
            raise ValueError(f"Could not interpret activation function identifier: "
                             f"{identifier!r}. Known names: {sorted(_BY_NAME)}.")
        return fn
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}; "
                    "pass a name, a callable, or None.")


def serialize(activation: Callable[..., Any]) -> str:
    """The name of a Keras activation (``"relu"``)."""
    name = getattr(activation, "__name__", None)
    if _BY_NAME.get(name) is activation or name in _BY_NAME:
        return name
    raise ValueError(f"Cannot serialize {activation!r}: it is not a keras.activations "
                     "function.")


def deserialize(config: Any) -> Callable[..., Any]:
    name = config.get("config", config.get("class_name")) if isinstance(config, dict) else config
    return get(name)
