"""``keras.layers``: the base ``Layer`` and the layers TF's guides build models from."""

from ..functional import Input, InputLayer
from .activations import ELU, LeakyReLU, PReLU, ReLU, Softmax
from .attention import MultiHeadAttention
from .base import Layer
from .convolutional import (
    Conv1D,
    Conv1DTranspose,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    Convolution1D,
    Convolution1DTranspose,
    Convolution2D,
    Convolution2DTranspose,
    Convolution3D,
    Convolution3DTranspose,
    DepthwiseConv1D,
    DepthwiseConv2D,
    SeparableConv1D,
    SeparableConv2D,
    SeparableConvolution1D,
    SeparableConvolution2D,
)
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
from .pooling import (
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAveragePooling3D,
    GlobalAvgPool1D,
    GlobalAvgPool2D,
    GlobalAvgPool3D,
    GlobalMaxPool1D,
    GlobalMaxPool2D,
    GlobalMaxPool3D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    GlobalMaxPooling3D,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
)
from .preprocessing import RandomFlip, Resizing
from .regularization import (
    GaussianDropout,
    GaussianNoise,
    SpatialDropout1D,
    SpatialDropout2D,
    SpatialDropout3D,
)
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
# Issue 22's convolution layers.
__all__ += ["Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D",
            "Conv3DTranspose", "Convolution1D", "Convolution1DTranspose", "Convolution2D",
            "Convolution2DTranspose", "Convolution3D", "Convolution3DTranspose",
            "DepthwiseConv1D", "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D",
            "SeparableConvolution1D",
            "SeparableConvolution2D"]
# Issue 22's pooling layers (keras/layers/pooling.py).
__all__ += ["AveragePooling1D", "AveragePooling2D", "AveragePooling3D",
            "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D",
            "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D",
            "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "RandomFlip", "Resizing",
            "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "AvgPool1D",
            "AvgPool2D", "AvgPool3D", "GlobalAvgPool1D", "GlobalAvgPool2D",
            "GlobalAvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
            "MaxPool1D", "MaxPool2D", "MaxPool3D"]
# Issue 22's recurrent layers.
__all__ += ["Bidirectional", "GRU", "GRUCell", "LSTM", "LSTMCell", "Masking", "RNN",
            "SimpleRNN", "SimpleRNNCell", "StackedRNNCells", "TimeDistributed"]
