"""``gt.scipy.signal``: ``convolve`` and ``correlate`` over every axis (SciPy's modes
``'full'``, ``'valid'``, ``'same'``), differentiable in both inputs."""

from __future__ import annotations

from typing import Any

from ..ops.convolution import convolve_nd, correlate_nd

__all__ = ["convolve", "correlate"]


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """``scipy.signal.convolve``: ``method`` is accepted and ignored (one method here)."""
    del method
    return convolve_nd(in1, in2, mode)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """``scipy.signal.correlate``: ``convolve`` with ``in2`` reversed and conjugated."""
    del method
    return correlate_nd(in1, in2, mode)
