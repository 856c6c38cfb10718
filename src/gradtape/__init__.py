"""gradtape: TensorFlow's GradientTape API over NumPy, with a compiler behind the tape."""

import sys as _sys

from . import keras as keras
from . import ops as _ops
from . import optimizers as optimizers
from . import scipy as scipy
from .ad.forward_mode import ForwardAccumulator
from .api import checkpoint as _checkpoint
from .api import missing_names as _missing_names
from .api import numpy_namespace as _numpy_namespace
from .api import random as random
from .api.array_ops import band_part as _band_part
from .api.array_ops import bincount, meshgrid, searchsorted, unique, unique_with_counts
from .api.control_flow import (
    case,
    cond,
    foldl,
    foldr,
    map_fn,
    scan,
    switch_case,
    vectorized_map,
    while_loop,
)
from .api.creation import eye, fill, linspace, ones, range, rank, shape, size, zeros
from .api.debugging import debugging, nest
from .api.diag_ops import diag as _linalg_diag
from .api.diag_ops import set_diag as _linalg_set_diag
from .api.eager import executing_eagerly, get_static_value
from .api.image import namespace as image
from .api.initializers import (
    constant_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    zeros_initializer,
)
from .api.math import add_n
from .api.math import namespace as math
from .api.module import Module, name_scope
from .api.nn import namespace as nn
from .api.segment_ops import (
    scatter_nd,
    tensor_scatter_nd_add,
    tensor_scatter_nd_max,
    tensor_scatter_nd_min,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
)
from .api.tensor_array import TensorArray
from .api.transforms import grad, hessian, jacobian, jvp, value_and_grad, vjp
from .compiler.cache import cache_info
from .core import dtypes as _dtypes
from .core import errors as errors
from .core.config import config
from .core.devices import device
from .core.dtypes import (
    DType,
    as_dtype,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .core.gradient_drops import GradientDroppedError, GradientDroppedWarning
from .core.gradient_drops import install_public_namespace as _install_public_namespace
from .core.namespaces import attribute_namespace, public_dir
from .core.namespaces import namespace as _namespace
from .core.tensor import Tensor, constant, convert_to_tensor, is_tensor
from .core.tensor_shape import TensorShape
from .core.unconnected import UnconnectedGradients
from .core.variable import Variable
from .data import dataset as _dataset
from .functions import autograph as _autograph
from .functions.api import function
from .functions.printing import tf_print as print  # TF's name
from .functions.protocols import TraceType as _TraceType
from .functions.py_function import numpy_function, py_function
from .functions.spec import TensorSpec
from .functions.trace import init_scope
from .ops import *  # noqa: F403
from .ops.fft import namespace as signal
from .ops.linalg import namespace as linalg
from .ops.shape import stop_gradient
from .tape.custom_gradient import custom_gradient
from .tape.gradient_tape import GradientTape
from .tape.lookup import clear_cache
from .tape.recompute import recompute_grad

__version__ = "0.1.0"

# tf.linalg.band_part, diag and set_diag are built from gt's ops, a layer above ops.linalg.
linalg.band_part = _band_part
linalg.diag = _linalg_diag
linalg.set_diag = _linalg_set_diag
linalg.__all__ = sorted([*linalg.__all__, "band_part", "diag", "set_diag"])

# gt.dtypes: the dtype objects, as_dtype and the cast op, without the module's imports.
dtypes = attribute_namespace({**{name: getattr(_dtypes, name) for name in _dtypes.__all__},
                              "cast": _ops.cast})
# TF's tracing protocol base class (functions/protocols.py) and tf.autograph.
types = attribute_namespace({"experimental": attribute_namespace({"TraceType": _TraceType})})
autograph = attribute_namespace({
    "to_code": _autograph.to_code, "to_graph": _autograph.to_graph,
    "experimental": attribute_namespace({"do_not_convert": _autograph.do_not_convert})})
# Converted code's statements call gt.cond, gt.while_loop and gt.range (api/, above).
_autograph.install(cond=cond, while_loop=while_loop, range=range)
# TF's tf.autodiff: the forward-mode accumulator (also top level).
autodiff = attribute_namespace({"ForwardAccumulator": ForwardAccumulator})
# TF's tf.experimental.numpy, also importable as gradtape.numpy (api/numpy_namespace.py).
experimental = _namespace("gradtape.experimental", "TF's tf.experimental: numpy.",
                          {"numpy": _numpy_namespace.build()})
_sys.modules.update({"gradtape.experimental": experimental,
                     "gradtape.experimental.numpy": experimental.numpy,
                     "gradtape.numpy": experimental.numpy})
# TF's tf.train: object-based checkpoints of variables (api/checkpoint.py).
train = attribute_namespace({name: getattr(_checkpoint, name) for name in _checkpoint.__all__})
# TF's tf.data (data/): Dataset, AUTOTUNE, the cardinality constants, experimental.
data = attribute_namespace({
    "Dataset": _dataset.Dataset, "AUTOTUNE": _dataset.AUTOTUNE,
    "INFINITE_CARDINALITY": _dataset.INFINITE_CARDINALITY,
    "UNKNOWN_CARDINALITY": _dataset.UNKNOWN_CARDINALITY,
    "experimental": attribute_namespace({
        "AUTOTUNE": _dataset.AUTOTUNE, "cardinality": _dataset.cardinality,
        "INFINITE_CARDINALITY": _dataset.INFINITE_CARDINALITY,
        "UNKNOWN_CARDINALITY": _dataset.UNKNOWN_CARDINALITY})})

# TF's tf.metrics: Keras's metrics (the same objects); tf.newaxis is None (np.newaxis).
metrics = attribute_namespace({name: getattr(keras.metrics, name)
                               for name in keras.metrics.__all__})
newaxis = None
# TF's tf.losses: Keras's losses (the same objects), as tf.metrics.
losses = attribute_namespace({name: getattr(keras.losses, name)
                              for name in keras.losses.__all__})

from .core.config import options as _options  # noqa: E402

# SciPy drop messages name gt's differentiable route, looked up in the package itself.
_install_public_namespace(_sys.modules[__name__])

# A TF or Keras name gradtape lacks says so and names its substitute (api/missing_names.py).
_missing_names.install({
    "tf": _sys.modules[__name__], "tf.keras": keras, "tf.keras.layers": keras.layers,
    "tf.keras.losses": keras.losses, "tf.keras.metrics": keras.metrics,
    "tf.keras.optimizers": keras.optimizers, "tf.keras.callbacks": keras.callbacks,
    "tf.keras.utils": keras.utils, "tf.keras.models": keras.models, "tf.nn": nn,
    "tf.math": math, "tf.linalg": linalg, "tf.random": random, "tf.train": train,
    "tf.dtypes": dtypes, "tf.debugging": debugging, "tf.keras.backend": keras.backend,
    "tf.image": image})

if _options.hold_freed_memory:  # GRADTAPE_HOLD_MEMORY=1: the allocator change, opted in
    from .core.memory import hold_freed_memory as _hold_freed_memory

    _hold_freed_memory()

__all__ = [
    "DType",
    "ForwardAccumulator",
    "GradientDroppedError",
    "GradientDroppedWarning",
    "GradientTape",
    "Module",
    "Tensor",
    "TensorShape",
    "TensorArray",
    "TensorSpec",
    "UnconnectedGradients",
    "Variable",
    "add_n",
    "as_dtype",
    "autodiff",
    "autograph",
    "bincount",
    "bool",
    "case",
    "cache_info",
    "clear_cache",
    "complex64",
    "complex128",
    "cond",
    "config",
    "constant",
    "convert_to_tensor",
    "custom_gradient",
    "data",
    "debugging",
    "device",
    "double",
    "dtypes",
    "errors",
    "executing_eagerly",
    "experimental",
    "eye",
    "fill",
    "float16",
    "float32",
    "float64",
    "foldl",
    "foldr",
    "function",
    "get_static_value",
    "grad",
    "half",
    "hessian",
    "image",
    "init_scope",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_tensor",
    "jacobian",
    "jvp",
    "keras",
    "linalg",
    "linspace",
    "map_fn",
    "math",
    "meshgrid",
    "nn",
    "name_scope",
    "nest",
    "numpy_function",
    "ones",
    "optimizers",
    "print",
    "py_function",
    "random",
    "range",
    "rank",
    "recompute_grad",
    "scan",
    "scatter_nd",
    "scipy",
    "searchsorted",
    "shape",
    "signal",
    "size",
    "stop_gradient",
    "string",
    "switch_case",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_max",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
    "train",
    "types",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "unique",
    "unique_with_counts",
    "value_and_grad",
    "vectorized_map",
    "vjp",
    "while_loop",
    "zeros",
    *_ops.__all__,
]
# Issue 21's TF names (apart from the list above, so parallel branches merge cleanly).
__all__ += ["constant_initializer", "glorot_uniform_initializer", "losses", "metrics",
            "newaxis",
            "ones_initializer", "random_normal_initializer", "random_uniform_initializer",
            "zeros_initializer"]

# dir(gt) lists the public API only: the modules behind it stay reachable, unlisted.
__dir__ = public_dir(globals())
