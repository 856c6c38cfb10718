"""Image resizing: ``resize``, one primitive for every method of ``tf.image.resize``, and
its transpose ``resize_transpose`` (``gt.image``'s functions are in ``api/image.py``).

Every method is separable and linear in the image: along each of the two spatial
``axes`` an output row is a fixed weighting of input rows, so ``resize`` applies one
``(out, in)`` matrix per axis (a BLAS ``tensordot``) and ``nearest`` one index vector (a
``take``, which keeps integer dtypes). The VJP applies the transposed matrices
(``resize_transpose``), whose VJP is ``resize`` again: every derivative order closes.

The weights follow TF 2's kernels: ``bilinear``, ``nearest`` and ``bicubic`` with half-pixel
centers (``ResizeBilinear``/``ResizeNearestNeighbor``/``ResizeBicubic``, bicubic's Keys
``a = -0.5`` with its 1024-entry table and taps outside the image dropped and the rest
renormalized), ``area`` by the overlap of each output pixel with the input's
(``ResizeArea``), and ``lanczos3``/``lanczos5``/``gaussian``/``mitchellcubic`` (and
``antialias=True`` bilinear/bicubic) by ``ScaleAndTranslate``'s kernels, widened by the
downscaling factor when antialiasing.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..ir.nodes import Aval
from .pooling import shifted_axes_batch
from .registry import Primitive, bind, per_primitive

__all__: list[str] = []

METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian",
           "mitchellcubic")
_TABLE_SIZE = 1024  # ResizeBicubic's coefficient table


# --- kernels (ScaleAndTranslate's sampling kernels) ------------------------------------------

def _lanczos(radius):
    def kernel(x):
        x = np.abs(x)
        safe = np.where(x <= 1e-3, 1.0, x)
        value = radius * np.sin(np.pi * safe) * np.sin(np.pi * safe / radius) / (
            np.pi ** 2 * safe ** 2)
        return np.where(x > radius, 0.0, np.where(x <= 1e-3, 1.0, value))
    return kernel, float(radius)


def _gaussian(x):
    radius, sigma = 1.5, 0.5
    x = np.abs(x)
    return np.where(x >= radius, 0.0, np.exp(-x * x / (2 * sigma * sigma)))


def _triangle(x):
    return np.maximum(1.0 - np.abs(x), 0.0)


def _cubic(x, b, c):
    """The Mitchell-Netravali family: (B, C) = (0, 0.5) is Keys, (1/3, 1/3) Mitchell."""
    x = np.abs(x)
    near = ((12 - 9 * b - 6 * c) * x ** 3 + (-18 + 12 * b + 6 * c) * x ** 2 + (6 - 2 * b)) / 6
    far = ((-b - 6 * c) * x ** 3 + (6 * b + 30 * c) * x ** 2 + (-12 * b - 48 * c) * x
           + (8 * b + 24 * c)) / 6
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


_KERNELS = {
    "lanczos3": _lanczos(3), "lanczos5": _lanczos(5), "gaussian": (_gaussian, 1.5),
    "mitchellcubic": (lambda x: _cubic(x, 1 / 3, 1 / 3), 2.0),
    "bilinear": (_triangle, 1.0), "bicubic": (lambda x: _cubic(x, 0.0, 0.5), 2.0),
}


# --- weight matrices, one per (method, sizes) -----------------------------------------------

def _bilinear(n_in, n_out):
    scale = n_in / n_out
    source = (np.arange(n_out) + 0.5) * scale - 0.5
    low = np.floor(source)
    lerp = source - low
    lower = np.clip(low, 0, n_in - 1).astype(int)
    upper = np.clip(np.ceil(source), 0, n_in - 1).astype(int)
    w = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    np.add.at(w, (rows, lower), 1 - lerp)
    np.add.at(w, (rows, upper), lerp)
    return w


def nearest_index(n_in: int, n_out: int) -> np.ndarray:
    """The input row each output row copies (half-pixel centers, rounding down)."""
    source = np.floor((np.arange(n_out) + 0.5) * (n_in / n_out)).astype(int)
    return np.clip(source, 0, n_in - 1)


def _nearest(n_in, n_out):
    w = np.zeros((n_out, n_in))
    w[np.arange(n_out), nearest_index(n_in, n_out)] = 1.0
    return w


def _bicubic(n_in, n_out):
    keys = _KERNELS["bicubic"][0]
    source = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    base = np.floor(source)
    delta = np.rint((source - base) * _TABLE_SIZE) / _TABLE_SIZE  # TF's table lookup
    w = np.zeros((n_out, n_in))
    for tap, distance in zip((-1, 0, 1, 2), (1 + delta, delta, 1 - delta, 2 - delta)):
        index = base + tap
        inside = (index >= 0) & (index < n_in)
        rows = np.nonzero(inside)[0]
        w[rows, index[inside].astype(int)] += keys(distance)[inside]
    return w / w.sum(axis=1, keepdims=True)


def _area(n_in, n_out):
    scale = n_in / n_out
    starts, ends = np.arange(n_out) * scale, (np.arange(n_out) + 1) * scale
    cells = np.arange(n_in)
    overlap = (np.minimum(cells[None, :] + 1, ends[:, None])
               - np.maximum(cells[None, :], starts[:, None]))
    return np.maximum(overlap, 0.0) / scale


def _scale_and_translate(n_in, n_out, kernel_name, antialias):
    kernel, radius = _KERNELS[kernel_name]
    inv_scale = n_in / n_out
    kernel_scale = max(inv_scale, 1.0) if antialias else 1.0
    w = np.zeros((n_out, n_in))
    for o in range(n_out):
        sample = (o + 0.5) * inv_scale
        start = math.ceil(sample - radius * kernel_scale - 0.5)
        end = math.floor(sample + radius * kernel_scale - 0.5)
        start, end = min(max(start, 0), n_in - 1), min(max(end, 0), n_in - 1) + 1
        taps = np.arange(start, end)
        weights = kernel((taps + 0.5 - sample) / kernel_scale)
        total = weights.sum()
        w[o, start:end] = weights / total if abs(total) > 0 else weights
    return w


@lru_cache(maxsize=256)
def weights(method: str, n_in: int, n_out: int, antialias: bool) -> np.ndarray:
    """The ``(n_out, n_in)`` matrix of one axis (float64, read-only)."""
    if method == "nearest":
        w = _nearest(n_in, n_out)
    elif method == "area":
        w = _area(n_in, n_out)
    elif method in ("bilinear", "bicubic") and not antialias:
        w = _bilinear(n_in, n_out) if method == "bilinear" else _bicubic(n_in, n_out)
    else:
        w = _scale_and_translate(n_in, n_out, method, antialias)
    w.flags.writeable = False
    return w


# --- the primitives ---------------------------------------------------------------------------

def _along(x, a, matrix):
    """``matrix`` (out, in) applied along axis ``a`` of ``x``."""
    return np.moveaxis(np.tensordot(matrix, x, axes=([1], [a])), 0, a)


def _resize_impl(x, axes, out_size, method, antialias):
    x = np.asarray(x)
    for a, n_out in zip(axes, out_size):
        if method == "nearest":
            x = np.take(x, nearest_index(x.shape[a], n_out), axis=a)
        else:
            x = _along(x, a, weights(method, x.shape[a], n_out, antialias).astype(x.dtype))
    return x


def _resize_transpose_impl(g, axes, out_size, method, antialias, in_shape):
    g = np.asarray(g)
    for a in axes:
        matrix = weights(method, in_shape[a], g.shape[a], antialias)
        g = _along(g, a, matrix.T.astype(g.dtype))
    return g


def _resize_shape(x, axes, out_size, method, antialias):
    shape = list(x.shape)
    for a, n in zip(axes, out_size):
        shape[a] = n
    return Aval(tuple(shape), x.dtype)


def _forward_params(params):
    return {k: v for k, v in params.items() if k != "in_shape"}


resize_p = Primitive(
    "resize", _resize_impl,
    vjp=lambda g, y, x, **p: (bind(resize_transpose_p, g, **p, in_shape=tuple(x.shape)),),
    jvp=lambda ts, y, x, **p: bind(resize_p, ts[0], **p),
    shape_rule=_resize_shape,
    batch=per_primitive(shifted_axes_batch),
)

resize_transpose_p = Primitive(
    "resize_transpose", _resize_transpose_impl,
    vjp=lambda g, y, c, **p: (bind(resize_p, g, **_forward_params(p)),),
    jvp=lambda ts, y, c, **p: bind(resize_transpose_p, ts[0], **p),
    shape_rule=lambda c, in_shape, **p: Aval(tuple(in_shape), c.dtype),
    batch=per_primitive(shifted_axes_batch),
)


def resize(x, axes, size, method: str, antialias: bool = False):
    """``x`` resized to ``size`` along ``axes`` with ``method`` (in ``x``'s dtype)."""
    return bind(resize_p, x, axes=tuple(int(a) for a in axes),
                out_size=tuple(int(n) for n in size), method=method,
                antialias=bool(antialias) and method not in ("nearest", "area"))
