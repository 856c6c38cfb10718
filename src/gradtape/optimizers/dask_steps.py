"""An optimizer step on Dask variables: the step's gradients computed in one pass over
the data, and the updated variables persisted, so a training loop's graph does not grow
with its steps. Only the optimizers use it (``optimizer.py``); on NumPy arrays both are
a check of each value's class.
"""

from __future__ import annotations

import numpy as np

from ..core.backends import is_lazy
from ..core.state import state
from ..core.tensor import Tensor, wrap


def computed_together(grads: list, variables: list) -> list:
    """``grads`` with the lazy (Dask) gradients computed, all in one ``dask.compute``
    call: one pass over the data gives every gradient of a step, where computing them one
    by one (or each time an optimizer's NumPy slot reads one) would read the data again."""
    lazy = [i for i, g in enumerate(grads) if isinstance(g, Tensor) and is_lazy(g._value)]
    if not lazy or state.tracer is not None:
        return grads
    import dask

    values = dask.compute(*[grads[i]._value for i in lazy])
    grads = list(grads)
    for i, value in zip(lazy, values):
        grads[i] = wrap(np.asarray(value))
    return grads


def persist_lazy_variables(variables: list) -> None:
    """Persist the (Dask) variables an optimizer step updated, in one ``dask.persist``
    call: each step's value is then its chunks, not a graph of every step before it
    (which would grow with the steps and recompute them all on every read)."""
    lazy = [v for v in variables if is_lazy(v._value)]
    if not lazy or state.tracer is not None:
        return
    import dask

    # The same numbers as the value the update set: no new version for the tapes.
    for variable, value in zip(lazy, dask.persist(*[v._value for v in lazy])):
        variable._value = value
