"""``keras.layers``: the base ``Layer`` and the layers TF's guides build models from."""

from ..functional import Input, InputLayer
from .activations import ELU, LeakyReLU, PReLU, ReLU, Softmax
from .attention import MultiHeadAttention
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
from .masking import Masking
from .merging import (
    Average,
    Dot,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
    add,
    average,
    concatenate,
    dot,
    maximum,
    minimum,
    multiply,
    subtract,
)
from .normalization import BatchNormalization, GroupNormalization, LayerNormalization
from .regularization import GaussianDropout, GaussianNoise
from .rnn import (
    GRU,
    LSTM,
    RNN,
    Bidirectional,
    GRUCell,
    LSTMCell,
    SimpleRNN,
    SimpleRNNCell,
    StackedRNNCells,
    TimeDistributed,
)
from .shape import (
    Cropping1D,
    Cropping2D,
    Cropping3D,
    Permute,
    RepeatVector,
    Reshape,
    UpSampling1D,
    UpSampling2D,
    UpSampling3D,
    ZeroPadding1D,
    ZeroPadding2D,
    ZeroPadding3D,
)

__all__ = ["Activation", "ActivityRegularization", "Add", "BatchNormalization",
           "Concatenate", "Dense", "Dropout", "Embedding", "Flatten", "Input", "InputLayer",
           "Lambda", "Layer"]
# Issue 21's layers (kept apart from the line above so parallel branches merge cleanly).
__all__ += ["Average", "Cropping1D", "Cropping2D", "Cropping3D", "Dot", "ELU",
            "GaussianDropout", "GaussianNoise", "GroupNormalization", "LayerNormalization",
            "LeakyReLU", "Maximum", "Minimum", "MultiHeadAttention", "Multiply", "PReLU",
            "Permute", "ReLU",
            "RepeatVector", "Reshape", "Softmax", "Subtract", "UpSampling1D",
            "UpSampling2D", "UpSampling3D", "ZeroPadding1D", "ZeroPadding2D",
            "ZeroPadding3D", "add", "average", "concatenate", "dot", "maximum", "minimum",
            "multiply", "subtract"]
# Issue 22's recurrent layers (h25).
__all__ += ["Bidirectional", "GRU", "GRUCell", "LSTM", "LSTMCell", "Masking", "RNN",
            "SimpleRNN", "SimpleRNNCell", "StackedRNNCells", "TimeDistributed"]
