"""``keras.ops``: Keras 3's op namespace (NumPy-like functions, neural-network
functions, core ones) with Keras's signatures, on gradtape's ops: tapes differentiate
through them, and each takes KerasTensors too, recording an operation of a functional
model.

Imports: ``core``, ``ops``, ``api`` and the ``keras`` modules below it.
"""

from ...core.namespaces import public_dir
from . import core_ops, nn_ops, numpy_ops
from .core_ops import *  # noqa: F403 - the namespace is the three modules' names
from .nn_ops import *  # noqa: F403
from .numpy_ops import *  # noqa: F403

# Keras 3 also groups them: keras.ops.numpy, keras.ops.nn.
numpy = numpy_ops
nn = nn_ops

__all__ = sorted({*core_ops.__all__, *nn_ops.__all__, *numpy_ops.__all__, "nn", "numpy"})
__dir__ = public_dir(globals())
