"""gradtape: TensorFlow's GradientTape API over NumPy, with a compiler behind the tape."""

from . import ops as _ops
from . import optimizers as optimizers
from .cache import cache_info
from .config import config
from .custom import custom_gradient, stop_gradient
from .forward import ForwardAccumulator
from .function import function
from .gradient_drops import GradientDroppedError, GradientDroppedWarning
from .lookup import clear_cache
from .ops import *  # noqa: F403
from .ops import nn as nn
from .ops.linalg import namespace as linalg
from .tape import GradientTape, UnconnectedGradients
from .tensor import Tensor, constant, convert_to_tensor, is_tensor
from .transforms import grad, hessian, jacobian, jvp, value_and_grad, vjp
from .variable import Variable

__version__ = "0.1.0"

from .config import options as _options  # noqa: E402

if _options.hold_freed_memory:  # GRADTAPE_HOLD_MEMORY=1: the allocator change, opted in
    from .memory import hold_freed_memory as _hold_freed_memory

    _hold_freed_memory()

__all__ = [
    "ForwardAccumulator",
    "GradientDroppedError",
    "GradientDroppedWarning",
    "GradientTape",
    "Tensor",
    "UnconnectedGradients",
    "Variable",
    "cache_info",
    "clear_cache",
    "config",
    "constant",
    "convert_to_tensor",
    "custom_gradient",
    "function",
    "grad",
    "hessian",
    "is_tensor",
    "jacobian",
    "jvp",
    "linalg",
    "optimizers",
    "stop_gradient",
    "value_and_grad",
    "vjp",
    *_ops.__all__,
]
