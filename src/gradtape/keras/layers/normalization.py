"""Keras 3's ``BatchNormalization``, ``LayerNormalization`` and ``GroupNormalization``."""

from __future__ import annotations

from typing import Any

from ... import ops
from ...api.nn import namespace as nn
from ...core.tensor import Tensor
from ...ops.shape import stop_gradient
from .. import initializers, regularizers
from .base import Layer
from .configs import config_entries

__all__ = ["BatchNormalization", "GroupNormalization", "LayerNormalization"]



def _keep_gamma_beta_options(layer: Any, beta_initializer: Any, gamma_initializer: Any,
                             beta_regularizer: Any, gamma_regularizer: Any,
                             beta_constraint: Any, gamma_constraint: Any) -> None:
    """The options of a normalization's ``gamma``/``beta`` weights, as Keras keeps them."""
    layer.beta_initializer = initializers.get(beta_initializer)
    layer.gamma_initializer = initializers.get(gamma_initializer)
    layer.beta_regularizer = regularizers.get(beta_regularizer)
    layer.gamma_regularizer = regularizers.get(gamma_regularizer)
    layer.beta_constraint, layer.gamma_constraint = beta_constraint, gamma_constraint

class BatchNormalization(Layer):
    """Normalizes over every axis but ``axis``: with ``training=True`` by the batch's mean
    and (biased) variance, which also move ``moving_mean``/``moving_variance``
    (``moving = moving * momentum + batch * (1 - momentum)``); otherwise by the moving
    statistics. Then ``gamma * x_hat + beta``. The moving statistics are non-trainable
    variables; gradients flow through the batch statistics, as in Keras."""

    def __init__(self, axis: int | list[int] = -1, momentum: float = 0.99,
                 epsilon: float = 1e-3, center: bool = True, scale: bool = True,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 moving_mean_initializer: Any = "zeros",
                 moving_variance_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, synchronized: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True  # Keras 3: a mask passes through
        self.axis = axis
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.synchronized = synchronized

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(
            self, "axis", "momentum", "epsilon", "center", "scale", "beta_initializer",
            "gamma_initializer", "moving_mean_initializer", "moving_variance_initializer",
            "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint",
            "synchronized")}

    def _feature_axes(self, rank: int) -> list[int]:
        axes = self.axis if isinstance(self.axis, (list, tuple)) else [self.axis]
        normalized = sorted(a % rank for a in axes)
        if any(not -rank <= a < rank for a in axes):
            raise ValueError(f"Invalid axis {self.axis} for input of rank {rank}.")
        return normalized

    def build(self, input_shape: Any) -> None:
        rank = len(input_shape)
        feature_axes = self._feature_axes(rank)
        shape = tuple(input_shape[a] for a in feature_axes)
        self._reduction_axes = [a for a in range(rank) if a not in feature_axes]
        # Statistics of shape `shape` broadcast against inputs of this shape's rank.
        self._broadcast_shape = [input_shape[a] if a in feature_axes else 1
                                 for a in range(rank)]
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight(shape=shape, name="gamma",
                                         initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight(shape=shape, name="beta",
                                        initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint)
        self.moving_mean = self.add_weight(shape=shape, name="moving_mean",
                                           initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight(shape=shape, name="moving_variance",
                                               initializer=self.moving_variance_initializer,
                                               trainable=False)
        self.built = True

    def _broadcast(self, stat: Any) -> Any:
        return ops.reshape(stat, self._broadcast_shape)

    def call(self, inputs: Any, training: bool | None = None) -> Tensor:
        if training and self.trainable:
            mean, variance = nn.moments(inputs, axes=self._reduction_axes)
            self._move(mean, variance)
        else:
            mean, variance = self.moving_mean, self.moving_variance
        std = ops.sqrt(self._broadcast(variance) + self.epsilon)
        x_hat = (inputs - self._broadcast(mean)) / std
        if self.gamma is not None:
            x_hat = x_hat * self._broadcast(self.gamma)
        if self.beta is not None:
            x_hat = x_hat + self._broadcast(self.beta)
        return x_hat

    def _move(self, mean: Tensor, variance: Tensor) -> None:
        """The moving statistics step toward the batch's (not recorded by tapes)."""
        keep = self.momentum
        self.moving_mean.assign(self.moving_mean * keep + stop_gradient(mean) * (1 - keep))
        self.moving_variance.assign(
            self.moving_variance * keep + stop_gradient(variance) * (1 - keep))


class LayerNormalization(Layer):
    """Normalizes each sample over ``axis`` (the last, by default) by its own mean and
    (biased) variance: ``(x - mean) / sqrt(variance + epsilon) * gamma + beta``, with
    ``gamma``/``beta`` of the shape of the normalized axes. ``rms_scaling`` divides by
    the root mean square instead (no centering, no ``beta``), as Keras 3."""

    def __init__(self, axis: int | list[int] = -1, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, rms_scaling: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 beta_regularizer: Any = None, gamma_regularizer: Any = None,
                 beta_constraint: Any = None, gamma_constraint: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True  # Keras 3: a mask passes through
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.epsilon, self.center, self.scale = float(epsilon), center, scale
        self.rms_scaling = rms_scaling
        _keep_gamma_beta_options(self, beta_initializer, gamma_initializer, beta_regularizer,
                                 gamma_regularizer, beta_constraint, gamma_constraint)

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(
            self, "axis", "epsilon", "center", "scale", "rms_scaling", "beta_initializer",
            "gamma_initializer", "beta_regularizer", "gamma_regularizer", "beta_constraint",
            "gamma_constraint")}

    def build(self, input_shape: Any) -> None:
        rank = len(input_shape)
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        if any(not -rank <= a < rank for a in axes):
            raise ValueError(f"Invalid axis {self.axis} for input of rank {rank}; pass "
                             f"axes in [-{rank}, {rank}).")
        self._axes = sorted(a % rank for a in axes)
        shape = tuple(input_shape[a] for a in self._axes)
        # gamma/beta broadcast against the inputs: their axes, 1 elsewhere.
        self._broadcast_shape = [input_shape[a] if a in self._axes else 1
                                 for a in range(rank)]
        self.gamma = self.beta = None
        if self.scale or self.rms_scaling:
            self.gamma = self.add_weight(shape=shape, name="gamma",
                                         initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint)
        if self.center and not self.rms_scaling:
            self.beta = self.add_weight(shape=shape, name="beta",
                                        initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint)
        self.built = True

    def call(self, inputs: Any) -> Tensor:
        if self.rms_scaling:
            mean_square = ops.reduce_mean(ops.square(inputs), axis=self._axes, keepdims=True)
            scaled = inputs / ops.sqrt(mean_square + self.epsilon)
            return scaled * ops.reshape(self.gamma, self._broadcast_shape)
        mean, variance = nn.moments(inputs, axes=self._axes, keepdims=True)
        outputs = (inputs - mean) / ops.sqrt(variance + self.epsilon)
        if self.gamma is not None:
            outputs = outputs * ops.reshape(self.gamma, self._broadcast_shape)
        if self.beta is not None:
            outputs = outputs + ops.reshape(self.beta, self._broadcast_shape)
        return outputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class GroupNormalization(Layer):
    """Splits the channels (``axis``) into ``groups`` and normalizes each sample's group
    over the group's channels and every other non-batch axis, then
    ``* gamma + beta`` per channel (Keras 3's)."""

    def __init__(self, groups: int = 32, axis: int = -1, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.groups, self.axis, self.epsilon = int(groups), int(axis), float(epsilon)
        self.center, self.scale = center, scale
        _keep_gamma_beta_options(self, beta_initializer, gamma_initializer, beta_regularizer,
                                 gamma_regularizer, beta_constraint, gamma_constraint)

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(
            self, "groups", "axis", "epsilon", "center", "scale", "beta_initializer",
            "gamma_initializer", "beta_regularizer", "gamma_regularizer", "beta_constraint",
            "gamma_constraint")}

    def build(self, input_shape: Any) -> None:
        channels = input_shape[self.axis]
        if channels is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined "
                             f"dimension but the layer received an input with shape "
                             f"{tuple(input_shape)}.")
        if self.groups == -1:
            self.groups = channels
        if channels < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the "
                             f"number of channels ({channels}).")
        if channels % self.groups:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the "
                             f"number of channels ({channels}).")
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight(shape=(channels,), name="gamma",
                                         initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight(shape=(channels,), name="beta",
                                        initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint)
        self.built = True

    def _group_shape(self, shape: list[int]) -> list[int]:
        """``shape`` with the channel axis split into (groups, channels per group)."""
        axis = self.axis % len(shape)
        return shape[:axis] + [self.groups, shape[axis] // self.groups] + shape[axis + 1:]

    def call(self, inputs: Any) -> Tensor:
        shape = list(inputs.shape)
        axis = self.axis % len(shape)
        grouped = ops.reshape(inputs, [-1, *self._group_shape(shape)[1:]])
        reduction = [a for a in range(1, len(shape) + 1) if a != axis]
        mean, variance = nn.moments(grouped, axes=reduction, keepdims=True)
        normalized = (grouped - mean) / ops.sqrt(variance + self.epsilon)
        broadcast = self._group_shape([1] * axis + [shape[axis]] + [1] * (len(shape)
                                                                           - axis - 1))
        if self.gamma is not None:
            normalized = normalized * ops.reshape(self.gamma, broadcast)
        if self.beta is not None:
            normalized = normalized + ops.reshape(self.beta, broadcast)
        return ops.reshape(normalized, [-1, *shape[1:]])

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape
