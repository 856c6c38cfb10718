"""How primitives run on Dask arrays where NumPy's protocols do not take them there.

NumPy's functions dispatch to Dask on Dask arrays (``core/backends.py``, ``rules.py``), so most
primitives need nothing here. These rules are for implementations that Dask does not
route or that write into buffers: ufunc methods (``np.multiply.reduce``), ``np.asarray``
calls, ``np.add.at`` and loops filling an output. Each builds a lazy Dask graph; none
computes. They apply to Dask arrays only (``namespace_rule(..., library=DASK)``).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ...core.backends import ArrayKind
from ..index import _build_index, _has_arrays
from .rules import namespace_rule

DASK = "dask.array"


def _dask_rule(primitive_name: str):
    return namespace_rule(primitive_name, library=DASK)


# --- elementwise ---------------------------------------------------------------------------

@_dask_rule("sigmoid")
def _sigmoid(kind: ArrayKind):
    # NumPy's implementation on each block: one task a chunk, and its errstate (no
    # overflow warning below -709) holds where the block is computed, on a worker.
    from ..elementwise import _sigmoid_impl

    return lambda x: x.map_blocks(_sigmoid_impl, dtype=x.dtype)


@_dask_rule("sigmoid_of_exp")
def _sigmoid_of_exp(kind: ArrayKind):
    # One task a chunk, as sigmoid's.
    from ..softplus_of_exp import _sigmoid_of_exp_impl

    return lambda e: e.map_blocks(_sigmoid_of_exp_impl, dtype=e.dtype)


# --- reductions and scans ----------------------------------------------------------------

@_dask_rule("prod")
def _prod(kind: ArrayKind):
    da = kind.namespace
    return lambda x, axis, keepdims: da.prod(x, axis=axis, keepdims=keepdims)


def _arg_extremum(reduce):
    # NumPy's argmax has no keepdims=True with axis=None on Dask: reshape instead.
    def run(x, axis, keepdims):
        out = reduce(x, axis=axis)
        if keepdims:
            out = out.reshape((1,) * x.ndim if axis is None else
                              tuple(1 if i == axis else d for i, d in enumerate(x.shape)))
        return out.astype(np.int64)
    return run


@_dask_rule("argmax")
def _argmax(kind: ArrayKind):
    return _arg_extremum(kind.namespace.argmax)


@_dask_rule("argmin")
def _argmin(kind: ArrayKind):
    return _arg_extremum(kind.namespace.argmin)


def _axis_slice(axis: int, piece: slice) -> tuple:
    return (slice(None),) * axis + (piece,)


def _shift(x: Any, axis: int, offset: int, fill: Any = 0) -> Any:
    """``out[i] = x[i - offset]`` along ``axis``, ``fill`` outside: a concatenation, as
    Dask arrays cannot be written into."""
    da = _dask()
    n = x.shape[axis]
    k = builtins.min(abs(offset), n)
    if k == 0:
        return x
    kept = slice(0, n - k) if offset > 0 else slice(k, None)
    edge = slice(0, k) if offset > 0 else slice(n - k, None)
    pad = da.full_like(x[_axis_slice(axis, edge)], fill)
    body = x[_axis_slice(axis, kept)]
    return da.concatenate([pad, body] if offset > 0 else [body, pad], axis=axis)


def _dask():
    import dask.array

    return dask.array


@_dask_rule("shift")
def _shift_rule(kind: ArrayKind):
    return _shift


def _scan(accumulate, fill):
    def run(x, axis, exclusive, reverse):
        da = _dask()
        x = da.asarray(x)
        if reverse:
            x = da.flip(x, axis)
        out = accumulate(x, axis=axis)
        if exclusive:
            out = _shift(out, axis, 1, fill)
        return da.flip(out, axis) if reverse else out
    return run


@_dask_rule("cumsum")
def _cumsum(kind: ArrayKind):
    return _scan(kind.namespace.cumsum, 0)


@_dask_rule("cumprod")
def _cumprod(kind: ArrayKind):
    return _scan(kind.namespace.cumprod, 1)


@_dask_rule("linear_recurrence")
def _linear_recurrence(kind: ArrayKind):
    """``s[k] = a[k] s[k-1] + b[k]`` along ``axis``: one lazy step per element of the
    axis (the NumPy implementation fills an output array in a loop)."""
    da = kind.namespace

    def run(a, b, axis, reverse):
        a, b = da.broadcast_arrays(da.asarray(a), da.asarray(b))
        dtype = np.result_type(a.dtype, b.dtype)
        n = a.shape[axis]
        steps: list[Any] = [None] * n
        prev = None
        for k in (range(n - 1, -1, -1) if reverse else range(n)):
            a_k, b_k = da.take(a, k, axis=axis), da.take(b, k, axis=axis)
            prev = b_k if prev is None else a_k * prev + b_k
            steps[k] = prev
        return da.stack(steps, axis=axis).astype(dtype)
    return run


# --- shapes ------------------------------------------------------------------------------

def _reshape_on_dask(x: Any, shape: tuple) -> Any:
    da = _dask()
    try:
        return da.reshape(x, shape)
    except NotImplementedError:
        # Dask splits and merges dimensions only evenly in one pass (6x4 -> 4x3x2 is
        # not): flatten first, which it always can.
        return da.reshape(da.reshape(x, (-1,)), shape)


@_dask_rule("reshape")
def _reshape(kind: ArrayKind):
    return _reshape_on_dask


# --- indexing ------------------------------------------------------------------------------

def _expand_ellipsis(idx: tuple, ndim: int) -> tuple:
    if not any(e is Ellipsis for e in idx):
        return idx
    at = next(i for i, e in enumerate(idx) if e is Ellipsis)
    used = sum(e is not None and e is not Ellipsis for e in idx)
    return idx[:at] + (slice(None),) * (ndim - used) + idx[at + 1:]


def _pointwise_getitem(x: Any, idx: tuple) -> Any:
    """``x[idx]`` with several (or multi-dimensional) index arrays, NumPy's semantics,
    through Dask's ``vindex`` (which always puts the broadcast index dimensions first;
    NumPy keeps them in place when the advanced entries are adjacent)."""
    da = _dask()
    idx = _expand_ellipsis(idx, x.ndim)
    if any(e is None for e in idx):
        raise NotImplementedError(
            "gradtape's 'getitem' op does not run on dask.array arrays yet with both "
            "np.newaxis and several index arrays; index in two steps (x[a, b][:, None]).")
    advanced = [i for i, e in enumerate(idx) if not isinstance(e, slice)]
    arrays = [np.asarray(e) if isinstance(e, (int, np.integer)) else e
              for e in (idx[i] for i in advanced)]
    rank = len(np.broadcast_shapes(*(tuple(a.shape) for a in arrays)))
    out = x.vindex[tuple(arrays[advanced.index(i)] if i in advanced else e
                         for i, e in enumerate(idx))]
    adjacent = advanced[-1] - advanced[0] == len(advanced) - 1
    if adjacent and advanced[0] > 0:  # NumPy: the index dimensions where the entries are
        out = da.moveaxis(out, tuple(range(rank)),
                          tuple(range(advanced[0], advanced[0] + rank)))
    return out


def _needs_pointwise(idx: tuple) -> bool:
    """Whether Dask's ``x[idx]`` cannot take ``idx``: it takes one 1-d index array."""
    arrays = [e for e in idx if hasattr(e, "ndim") and not isinstance(e, np.generic)]
    return len(arrays) > 1 or any(a.ndim != 1 for a in arrays)


def _getitem_on_dask(x: Any, arrays: tuple, index: tuple) -> Any:
    idx = _build_index(index, arrays)
    if _has_arrays(index) and _needs_pointwise(idx):
        return _pointwise_getitem(x, idx)
    return x[idx]


@_dask_rule("getitem")
def _getitem(kind: ArrayKind):
    da = kind.namespace
    return lambda x, *arrays, index: _getitem_on_dask(da.asarray(x), arrays, index)


def _scatter_basic(da, g, idx: tuple, shape: tuple, dtype: np.dtype) -> Any:
    """Zeros with ``g`` at a basic index (no element selected twice): Dask's lazy item
    assignment, which makes a new graph (nothing is written into an array)."""
    idx = _expand_ellipsis(idx, len(shape))
    new_axes = tuple(i for i, e in enumerate(_result_axes(idx)) if e is None)
    if new_axes:  # np.newaxis adds a dimension of size 1 to g: drop it
        g = da.squeeze(g, axis=new_axes)
        idx = tuple(e for e in idx if e is not None)
    out = da.zeros(shape, dtype=dtype)
    out[idx] = g
    return out


def _result_axes(idx: tuple) -> list:
    """Per dimension of ``x[idx]`` (basic ``idx``), the entry that made it."""
    return [e for e in idx if not isinstance(e, (int, np.integer))]


def _scatter_arrays(da, g, arrays: tuple, index: tuple, shape: tuple,
                    dtype: np.dtype) -> Any:
    """Zeros with ``g`` added at an index with arrays, repeated positions accumulating:
    each element of ``g`` goes to the flat position the same index picks from
    ``arange(size)``, and ``bincount`` sums the elements of each position."""
    size = int(np.prod(shape, dtype=np.int64))
    positions = _getitem_on_dask(_reshape_on_dask(da.arange(size), shape), arrays, index)
    positions = positions.ravel()
    weights = g.rechunk(g.chunksize).ravel().rechunk(positions.chunks)

    def summed(part):
        return da.bincount(positions, weights=part, minlength=size)
    out = summed(weights.real) + 1j * summed(weights.imag) if dtype.kind == "c" \
        else summed(weights)
    return _reshape_on_dask(out.astype(dtype), shape)


@_dask_rule("scatter_add")
def _scatter_add(kind: ArrayKind):
    da = kind.namespace

    def run(g, *arrays, index, shape):
        dtype = np.result_type(g.dtype)
        g = da.asarray(g)
        if _has_arrays(index):
            return _scatter_arrays(da, g, arrays, index, shape, dtype)
        return _scatter_basic(da, g, _build_index(index, arrays), shape, dtype)
    return run


# --- linear algebra -----------------------------------------------------------------------

# A matrix times a vector as Dask's tensordot (``X.dot(w)``, as Dask-GLM writes it):
# np.matmul of a vector goes through da.matmul, which adds the vector a unit axis, contracts
# as a 3-d blockwise and takes the axis off again, a getitem task a chunk each way.
# Batched matrices keep matmul (tensordot has no batch axes).

@_dask_rule("matvec")
def _matvec(kind: ArrayKind):
    da = kind.namespace
    return lambda a, x: da.tensordot(a, x, axes=1) if a.ndim == 2 else np.matmul(a, x)


@_dask_rule("vecmat")
def _vecmat(kind: ArrayKind):
    da = kind.namespace
    return lambda x, a: da.tensordot(x, a, axes=1) if a.ndim == 2 else np.matmul(x, a)


@_dask_rule("cholesky")
def _cholesky(kind: ArrayKind):
    da = kind.namespace

    def run(a):
        if a.ndim != 2:
            raise NotImplementedError(
                "gradtape's 'cholesky' op runs on 2-d dask.array matrices only (Dask's "
                "cholesky has no batches); loop over the batch, or compute it first.")
        a = (a + da.conj(a.T)) / 2  # symmetrized first, as the NumPy implementation
        block = builtins.max(a.chunksize)
        return da.linalg.cholesky(a.rechunk((block, block)), lower=True)
    return run


@_dask_rule("diagonal_scatter")
def _diagonal_scatter(kind: ArrayKind):
    """Zeros of ``shape`` with ``g`` on the diagonal ``offset`` of ``axis1``, ``axis2``:
    ``g`` spread over the rows, times an identity shifted by ``offset``."""
    da = kind.namespace

    def run(g, offset, axis1, axis2, shape):
        g = da.asarray(g)
        moved = [d for i, d in enumerate(shape) if i not in (axis1, axis2)]
        rows, cols = shape[axis1], shape[axis2]
        first_row = builtins.max(-offset, 0)
        pad = [(0, 0)] * (g.ndim - 1) + [(first_row, rows - g.shape[-1] - first_row)]
        per_row = da.pad(g, pad)[..., :, None]
        # da.eye with M != N can build a broken graph: compare aranges instead.
        eye = (da.arange(rows)[:, None] + offset == da.arange(cols)[None, :]).astype(g.dtype)
        out = da.broadcast_to(per_row * eye, tuple(moved) + (rows, cols))
        return da.moveaxis(out, (-2, -1), (axis1, axis2))
    return run


# --- what Dask cannot do ------------------------------------------------------------------

def _refuse(primitive_name: str, why: str) -> None:
    """``primitive_name`` raises on Dask arrays before anything runs: Dask has no
    implementation, and its fallback would compute the whole graph into NumPy."""

    @_dask_rule(primitive_name)
    def rule(kind: ArrayKind):
        def refuse(*args: Any, **params: Any) -> Any:
            raise NotImplementedError(
                f"gradtape's {primitive_name!r} op does not run on dask.array arrays: "
                f"{why} Compute the input first (x.compute(), or gt.constant(x.compute())) "
                "if it fits in memory.")
        return refuse


for _name, _why in (
        ("det", "Dask has no determinant."),
        ("slogdet", "Dask has no determinant."),
        ("eig", "Dask has no general eigendecomposition."),
        ("eigh", "Dask has no symmetric eigendecomposition."),
        ("argsort", "Dask has no sort along an axis (sort, argsort, np.sort, "
                    "np.argsort and ops built on them)."),
):
    _refuse(_name, _why)
