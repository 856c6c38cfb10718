"""Keras 3's ``MultiHeadAttention``, with its projections (``query``, ``key``,
``value``, ``attention_output``) as Keras's ``EinsumDense`` layers make them: the same
einsum equations, weight names, shapes and order, so ``weights`` and checkpoints line up
with Keras's."""

from __future__ import annotations

import math
import string
from typing import Any

import numpy as np

from ... import ops
from ...api.nn import dropout as _dropout
from ...core.tensor import Tensor, constant, convert_to_tensor
from .. import initializers, regularizers
from .activations import Softmax
from .base import Layer
from .configs import config_entries, serialized

__all__ = ["MultiHeadAttention"]

_LETTERS = string.ascii_lowercase


def _projection_equation(free_dims: int, bound_dims: int, output_dims: int
                         ) -> tuple[str, str]:
    """Keras's ``_build_proj_equation``: the einsum of an input with ``free_dims`` kept
    axes and ``bound_dims`` contracted ones against a kernel of ``bound_dims +
    output_dims`` axes; and the bias's axes (the output ones)."""
    free = _LETTERS[:free_dims]
    bound = _LETTERS[free_dims:free_dims + bound_dims]
    out = _LETTERS[free_dims + bound_dims:free_dims + bound_dims + output_dims]
    return f"{free}{bound},{bound}{out}->{free}{out}", out


def _attention_equations(rank: int, attention_axes: tuple[int, ...]
                         ) -> tuple[str, str, int]:
    """Keras's ``_build_attention_equation`` for projected inputs of ``rank`` axes (the
    heads second to last): the scores' einsum, the combination's, and the scores' rank."""
    target = _LETTERS[:rank]
    batch_dims = [i for i in range(rank) if i not in attention_axes and i != rank - 1]
    source = list(target)
    offset = rank
    for i in range(rank):
        if i not in batch_dims and i != rank - 1:
            source[i] = _LETTERS[offset]
            offset += 1
    source_str = "".join(source)
    product = "".join([target[i] for i in batch_dims] + [target[i] for i in attention_axes]
                      + [source[i] for i in attention_axes])
    return (f"{source_str},{target}->{product}", f"{product},{source_str}->{target}",
            len(product))


class _EinsumDense(Layer):
    """Keras's ``EinsumDense`` as ``MultiHeadAttention`` uses it: ``einsum(equation,
    inputs, kernel) + bias``, the kernel's shape given but for its contracted axes'
    sizes, which the input's last axes set at build."""

    def __init__(self, equation: str, output_shape: tuple[int, ...], bias_axes: str | None,
                 bound_dims: int, kernel_initializer: Any, bias_initializer: Any,
                 kernel_regularizer: Any, bias_regularizer: Any, kernel_constraint: Any,
                 bias_constraint: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True  # a projected query keeps its mask, without a warning
        self.equation, self.partial_output_shape = equation, tuple(output_shape)
        self.bias_axes, self.bound_dims = bias_axes, bound_dims
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def build(self, input_shape: Any) -> None:
        bound = tuple(input_shape[len(input_shape) - self.bound_dims:])
        self.kernel = self.add_weight(name="kernel", shape=bound + self.partial_output_shape,
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None
        if self.bias_axes:
            bias_shape = self.partial_output_shape[-len(self.bias_axes):]
            self.bias = self.add_weight(name="bias", shape=bias_shape,
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs: Any) -> Tensor:
        x = ops.einsum(self.equation, inputs, self.kernel)
        return x + self.bias if self.bias is not None else x


class MultiHeadAttention(Layer):
    """Keras 3's multi-head attention: ``num_heads`` heads of scaled dot-product
    attention of ``query`` over ``value`` (``key`` defaults to ``value``), each head
    projecting to ``key_dim`` (queries, keys) and ``value_dim`` (values, default
    ``key_dim``), then projected back to the query's last size (or ``output_shape``).
    Weights: ``query``/``key``/``value`` kernels ``(dim, num_heads, key_dim)`` with biases
    ``(num_heads, key_dim)``; ``attention_output`` kernel ``(num_heads, value_dim,
    dim)`` with bias ``(dim,)``. Attention runs over ``attention_axes`` (default: every
    axis between the batch and the features)."""

    def __init__(self, num_heads: int, key_dim: int, value_dim: int | None = None,
                 dropout: float = 0.0, use_bias: bool = True, output_shape: Any = None,
                 attention_axes: Any = None, flash_attention: bool | None = None,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, seed: int | None = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.supports_masking = True  # Keras 3: the query's mask passes on
        if flash_attention:
            raise ValueError("MultiHeadAttention(flash_attention=True) is not supported "
                             "in gradtape; leave it None (the same numbers).")
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim) if value_dim is not None else self.key_dim
        self.dropout, self.use_bias, self.seed = float(dropout), use_bias, seed
        if isinstance(output_shape, int):
            output_shape = (output_shape,)
        self._output_shape_arg = tuple(output_shape) if output_shape is not None else None
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        self._attention_axes_arg = (tuple(attention_axes) if attention_axes is not None
                                    else None)
        self._weight_options = {
            "kernel_initializer": initializers.get(kernel_initializer),
            "bias_initializer": initializers.get(bias_initializer),
            "kernel_regularizer": regularizers.get(kernel_regularizer),
            "bias_regularizer": regularizers.get(bias_regularizer),
            "kernel_constraint": kernel_constraint, "bias_constraint": bias_constraint}

    @property
    def attention_axes(self) -> tuple[int, ...] | None:
        return self._attention_axes_arg

    def get_config(self) -> dict:
        options = {key: serialized(value) for key, value in self._weight_options.items()}
        return {**super().get_config(), **config_entries(
            self, "num_heads", "key_dim", "value_dim", "dropout", "use_bias",
            "attention_axes", "seed"), "output_shape": self._output_shape_arg, **options}

    def _projection(self, name: str, input_rank: int, size: int) -> _EinsumDense:
        equation, bias_axes = _projection_equation(input_rank - 1, 1, 2)
        return _EinsumDense(equation, (self.num_heads, size),
                            bias_axes if self.use_bias else None, 1, name=name,
                            dtype=self.dtype, **self._weight_options)

    def _build_for(self, query: Tensor, value: Tensor, key: Tensor) -> None:
        """Keras's build: the projections, the attention equations and the softmax."""
        rank = query.ndim
        self._query_dense = self._projection("query", rank, self.key_dim)
        self._key_dense = self._projection("key", key.ndim, self.key_dim)
        self._value_dense = self._projection("value", value.ndim, self.value_dim)
        output_shape = self._output_shape_arg or (query.shape[-1],)
        equation, bias_axes = _projection_equation(rank - 1, 2, len(output_shape))
        self._output_dense = _EinsumDense(equation, output_shape,
                                          bias_axes if self.use_bias else None, 2,
                                          name="attention_output", dtype=self.dtype,
                                          **self._weight_options)
        projected_rank = rank + 1
        axes = self._attention_axes_arg
        if axes is None:
            axes = tuple(range(1, projected_rank - 2))
        axes = tuple(a % (projected_rank - 1) for a in axes)
        self._dot_equation, self._combine_equation, scores_rank = _attention_equations(
            projected_rank, axes)
        self._resolved_axes = axes
        norm_axes = tuple(range(scores_rank - len(axes), scores_rank))
        self._softmax = Softmax(axis=norm_axes, dtype=self.dtype)

    def build(self, input_shape: Any = None) -> None:
        # The projections are made on the first call, which sees query, value and key.
        self.built = True

    def call(self, query: Any, value: Any, key: Any = None, query_mask: Any = None,
             value_mask: Any = None, key_mask: Any = None, attention_mask: Any = None,
             return_attention_scores: bool = False, training: bool | None = None,
             use_causal_mask: bool = False) -> Any:
        query, value = convert_to_tensor(query), convert_to_tensor(value)
        key = value if key is None else convert_to_tensor(key)
        if not hasattr(self, "_query_dense"):
            self._build_for(query, value, key)
        mask = self._attention_mask(query, value, query_mask, value_mask, key_mask,
                                    attention_mask, use_causal_mask)
        q = self._query_dense(query) * (1.0 / math.sqrt(float(self.key_dim)))
        k = self._key_dense(key)
        v = self._value_dense(value)
        scores = ops.einsum(self._dot_equation, k, q)
        if mask is not None:
            for _ in range(scores.ndim - mask.ndim):  # Keras: the heads' axis (and more)
                mask = ops.expand_dims(mask, -len(self._resolved_axes) * 2 - 1)
        scores = self._softmax(scores, mask=mask)
        dropped = scores
        if training and self.dropout > 0:
            dropped = _dropout(scores, self.dropout, seed=self.seed)
        combined = ops.einsum(self._combine_equation, dropped, v)
        output = self._output_dense(combined)
        return (output, scores) if return_attention_scores else output

    def _attention_mask(self, query: Tensor, value: Tensor, query_mask: Any,
                        value_mask: Any, key_mask: Any, attention_mask: Any,
                        use_causal_mask: bool) -> Tensor | None:
        """Keras's ``_compute_attention_mask``: the explicit mask and the query, value,
        key and causal masks, all true where attention is allowed."""
        masks = []
        if query_mask is not None:
            masks.append(ops.expand_dims(_as_bool(query_mask), -1))  # (B, T, 1)
        for mask in (value_mask, key_mask):
            if mask is not None:
                masks.append(ops.expand_dims(_as_bool(mask), -2))  # (B, 1, S)
        if use_causal_mask:
            rows, cols = query.shape[1], value.shape[1]
            masks.append(constant(np.tril(np.ones((1, rows, cols), bool))))
        if attention_mask is not None:
            masks.insert(0, _as_bool(attention_mask))
        if not masks:
            return None
        combined = masks[0]
        for mask in masks[1:]:
            combined = ops.logical_and(combined, mask)
        return combined


def _as_bool(mask: Any) -> Tensor:
    mask = convert_to_tensor(mask)
    return mask if mask.dtype.kind == "b" else ops.not_equal(mask, ops.zeros_like(mask))
