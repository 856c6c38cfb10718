"""``gt.keras``: the part of Keras 3 (as in TF 2.21) that TF's guides use — layers,
``Sequential``, ``Model`` (subclassed and functional), ``compile``/``fit``, activations,
initializers, regularizers, losses and optimizers — on gt ops, so tapes,
``@gt.function`` and ``jacobian`` work through them.

Imports: ``core``, ``ops``, ``tape``, ``functions``, ``api``, ``optimizers``, ``data``.
"""

from ..core.namespaces import attribute_namespace, public_dir
from . import (
    activations,
    initializers,
    layers,
    losses,
    metrics,
    optimizers,
    regularizers,
    utils,
)
from .functional import Input, KerasTensor
from .models import Model, Sequential
from .naming import clear_session
from .training import History
from .variables import Variable

# keras.backend: only the session reset. keras.models: the model classes.
backend = attribute_namespace({"clear_session": clear_session})
models = attribute_namespace({"Model": Model, "Sequential": Sequential})

__all__ = ["History", "Input", "KerasTensor", "Model", "Sequential", "Variable",
           "activations", "backend", "initializers", "layers", "losses", "metrics",
           "models", "optimizers", "regularizers", "utils"]
__dir__ = public_dir(globals())
