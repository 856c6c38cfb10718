"""Keras 3's core layers: ``Dense``, ``Flatten``, ``Dropout``, ``Activation``,
``Lambda``, ``Embedding``, ``Concatenate``, ``Add``, ``ActivityRegularization``."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import ops
from ...api.nn import dropout as _dropout
from ...core.tensor import Tensor, convert_to_tensor
from .. import activations, initializers, regularizers
from .base import Layer
from .configs import config_entries

__all__ = ["Activation", "ActivityRegularization", "Add", "Concatenate", "Dense", "Dropout",
           "Embedding", "Flatten", "Lambda"]


class Dense(Layer):
    """``activation(inputs @ kernel + bias)``; ``kernel`` is ``(input_dim, units)``,
    applied to the last axis of inputs of any rank."""

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, lora_rank: int | None = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.supports_masking = True  # Keras 3: a mask passes through
        if not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units!r}")
        if lora_rank is not None:
            raise NotImplementedError("Dense(lora_rank=...) is not supported.")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def build(self, input_shape: Any) -> None:
        input_dim = input_shape[-1]
        self.kernel = self.add_weight(name="kernel", shape=(input_dim, self.units),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.units,),
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs: Any) -> Tensor:
        inputs = convert_to_tensor(inputs)
        if inputs.dtype != self.kernel.dtype:  # integer inputs: Keras computes in float32
            inputs = ops.cast(inputs, self.kernel.dtype)
        x = ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            x = x + self.bias
        return self.activation(x)

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(
            self, "units", "activation", "use_bias", "kernel_initializer",
            "bias_initializer", "kernel_regularizer", "bias_regularizer",
            "kernel_constraint", "bias_constraint")}


class Flatten(Layer):
    """Reshapes ``(batch, ...)`` to ``(batch, n)``."""

    def __init__(self, data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format = data_format

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "data_format")}

    def call(self, inputs: Any) -> Tensor:
        shape = tuple(inputs.shape)
        if self.data_format == "channels_first" and len(shape) > 2:
            inputs = ops.moveaxis(inputs, 1, -1)
        return ops.reshape(inputs, (shape[0], int(np.prod(shape[1:], dtype=np.int64))))


class Dropout(Layer):
    """Zeroes a fraction ``rate`` of the inputs and scales the rest by ``1/(1 - rate)``
    when called with ``training=True``; the identity otherwise."""

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True  # Keras 3: a mask passes through
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float "
                             f"value between 0 and 1. Received: rate={rate}")
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "rate", "seed", "noise_shape")}

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        if training and self.rate > 0:
            return _dropout(inputs, self.rate, noise_shape=self.noise_shape, seed=self.seed)
        return inputs


class Activation(Layer):
    """Applies ``activation`` (a name or a callable)."""

    def __init__(self, activation: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True  # Keras 3: a mask passes through
        self.activation = activations.get(activation)

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "activation")}

    def call(self, inputs: Any) -> Any:
        return self.activation(inputs)


class ActivityRegularization(Layer):
    """The identity, adding ``L1L2(l1, l2)`` of its output (divided by the batch size,
    as every activity regularizer) to ``losses``."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0, **kwargs: Any):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2
        self.built = True

    def get_config(self) -> dict:
        config = {**super().get_config(), **config_entries(self, "l1", "l2")}
        config.pop("activity_regularizer", None)  # Keras 3: made from l1 and l2
        return config

    def call(self, inputs: Any) -> Any:
        return inputs


class Lambda(Layer):
    """Wraps ``function(inputs, **arguments)`` as a layer (no weights)."""

    def __init__(self, function: Callable[..., Any], output_shape: Any = None,
                 mask: Any = None, arguments: dict | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.function = function
        self.output_shape, self.mask = output_shape, mask
        self.arguments = arguments or {}

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(
            self, "function", "output_shape", "mask", "arguments")}

    def call(self, inputs: Any) -> Any:
        return self.function(inputs, **self.arguments)


class Embedding(Layer):
    """Looks up rows of ``embeddings`` (``(input_dim, output_dim)``) by integer index."""

    def __init__(self, input_dim: int, output_dim: int,
                 embeddings_initializer: Any = "uniform", embeddings_regularizer: Any = None,
                 embeddings_constraint: Any = None, mask_zero: bool = False,
                 weights: Any = None, lora_rank: int | None = None, **kwargs: Any):
        if kwargs.pop("input_length", None) is not None:  # Keras 2's; Keras 3 warns
            warnings.warn("Argument `input_length` is deprecated. Just remove it.",
                          stacklevel=2)
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = embeddings_constraint
        self.mask_zero = mask_zero
        self.supports_masking = mask_zero
        self._initial_weights = weights

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(
            self, "input_dim", "output_dim", "embeddings_initializer",
            "embeddings_regularizer", "embeddings_constraint", "mask_zero")}

    def build(self, input_shape: Any = None) -> None:
        self.embeddings = self.add_weight(name="embeddings",
                                          shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
        self.built = True

    def call(self, inputs: Any) -> Tensor:
        indices = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
        if indices.dtype.kind not in "iu":
            indices = ops.cast(indices, "int32")
        return ops.gather(self.embeddings, indices)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return ops.not_equal(inputs, 0) if self.mask_zero else None


class _Merge(Layer):
    """A layer called on a list of tensors."""

    def _checked(self, inputs: Any) -> list[Any]:
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 1:
            raise ValueError(f"A {type(self).__name__} layer should be called on a list of "
                             f"inputs. Received: inputs={inputs!r}")
        return list(inputs)


class Concatenate(_Merge):
    """Concatenates a list of tensors along ``axis``."""

    def __init__(self, axis: int = -1, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = axis

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "axis")}

    def call(self, inputs: Any) -> Tensor:
        return ops.concat(self._checked(inputs), axis=self.axis)


class Add(_Merge):
    """Sums a list of tensors (same shape)."""

    def call(self, inputs: Any) -> Tensor:
        tensors = self._checked(inputs)
        total = tensors[0]
        for t in tensors[1:]:
            total = total + t
        return total
