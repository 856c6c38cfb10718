"""Keras 3's ``Masking`` layer: the time steps whose features all equal ``mask_value``
are zeroed and masked (``masks.py`` keeps the masks)."""

from __future__ import annotations

from typing import Any

from ... import ops
from ...api.math import reduce_any
from ...core.tensor import Tensor, convert_to_tensor
from .base import Layer
from .masks import set_keras_mask

__all__ = ["Masking"]


class Masking(Layer):
    """Masks the time steps whose features all equal ``mask_value``: they are zeroed,
    and the layers after it (RNNs) skip them."""

    def __init__(self, mask_value: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True
        self.built = True

    def compute_mask(self, inputs: Any, mask: Any = None) -> Tensor:
        return reduce_any(ops.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs: Any) -> Tensor:
        inputs = convert_to_tensor(inputs)
        kept = reduce_any(ops.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        outputs = inputs * ops.cast(kept, inputs.dtype)
        set_keras_mask(outputs, ops.squeeze(kept, axis=-1))
        return outputs

    def get_config(self) -> dict:
        return {**super().get_config(), "mask_value": self.mask_value}
