"""``keras.layers``: the base ``Layer`` and the layers TF's guides build models from."""

from ..functional import Input, InputLayer
from .base import Layer
from .core import (
    Activation,
    ActivityRegularization,
    Add,
    Concatenate,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    Lambda,
)
from .normalization import BatchNormalization

__all__ = ["Activation", "ActivityRegularization", "Add", "BatchNormalization",
           "Concatenate", "Dense", "Dropout", "Embedding", "Flatten", "Input", "InputLayer",
           "Lambda", "Layer"]
