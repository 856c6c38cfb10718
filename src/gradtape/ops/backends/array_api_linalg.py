"""Rules for array-API libraries outside NumPy's protocols (``array_api_strict``):
indexing, contractions, the ``linalg`` and ``fft`` extensions.

Indexing follows NumPy's rules exactly by working out, in NumPy, which flat positions
of the array an index reads (index arrays are gradtape's own or small), then taking
them with the namespace's ``take``. Its transpose, ``scatter_add``, adds without
in-place writes: the elements sent to one position are added one level at a time, in
index order, as ``np.add.at`` adds them.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.backends import ArrayKind, to_numpy
from ..index import _build_index, _has_arrays
from .rules import namespace_rule


def _array_api_rule(name: str):
    return namespace_rule(name, array_api_only=True)


def _extension(kind: ArrayKind, name: str, what: str):
    """The namespace's ``linalg`` or ``fft`` extension, or a clear refusal."""
    module = getattr(kind.namespace, name, None)
    if module is None:
        raise NotImplementedError(
            f"{kind.name} has no {name} extension: gradtape's {what} do not run on its "
            "arrays. Convert the input with np.asarray first.")
    return module


def _linalg(kind: ArrayKind):
    return _extension(kind, "linalg", "linear algebra functions")


def _matrix_transpose(xp, x):
    return xp.permute_dims(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def _adjoint(xp, x):
    x = _matrix_transpose(xp, x)
    return xp.conj(x) if xp.isdtype(x.dtype, "complex floating") else x


# --- indexing -------------------------------------------------------------------------------

def _positions(template: tuple, arrays: tuple, shape: tuple) -> np.ndarray:
    """The flat positions ``x[index]`` reads in an array of ``shape``, by NumPy's rules."""
    index = _build_index(template, tuple(to_numpy(a) for a in arrays))
    return np.arange(math.prod(shape)).reshape(shape)[index]


def _basic_index(index: tuple) -> tuple:
    """``index`` with a trailing ``...``: the standard reads no implicit trailing axes."""
    return index if any(entry is Ellipsis for entry in index) else (*index, Ellipsis)


@_array_api_rule("getitem")
def _getitem(kind: ArrayKind):
    xp = kind.namespace

    def getitem(x, *arrays, index):
        if not _has_arrays(index):  # basic indexing: the standard's own __getitem__
            return x[_basic_index(_build_index(index, ()))]
        positions = _positions(index, arrays, tuple(x.shape))
        taken = xp.take(xp.reshape(x, (-1,)), xp.asarray(positions.reshape(-1)), axis=0)
        return xp.reshape(taken, positions.shape)
    return getitem


def _occurrence_levels(targets: np.ndarray) -> list[np.ndarray]:
    """The element numbers of ``targets`` split in levels: level r holds each target's
    r-th occurrence (in element order), so no level names a target twice."""
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    starts = np.ones(len(ordered), bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    first = np.maximum.accumulate(np.where(starts, np.arange(len(ordered)), 0))
    rank = np.empty(len(ordered), np.intp)
    rank[order] = np.arange(len(ordered)) - first
    return [np.nonzero(rank == r)[0] for r in range(int(rank.max(initial=-1)) + 1)]


@_array_api_rule("scatter_add")
def _scatter_add(kind: ArrayKind):
    xp = kind.namespace

    def scatter_add(g, *arrays, index, shape):
        positions = _positions(index, arrays, tuple(shape))
        g = xp.reshape(xp.broadcast_to(g, positions.shape), (-1,))
        size, targets = math.prod(shape), positions.reshape(-1)
        zeros = xp.zeros(size, dtype=g.dtype)
        out = zeros
        for level in _occurrence_levels(targets):
            source = np.full(size, -1, np.intp)
            source[targets[level]] = level
            picked = xp.take(g, xp.asarray(np.maximum(source, 0)), axis=0)
            out = out + xp.where(xp.asarray(source >= 0), picked, zeros)
        return xp.reshape(out, tuple(shape))
    return scatter_add


# --- diagonals ---------------------------------------------------------------------------

def _to_end(xp, x, axis1: int, axis2: int):
    """``x`` with ``axis1`` and ``axis2`` moved last (in that order)."""
    axis1, axis2 = axis1 % x.ndim, axis2 % x.ndim
    rest = [a for a in range(x.ndim) if a not in (axis1, axis2)]
    return xp.permute_dims(x, (*rest, axis1, axis2))


@_array_api_rule("diagonal")
def _diagonal(kind: ArrayKind):
    xp, linalg = kind.namespace, _linalg(kind)
    return lambda x, offset, axis1, axis2: linalg.diagonal(
        _to_end(xp, x, axis1, axis2), offset=offset)


@_array_api_rule("diagonal_scatter")
def _diagonal_scatter(kind: ArrayKind):
    xp = kind.namespace

    def diagonal_scatter(g, offset, axis1, axis2, shape):
        ndim = len(shape)
        axis1, axis2 = axis1 % ndim, axis2 % ndim
        rows, cols = shape[axis1], shape[axis2]
        rest = [a for a in range(ndim) if a not in (axis1, axis2)]
        moved_shape = tuple(shape[a] for a in rest) + (rows, cols)
        n, first_row = g.shape[-1], max(-offset, 0)
        if n == 0:
            moved = xp.zeros(moved_shape, dtype=g.dtype)
        else:  # row i of the diagonal holds g[..., i - first_row], at column i + offset
            which = np.clip(np.arange(rows) - first_row, 0, n - 1)
            per_row = xp.take(g, xp.asarray(which), axis=-1)[..., None]
            on = np.arange(cols)[None, :] - np.arange(rows)[:, None] == offset
            moved = xp.where(xp.asarray(on), per_row, xp.zeros_like(per_row))
            moved = xp.broadcast_to(moved, moved_shape)
        back = np.argsort([*rest, axis1, axis2])
        return xp.permute_dims(moved, tuple(int(a) for a in back))
    return diagonal_scatter


# --- contractions --------------------------------------------------------------------------

def _diagonals_taken(xp, linalg, term: str, x):
    """``term`` without repeated letters and ``x`` with those diagonals taken (last)."""
    while len(set(term)) < len(term):
        letter = next(c for c in term if term.count(c) > 1)
        i = term.index(letter)
        j = term.index(letter, i + 1)
        x = linalg.diagonal(_to_end(xp, x, i, j))
        term = "".join(c for k, c in enumerate(term) if k not in (i, j)) + letter
    return term, x


@_array_api_rule("einsum")
def _einsum(kind: ArrayKind):
    """Any einsum as a broadcast product summed over the contracted letters (no
    einsum in the standard): exact, but it holds the whole product."""
    xp, linalg = kind.namespace, _linalg(kind)

    def einsum(*operands, subscripts):
        inputs, out = subscripts.split("->")
        letters = "".join(dict.fromkeys(inputs.replace(",", "")))
        product = None
        for term, x in zip(inputs.split(","), operands):
            term, x = _diagonals_taken(xp, linalg, term, x)
            present = [c for c in letters if c in term]
            x = xp.permute_dims(x, tuple(term.index(c) for c in present))
            x = xp.reshape(x, tuple(x.shape[present.index(c)] if c in present else 1
                                    for c in letters))
            product = x if product is None else product * x
        summed = tuple(i for i, c in enumerate(letters) if c not in out)
        if summed:
            product = xp.sum(product, axis=summed, dtype=product.dtype)
        kept = [c for c in letters if c in out]
        return xp.permute_dims(product, tuple(kept.index(c) for c in out))
    return einsum


@_array_api_rule("einsum_embed")
def _einsum_embed(kind: ArrayKind):
    """``x`` written onto the generalized diagonal of zeros of ``shape`` (``i->ii``)."""
    xp = kind.namespace

    def einsum_embed(x, subscripts, shape):
        src, dst = subscripts.split("->")
        first = {}
        for position, letter in enumerate(dst):
            first.setdefault(letter, position)
        order = sorted(src, key=first.__getitem__)
        y = xp.permute_dims(x, tuple(src.index(c) for c in order))
        y = xp.reshape(y, tuple(shape[p] if first[c] == p else 1 for p, c in enumerate(dst)))
        for position, letter in enumerate(dst):
            home = first[letter]
            if home != position:  # equal indices along the letter's repeated axes
                a = np.arange(shape[home]).reshape(_along(len(dst), home))
                b = np.arange(shape[position]).reshape(_along(len(dst), position))
                y = xp.where(xp.asarray(a == b), y, xp.zeros_like(y))
        return xp.broadcast_to(y, tuple(shape))
    return einsum_embed


def _along(ndim: int, axis: int) -> tuple:
    return tuple(-1 if k == axis else 1 for k in range(ndim))


# --- linalg ----------------------------------------------------------------------------------

def _linalg_function(name: str, function: str) -> None:
    @_array_api_rule(name)
    def rule(kind: ArrayKind):
        return getattr(_linalg(kind), function)


_linalg_function("inv", "inv")
_linalg_function("det", "det")


@_array_api_rule("slogdet")
def _slogdet(kind: ArrayKind):
    linalg = _linalg(kind)
    return lambda a: tuple(linalg.slogdet(a))


@_array_api_rule("solve")
def _solve(kind: ArrayKind):
    xp, linalg = kind.namespace, _linalg(kind)

    def solve(a, b):  # the batch dimensions broadcast, as gradtape's NumPy version
        batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
        return linalg.solve(xp.broadcast_to(a, batch + tuple(a.shape[-2:])),
                            xp.broadcast_to(b, batch + tuple(b.shape[-2:])))
    return solve


@_array_api_rule("cholesky")
def _cholesky(kind: ArrayKind):
    xp, linalg = kind.namespace, _linalg(kind)
    return lambda a: linalg.cholesky((a + _adjoint(xp, a)) / 2)


@_array_api_rule("svd")
def _svd(kind: ArrayKind):
    linalg = _linalg(kind)
    return lambda a, full_matrices: tuple(linalg.svd(a, full_matrices=full_matrices))


@_array_api_rule("qr")
def _qr(kind: ArrayKind):
    linalg = _linalg(kind)
    return lambda a, full: tuple(linalg.qr(a, mode="complete" if full else "reduced"))


@_array_api_rule("eigh")
def _eigh(kind: ArrayKind):
    xp, linalg = kind.namespace, _linalg(kind)

    def eigh(a, UPLO):  # NumPy's name
        # The standard's eigh reads the lower triangle; the upper one of a is the lower
        # one of its adjoint.
        return tuple(linalg.eigh(a if UPLO == "L" else _adjoint(xp, a)))
    return eigh


@_array_api_rule("pinv")
def _pinv(kind: ArrayKind):
    linalg = _linalg(kind)
    # NumPy's rcond and the standard's rtol are the same relative cutoff.
    return lambda a, rcond: linalg.pinv(a, rtol=rcond)


# --- fft -------------------------------------------------------------------------------------

def _fft_module(kind: ArrayKind):
    return _extension(kind, "fft", "FFTs")


def _complex(xp, x):
    """``x`` as a complex array of its precision (NumPy's fftn takes real input too)."""
    if xp.isdtype(x.dtype, "complex floating"):
        return x
    return xp.astype(x, xp.complex64 if x.dtype == xp.float32 else xp.complex128)


def _complex_transform(name: str) -> None:
    @_array_api_rule(name)
    def rule(kind: ArrayKind):
        xp, transform = kind.namespace, getattr(_fft_module(kind), name)
        return lambda x, axes, norm: transform(_complex(xp, x), axes=axes, norm=norm)


_complex_transform("fftn")
_complex_transform("ifftn")


@_array_api_rule("rfftn")
def _rfftn(kind: ArrayKind):
    fft = _fft_module(kind)
    return lambda x, axes, norm: fft.rfftn(x, axes=axes, norm=norm)


@_array_api_rule("irfftn")
def _irfftn(kind: ArrayKind):
    xp, fft = kind.namespace, _fft_module(kind)
    return lambda x, s, axes, norm: fft.irfftn(_complex(xp, x), s=s, axes=axes, norm=norm)
