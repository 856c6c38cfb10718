"""``gt.scipy.signal``: ``convolve`` and ``correlate`` over every axis (SciPy's modes
``'full'``, ``'valid'``, ``'same'``), differentiable in both inputs."""

from __future__ import annotations

from typing import Any

from ..ops.convolution import convolve_axes, convolve_nd, correlate_nd
from .special import as_float

__all__ = ["convolve", "correlate"]


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
             axes: Any = None, dot_axes: Any = ((), ())) -> Any:
    """``scipy.signal.convolve``: ``method`` is accepted and ignored (one method here).

    ``axes``/``dot_axes`` are autograd's extension: convolve the paired ``axes``
    (``([in1 axes], [in2 axes])``), contract the paired ``dot_axes``, take the outer
    product of the other axes (``in1``'s, then ``in2``'s, then the convolved ones)."""
    del method
    in1, in2 = as_float(in1), as_float(in2)  # Python values in float64, as SciPy
    if axes is None and not any(dot_axes):
        return convolve_nd(in1, in2, mode)
    if axes is None:
        raise ValueError("convolve: dot_axes needs axes, the pairs of axes to convolve.")
    return convolve_axes(in1, in2, axes, dot_axes, mode)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """``scipy.signal.correlate``: ``convolve`` with ``in2`` reversed and conjugated."""
    del method
    return correlate_nd(as_float(in1), as_float(in2), mode)
