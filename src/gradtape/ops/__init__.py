"""The op library: one module per family, each primitive declared once with its rules.

Importing this package registers every primitive and every NumPy function gradtape can
differentiate, and gives tensors their operators.

Imports: ``core``, ``ir``.
"""

import sys

from ..core import operators as _operators
from . import (
    arrange,
    backends,  # noqa: F401 - how primitives run on Dask, CuPy and array-API arrays
    clipping,
    control_flow,  # noqa: F401 - loop and switch (their derivatives: ad/control_flow)
    conv,  # noqa: F401 - tf.nn's convolutions (their names are in gt.nn)
    convolution,
    elementwise,
    fft,  # noqa: F401 - registers np.fft on tensors; TF names in gt.signal
    index,
    linalg,
    nn,
    numpy_extra,  # noqa: F401  (registers NumPy functions; no gt.* names)
    numpy_random,  # noqa: F401 - np.random.choice(p=tensor) draws as with the array
    numpy_stats,  # noqa: F401  (likewise)
    positions,  # noqa: F401 - index primitives (their TF functions are in api/)
    promotion,  # noqa: F401 - gt.config(dtype_promotion=...)'s rule for binary ops
    random,  # noqa: F401 - the random primitives and their streams
    reduce,
    scan,
    scipy_linalg,
    shape,
    sorting,
    special,  # noqa: F401  (its names stay in gradtape.ops.special)
    stacking,
    stdtr,  # noqa: F401 - scipy.special.stdtr's primitive (gt.scipy.special)
)
from .arrange import *  # noqa: F403
from .clipping import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .index import *  # noqa: F403
from .linalg import *  # noqa: F403
from .nn import *  # noqa: F403
from .reduce import *  # noqa: F403
from .scan import *  # noqa: F403
from .shape import *  # noqa: F403
from .sorting import *  # noqa: F403
from .stacking import *  # noqa: F403

_operators.install_ops(sys.modules[__name__])

__all__ = [*elementwise.__all__, *reduce.__all__, *scan.__all__, *shape.__all__, *stacking.__all__,
           *arrange.__all__, *index.__all__, *sorting.__all__, *nn.__all__, *linalg.__all__,
           *clipping.__all__,
           *convolution.__all__, *scipy_linalg.__all__]
