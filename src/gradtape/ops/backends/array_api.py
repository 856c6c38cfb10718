"""Rules for array-API libraries outside NumPy's protocols (``array_api_strict``):
elementwise functions, reductions, scans and arrangement.

On Dask and CuPy the NumPy implementations of these primitives run through NumPy's
protocols; an array-API namespace needs them written with the standard's functions
(2023.12), without in-place writes. Python scalars take the dtype of the array they meet.
Indexing, linear algebra and FFTs are in ``array_api_linalg.py``.
"""

from __future__ import annotations

from ...core.backends import ArrayKind
from .rules import namespace_rule, unsupported


def _is_complex(xp, x) -> bool:
    return xp.isdtype(x.dtype, "complex floating")


def _lift(xp, *values):
    """``values`` as arrays: a Python scalar takes the dtype of the first array (the
    standard's functions, unlike its operators, need arrays before 2024.12)."""
    like = next(v for v in values if hasattr(v, "shape"))
    return [v if hasattr(v, "shape") else xp.asarray(v, dtype=like.dtype) for v in values]


def _axis_slice(ndim: int, axis: int, part: slice) -> tuple:
    return (slice(None),) * axis + (part,) + (slice(None),) * (ndim - axis - 1)


def _scalar(value):
    """A NumPy scalar param as a Python scalar (the standard's functions take those)."""
    return value.item() if hasattr(value, "item") else value


def _with_shape(shape: tuple, axis: int, size: int) -> tuple:
    return shape[:axis] + (size,) + shape[axis + 1:]


def _array_api_rule(name: str):
    return namespace_rule(name, array_api_only=True)


@_array_api_rule("exp2")
def _exp2(kind: ArrayKind):
    return lambda x: 2.0 ** x


@_array_api_rule("cbrt")
def _cbrt(kind: ArrayKind):
    xp = kind.namespace
    return lambda x: xp.sign(x) * xp.abs(x) ** (1.0 / 3.0)


def _nan_ignoring(name: str, pick: str) -> None:
    """``fmax``/``fmin``: NumPy's maximum/minimum, except that a NaN loses to a number."""

    @_array_api_rule(name)
    def rule(kind: ArrayKind):
        xp = kind.namespace
        extreme = getattr(xp, pick)

        def run(x, y):
            x, y = _lift(xp, x, y)
            return xp.where(xp.isnan(y), x, xp.where(xp.isnan(x), y, extreme(x, y)))
        return run


_nan_ignoring("fmax", "maximum")
_nan_ignoring("fmin", "minimum")


@_array_api_rule("fmod")
def _fmod(kind: ArrayKind):
    xp = kind.namespace

    def fmod(x, y):  # C's fmod: the sign of x (remainder takes y's)
        x, y = _lift(xp, x, y)
        r = xp.remainder(xp.abs(x), xp.abs(y))
        return xp.where(x < 0, -r, r)
    return fmod


@_array_api_rule("conj")
def _conj(kind: ArrayKind):
    xp = kind.namespace
    return lambda x: xp.conj(x) if _is_complex(xp, x) else x


@_array_api_rule("real")
def _real(kind: ArrayKind):
    xp = kind.namespace
    return lambda x: xp.real(x) if _is_complex(xp, x) else x


@_array_api_rule("imag")
def _imag(kind: ArrayKind):
    xp = kind.namespace
    return lambda x: xp.imag(x) if _is_complex(xp, x) else xp.zeros_like(x)


@_array_api_rule("where")
def _where(kind: ArrayKind):
    xp = kind.namespace

    def where(condition, x, y):
        x, y = _lift(xp, x, y) if hasattr(x, "shape") or hasattr(y, "shape") else (
            xp.asarray(x), xp.asarray(y))
        return xp.where(condition, x, y)
    return where


@_array_api_rule("prod")
def _prod(kind: ArrayKind):
    xp = kind.namespace
    # NumPy's multiply.reduce keeps the dtype; the standard's prod widens integers.
    return lambda x, axis, keepdims: xp.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _all_axes(x, axis) -> tuple:
    return tuple(range(x.ndim)) if axis is None else axis


@_array_api_rule("logsumexp")
def _logsumexp(kind: ArrayKind):
    xp = kind.namespace

    def logsumexp(x, axis, keepdims):
        shift = xp.max(x, axis=axis, keepdims=True)
        shift = xp.where(xp.isfinite(shift), shift, xp.zeros_like(shift))
        out = xp.log(xp.sum(xp.exp(x - shift), axis=axis, keepdims=True)) + shift
        return out if keepdims else xp.squeeze(out, axis=_all_axes(x, axis))
    return logsumexp


@_array_api_rule("softmax")
def _softmax(kind: ArrayKind):
    xp = kind.namespace

    def softmax(x, axis):
        e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
        return e / xp.sum(e, axis=axis, keepdims=True)
    return softmax


@_array_api_rule("log_softmax")
def _log_softmax(kind: ArrayKind):
    xp = kind.namespace

    def log_softmax(x, axis):
        shifted = x - xp.max(x, axis=axis, keepdims=True)
        return shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))
    return log_softmax


@_array_api_rule("sigmoid_cross_entropy_with_logits")
def _sigmoid_xent(kind: ArrayKind):
    xp = kind.namespace

    def sigmoid_xent(logits, labels):  # TF's stable form, as ops/nn.py computes it
        logits, labels = _lift(xp, logits, labels)
        nonneg = logits >= 0
        relu_logits = xp.where(nonneg, logits, xp.zeros_like(logits))
        neg_abs = xp.where(nonneg, -logits, logits)
        return relu_logits - logits * labels + xp.log1p(xp.exp(neg_abs))
    return sigmoid_xent


@_array_api_rule("sparse_softmax_cross_entropy_with_logits")
def _sparse_xent(kind: ArrayKind):
    xp = kind.namespace

    def sparse_xent(logits, labels):
        shifted = logits - xp.max(logits, axis=-1, keepdims=True)
        log_probs = shifted - xp.log(xp.sum(xp.exp(shifted), axis=-1, keepdims=True))
        classes = xp.arange(logits.shape[-1], dtype=xp.asarray(labels).dtype)
        hot = xp.expand_dims(xp.asarray(labels), axis=-1) == classes
        return -xp.sum(xp.where(hot, log_probs, xp.zeros_like(log_probs)), axis=-1)
    return sparse_xent


def _shift(xp, x, axis: int, offset: int, fill):
    """``out[i] = x[i - offset]`` along ``axis``, ``fill`` where that falls outside."""
    n = x.shape[axis]
    k = min(abs(offset), n)
    block = xp.full(_with_shape(tuple(x.shape), axis, k), _scalar(fill), dtype=x.dtype)
    if offset > 0:
        return xp.concat([block, x[_axis_slice(x.ndim, axis, slice(0, n - k))]], axis=axis)
    return xp.concat([x[_axis_slice(x.ndim, axis, slice(k, None))], block], axis=axis)


@_array_api_rule("shift")
def _shift_rule(kind: ArrayKind):
    xp = kind.namespace
    return lambda x, axis, offset, fill=0: _shift(xp, x, axis, offset, fill)


def _scan(name: str, function: str, fill: int) -> None:
    """``cumsum``/``cumprod`` (TF's exclusive and reverse too) with the standard's
    cumulative functions; ``cumulative_prod`` is 2024.12's."""

    @_array_api_rule(name)
    def rule(kind: ArrayKind):
        xp = kind.namespace
        accumulate = getattr(xp, function, None)
        if accumulate is None:
            return _missing(kind, name, function)

        def scan(x, axis, exclusive, reverse):
            if reverse:
                x = xp.flip(x, axis=axis)
            out = accumulate(x, axis=axis, dtype=x.dtype)
            if exclusive:
                out = _shift(xp, out, axis, 1, fill)
            return xp.flip(out, axis=axis) if reverse else out
        return scan


def _missing(kind: ArrayKind, prim_name: str, function: str):
    def refuse(*args, **params):
        raise NotImplementedError(
            f"gradtape's {prim_name!r} op does not run on {kind.name} arrays: its "
            f"namespace has no {function!r} (an array API standard function of a later "
            "version). Convert the input with np.asarray first.")
    return unsupported(refuse)


@_array_api_rule("linear_recurrence")
def _linear_recurrence(kind: ArrayKind):
    """``out[k] = a[k] out[k-1] + b[k]`` along ``axis``: a loop over the axis (the
    standard has no scan), each step a whole slice."""
    xp = kind.namespace

    def linear_recurrence(a, b, axis, reverse):
        a, b = _lift(xp, a, b) if hasattr(a, "shape") else _lift(xp, b, a)[::-1]
        a, b = xp.broadcast_arrays(a, b)
        dtype = xp.result_type(a, b)
        steps = range(a.shape[axis] - 1, -1, -1) if reverse else range(a.shape[axis])
        outs, prev = {}, None
        for k in steps:
            a_k, b_k = a[_axis_slice(a.ndim, axis, k)], b[_axis_slice(b.ndim, axis, k)]
            prev = xp.astype(b_k, dtype) if prev is None else a_k * prev + b_k
            outs[k] = prev
        return xp.stack([outs[k] for k in range(a.shape[axis])], axis=axis)
    return linear_recurrence


_scan("cumsum", "cumulative_sum", 0)
_scan("cumprod", "cumulative_prod", 1)


def _arg_reduction(name: str) -> None:
    """argmax/argmin as int64, as NumPy's implementation returns them."""

    @_array_api_rule(name)
    def rule(kind: ArrayKind):
        xp = kind.namespace
        reduce = getattr(xp, name)
        return lambda x, axis, keepdims: xp.astype(
            reduce(x, axis=axis, keepdims=keepdims), xp.int64)


_arg_reduction("argmax")
_arg_reduction("argmin")


@_array_api_rule("argsort")
def _argsort(kind: ArrayKind):
    xp = kind.namespace
    # Stable both ways: equal values keep index order, as TF's DESCENDING (top_k) does.
    return lambda x, axis, kind, descending: xp.argsort(
        x, axis=axis, descending=descending, stable=True)


@_array_api_rule("argpartition")
def _argpartition(kind: ArrayKind):
    xp = kind.namespace
    # A full stable sort is a partition around every kth: the kth elements (all that
    # quantiles read) equal NumPy's; the order inside each part is unspecified in both.
    def argpartition(x, kth, axis):
        if axis is None:  # NumPy's: over the flattened array
            x, axis = xp.reshape(x, (-1,)), 0
        return xp.argsort(x, axis=axis, stable=True)
    return argpartition


@_array_api_rule("concatenate")
def _concatenate(kind: ArrayKind):
    xp = kind.namespace
    return lambda *xs, axis: xp.concat(list(xs), axis=axis)


@_array_api_rule("row_write")
def _row_write(kind: ArrayKind):
    from ..stacking import row_write_capacity

    xp = kind.namespace

    def row_write(buffer, index, value, grow=False):
        rows, rest = buffer.shape[0], tuple(buffer.shape[1:])
        i, capacity = row_write_capacity(rows, index, grow)
        if capacity > rows:
            buffer = xp.concat([buffer, xp.zeros((capacity - rows,) + rest,
                                                 dtype=buffer.dtype)], axis=0)
        row = xp.reshape(xp.asarray(value, dtype=buffer.dtype), (1,) + rest)
        return xp.concat([buffer[:i, ...], row, buffer[i + 1:, ...]], axis=0)  # no setitem
    return row_write


@_array_api_rule("pad")
def _pad(kind: ArrayKind):
    xp = kind.namespace

    def pad(x, pad_width, value):
        for axis, (before, after) in enumerate(pad_width):
            parts = [xp.full(_with_shape(tuple(x.shape), axis, n), _scalar(value),
                             dtype=x.dtype) for n in (before, after)]
            if before or after:
                x = xp.concat([parts[0], x, parts[1]], axis=axis)
        return x
    return pad


def _band(name: str, keep) -> None:
    """``tril``/``triu``: a mask of the last two axes' indices, no in-place writes."""

    @_array_api_rule(name)
    def rule(kind: ArrayKind):
        xp = kind.namespace

        def band(x, k):
            rows = xp.arange(x.shape[-2])[:, None]
            cols = xp.arange(x.shape[-1])[None, :]
            return xp.where(keep(cols - rows, k), x, xp.zeros_like(x))
        return band


_band("tril", lambda offset, k: offset <= k)
_band("triu", lambda offset, k: offset >= k)


@_array_api_rule("one_hot")
def _one_hot(kind: ArrayKind):
    xp = kind.namespace

    def one_hot(indices, depth, on_value, off_value, axis, dtype):
        hot = xp.expand_dims(indices, axis=-1) == xp.arange(depth, dtype=indices.dtype)
        ours = kind.dtype(dtype)
        out = xp.where(hot, xp.asarray(_scalar(on_value), dtype=ours),
                       xp.asarray(_scalar(off_value), dtype=ours))
        if axis == -1 or axis == out.ndim - 1:
            return out
        axes = list(range(out.ndim - 1))
        axes.insert(axis, out.ndim - 1)
        return xp.permute_dims(out, tuple(axes))
    return one_hot


@_array_api_rule("class_labels")
def _class_labels(kind: ArrayKind):
    xp = kind.namespace

    def class_labels(labels, depth):
        if labels.size and (bool(xp.min(labels) < 0) or bool(xp.max(labels) >= depth)):
            from ...core.backends import to_numpy
            from ..nn import _class_labels_impl

            _class_labels_impl(to_numpy(labels), depth)  # raises TF's error
        return labels
    return class_labels
