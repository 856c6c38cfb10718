"""Rules for CuPy arrays, where gradtape's NumPy implementation would not run on them.

Most primitives need none: NumPy's protocols (``__array_ufunc__``/``__array_function__``)
route their NumPy implementation to CuPy. These implementations call ``np.asarray`` or
write into a NumPy buffer, which CuPy refuses (it never converts to NumPy implicitly),
so they are written with CuPy's own functions. Index arrays, which gradtape makes as
NumPy arrays, are moved to the device. What has no CuPy equivalent (SciPy's matrix
functions, ``eig``) raises gradtape's clear ``NotImplementedError``.

CuPy is not installed in CI: ``tests/backends/test_cupy_backend.py`` runs these where a
GPU is.
"""

from __future__ import annotations

import numpy as np

from ...core.backends import ArrayKind, to_numpy
from ..index import _build_index, _has_arrays
from .rules import namespace_rule, unsupported


def _cupy_rule(name: str):
    return namespace_rule(name, library="cupy")


def _on_device(xp, index: tuple) -> tuple:
    """``index`` with its NumPy index arrays as CuPy arrays."""
    return tuple(xp.asarray(e) if isinstance(e, np.ndarray) else e for e in index)


@_cupy_rule("getitem")
def _getitem(kind: ArrayKind):
    xp = kind.namespace
    return lambda x, *arrays, index: x[_on_device(xp, _build_index(index, arrays))]


@_cupy_rule("scatter_add")
def _scatter_add(kind: ArrayKind):
    xp = kind.namespace

    def scatter_add(g, *arrays, index, shape):
        import cupyx  # CuPy's ufuncs have no add.at; cupyx.scatter_add is the same

        out = xp.zeros(shape, dtype=g.dtype)
        where = _on_device(xp, _build_index(index, arrays))
        if _has_arrays(index):
            cupyx.scatter_add(out, where, g)  # repeated indices accumulate
        else:
            out[where] = g  # basic indexing never selects an element twice
        return out
    return scatter_add


def _arg_reduction(name: str) -> None:
    @_cupy_rule(name)
    def rule(kind: ArrayKind):
        reduce = getattr(kind.namespace, name)
        return lambda x, axis, keepdims: reduce(x, axis=axis, keepdims=keepdims).astype(
            np.int64)


_arg_reduction("argmax")
_arg_reduction("argmin")


@_cupy_rule("argsort")
def _argsort(kind: ArrayKind):
    xp = kind.namespace

    def argsort(x, axis, kind, descending):
        # cupy.argsort is always stable and takes no other kind.
        if not descending:
            return xp.argsort(x, axis=axis)
        backwards = xp.argsort(xp.flip(x, axis), axis=axis)  # TF's DESCENDING order
        return (x.shape[axis] - 1) - xp.flip(backwards, axis)
    return argsort


def _shift(xp, x, axis: int, offset: int, fill):
    """``out[i] = x[i - offset]`` along ``axis``, ``fill`` where that falls outside."""
    out = xp.full_like(x, fill)
    n = x.shape[axis]
    k = min(abs(offset), n)
    head = (slice(None),) * axis
    if offset > 0:
        out[head + (slice(k, None),)] = x[head + (slice(0, n - k),)]
    else:
        out[head + (slice(0, n - k),)] = x[head + (slice(k, None),)]
    return out


@_cupy_rule("shift")
def _shift_rule(kind: ArrayKind):
    xp = kind.namespace
    return lambda x, axis, offset, fill=0: _shift(xp, x, axis, offset, fill)


def _scan(name: str, fill: int) -> None:
    @_cupy_rule(name)
    def rule(kind: ArrayKind):
        xp = kind.namespace
        accumulate = getattr(xp, name)

        def scan(x, axis, exclusive, reverse):
            if reverse:
                x = xp.flip(x, axis)
            out = accumulate(x, axis=axis)
            if exclusive:
                out = _shift(xp, out, axis, 1, fill)
            return xp.flip(out, axis) if reverse else out
        return scan


_scan("cumsum", 0)
_scan("cumprod", 1)


@_cupy_rule("linear_recurrence")
def _linear_recurrence(kind: ArrayKind):
    xp = kind.namespace

    def linear_recurrence(a, b, axis, reverse):
        a, b = xp.broadcast_arrays(xp.asarray(a), xp.asarray(b))
        out = xp.empty(a.shape, xp.result_type(a, b))
        a_k, b_k, out_k = (xp.moveaxis(v, axis, 0) for v in (a, b, out))
        prev = None
        for k in (range(a_k.shape[0] - 1, -1, -1) if reverse else range(a_k.shape[0])):
            prev = b_k[k] if prev is None else a_k[k] * prev + b_k[k]
            out_k[k] = prev
        return out
    return linear_recurrence


@_cupy_rule("one_hot")
def _one_hot(kind: ArrayKind):
    xp = kind.namespace

    def one_hot(indices, depth, on_value, off_value, axis, dtype):
        hot = xp.expand_dims(indices, -1) == xp.arange(depth)  # out of range: all off
        out = xp.where(hot, xp.asarray(on_value, dtype), xp.asarray(off_value, dtype))
        return xp.moveaxis(out, -1, axis) if axis != -1 else out
    return one_hot


@_cupy_rule("class_labels")
def _class_labels(kind: ArrayKind):
    def class_labels(labels, depth):
        if labels.size and (bool(labels.min() < 0) or bool(labels.max() >= depth)):
            from ..nn import _class_labels_impl

            _class_labels_impl(to_numpy(labels), depth)  # raises TF's error
        return labels
    return class_labels


@_cupy_rule("cholesky")
def _cholesky(kind: ArrayKind):
    xp = kind.namespace
    return lambda a: xp.linalg.cholesky((a + xp.conj(xp.swapaxes(a, -1, -2))) / 2)


def _refused(name: str, reason: str) -> None:
    @_cupy_rule(name)
    def rule(kind: ArrayKind):
        def refuse(*args, **params):
            raise NotImplementedError(
                f"gradtape's {name!r} op does not run on cupy arrays: {reason}. Bring "
                "the input to the host with .numpy() (x.get()) first.")
        return unsupported(refuse)


for _name in ("expm", "sqrtm", "solve_sylvester"):
    _refused(_name, "its implementation is SciPy's, on the host")
_refused("eig", "CuPy has no general eigendecomposition")
_refused("convolve", "its implementation reads NumPy strides")
_refused("psd_pseudo", "its implementation is NumPy's, on the host")
