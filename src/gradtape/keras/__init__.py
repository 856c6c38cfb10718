"""``gt.keras``: the part of Keras 3 (as in TF 2.21) that TF's guides use — layers,
``Sequential``, ``Model`` (subclassed and functional), ``compile``/``fit``, activations,
initializers, regularizers, losses and optimizers — on gt ops, so tapes,
``@gt.function`` and ``jacobian`` work through them.

Imports: ``core``, ``ops``, ``tape``, ``functions``, ``api``, ``optimizers``, ``data``.
"""

from ..core.namespaces import attribute_namespace, namespace, public_dir
from . import (
    activations,
    initializers,
    layers,
    losses,
    metrics,
    ops,
    optimizers,
    random,
    regularizers,
    utils,
)
from . import callbacks as _callbacks
from . import callbacks_monitor as _callbacks_monitor
from . import legacy_backend as _legacy_backend
from .callbacks import History
from .functional import Input, KerasTensor
from .models import Model, Sequential
from .naming import clear_session
from .variables import Variable

# keras.backend: the session reset and tf.keras's legacy functions. keras.models: the
# model classes.
backend = attribute_namespace({"clear_session": clear_session, **{
    name: getattr(_legacy_backend, name) for name in _legacy_backend.__all__}})
models = namespace("gradtape.keras.models", "Keras's model classes.",
                   {"Model": Model, "Sequential": Sequential})
# keras.callbacks: fit's hooks (callbacks.py) and the metric-watching ones.
callbacks = namespace("gradtape.keras.callbacks", "Keras 3's callbacks.", {
    name: getattr(module, name) for module in (_callbacks, _callbacks_monitor)
    for name in module.__all__})

__all__ = ["History", "Input", "KerasTensor", "Model", "Sequential", "Variable",
           "activations", "backend", "callbacks", "initializers", "layers", "losses",
           "metrics", "models", "ops", "optimizers", "random", "regularizers", "utils"]
__dir__ = public_dir(globals())
