"""N-d convolution: one primitive, ``convolve`` in ``'full'`` or ``'valid'`` mode over
the trailing axes (leading ``batch_dims`` axes are mapped, for the batching rule), with
``scipy.signal``'s ``convolve``/``correlate`` and NumPy's 1-d ``np.convolve`` and
``np.correlate`` built on it (``'same'`` is a centred slice of ``'full'``).

Rules: the VJP of a convolution is a correlation with the other input (a convolution
with it flipped and conjugated, TF's complex convention), in the other mode; the JVP is
the same bilinear convolution of the tangents.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.nodes import Aval
from . import elementwise as _ew
from . import index as _index
from . import reduce as _reduce
from . import shape as _shape
from .arrange import flip
from .numpy_dispatch import implements
from .registry import EVERY_INPUT, Primitive, bind, operand, per_primitive

__all__: list[str] = []

_MODES = ("full", "valid", "same")


def _einsum_subscripts(batch_dims: int, spatial: int) -> str:
    """``windows, kernel -> out`` for batch letters, output letters, kernel letters."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    b = letters[:batch_dims]
    o = letters[batch_dims:batch_dims + spatial]
    k = letters[batch_dims + spatial:batch_dims + 2 * spatial]
    return f"{b}{o}{k},{b}{k}->{b}{o}"


def _convolve_impl(x, k, mode, batch_dims):
    x, k = np.asarray(x), np.asarray(k)
    batch = np.broadcast_shapes(x.shape[:batch_dims], k.shape[:batch_dims])
    x = np.broadcast_to(x, batch + x.shape[batch_dims:])
    k = np.broadcast_to(k, batch + k.shape[batch_dims:])
    kernel_shape = k.shape[batch_dims:]
    if mode == "full":
        x = np.pad(x, [(0, 0)] * batch_dims + [(n - 1, n - 1) for n in kernel_shape])
    spatial = tuple(range(batch_dims, x.ndim))
    windows = np.lib.stride_tricks.sliding_window_view(x, kernel_shape, axis=spatial)
    flipped = k[(slice(None),) * batch_dims + (slice(None, None, -1),) * len(spatial)]
    dtype = np.result_type(x.dtype, k.dtype)
    if batch_dims == 0:  # one BLAS product of the windows with the flipped kernel
        return np.asarray(np.tensordot(windows, flipped, len(spatial)), dtype)
    return np.einsum(_einsum_subscripts(batch_dims, len(spatial)), windows, flipped,
                     optimize=True).astype(dtype, copy=False)


def _convolve_shape(x, k, mode, batch_dims):
    batch = np.broadcast_shapes(tuple(x.shape[:batch_dims]), tuple(k.shape[:batch_dims]))
    sx, sk = x.shape[batch_dims:], k.shape[batch_dims:]
    sign = 1 if mode == "full" else -1
    spatial = tuple(a + sign * (b - 1) for a, b in zip(sx, sk))
    return Aval(tuple(batch) + spatial, np.result_type(x.dtype, k.dtype))


def _flip_conj(x, batch_dims):
    """``x`` reversed along its convolved axes, conjugated: the kernel of a correlation."""
    return _ew.conj(flip(x, tuple(range(batch_dims, len(x.shape)))))


def _cotangent_for(grad, x):
    """``grad`` summed over broadcast batch dims to ``x``'s shape; real for a real ``x``."""
    if np.issubdtype(grad.dtype, np.complexfloating) and \
            not np.issubdtype(x.dtype, np.complexfloating):
        grad = _ew.real(grad)
    return _shape.unbroadcast(grad, x.shape)


def _convolve_vjp(g, y, x, k, mode, batch_dims):
    if mode == "full":
        gx = _convolve(g, _flip_conj(k, batch_dims), "valid", batch_dims)
        gk = _convolve(g, _flip_conj(x, batch_dims), "valid", batch_dims)
    else:
        gx = _convolve(g, _flip_conj(k, batch_dims), "full", batch_dims)
        gk = _convolve(_flip_conj(x, batch_dims), g, "valid", batch_dims)
    return _cotangent_for(gx, x), _cotangent_for(gk, k)


def _convolve_jvp(ts, y, x, k, mode, batch_dims):
    tx, tk = ts
    parts = []
    if tx is not None:
        parts.append(_convolve(tx, k, mode, batch_dims))
    if tk is not None:
        parts.append(_convolve(x, tk, mode, batch_dims))
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


def _convolve_batch(prim):
    """The batch axis becomes one more mapped leading axis; an unbatched input gets a
    size-1 one (the impl broadcasts batch dims)."""
    def rule(size, args, batched, mode, batch_dims):
        lined = [a if f else _shape.reshape(a, (1,) + tuple(a.shape))
                 for a, f in zip(args, batched)]
        return bind(prim, *lined, mode=mode, batch_dims=batch_dims + 1)

    return rule


convolve_p = Primitive(
    "convolve", _convolve_impl,
    vjp=_convolve_vjp, jvp=_convolve_jvp, shape_rule=_convolve_shape,
    batch=per_primitive(_convolve_batch), same_dtype=EVERY_INPUT,
)


def _convolve(x, k, mode: str, batch_dims: int = 0):
    return bind(convolve_p, x, k, mode=mode, batch_dims=batch_dims)


def _centered(full, shape: tuple[int, ...]):
    """The middle ``shape`` of ``full`` (SciPy's ``_centered``: the start rounds down)."""
    index = tuple(("slice", (n - m) // 2, (n - m) // 2 + m, None)
                  for n, m in zip(full.shape, shape))
    return bind(_index.getitem_p, full, index=index)


def _check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"Acceptable mode flags are 'valid', 'same', or 'full'; got {mode!r}.")


def convolve_nd(in1: Any, in2: Any, mode: str = "full") -> Any:
    """``scipy.signal.convolve(in1, in2, mode)`` over every axis (both of one rank)."""
    _check_mode(mode)
    in1, in2 = operand(in1), operand(in2)
    s1, s2 = tuple(in1.shape), tuple(in2.shape)
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if not s1:
        return in1 * in2
    if 0 in s1 or 0 in s2:
        raise ValueError("convolve of an empty array: SciPy returns an empty array, "
                         "gradtape needs non-empty inputs.")
    if mode == "valid":
        if all(a >= b for a, b in zip(s2, s1)) and s1 != s2:
            in1, in2 = in2, in1  # convolution commutes: SciPy swaps them too
        elif not all(a >= b for a, b in zip(s1, s2)):
            raise ValueError("For 'valid' mode, one must be at least as large as the "
                             "other in every dimension")
        return _convolve(in1, in2, "valid")
    full = _convolve(in1, in2, "full")
    return full if mode == "full" else _centered(full, s1)


def _axis_list(axes, ndim: int) -> list[int]:
    return [int(a) % ndim if ndim else int(a) for a in axes]


def _grouped(x, dot: list[int], conv: list[int], ignored_slot: int):
    """``x`` as ``(dot, ignored_1, ignored_2, conv...)``: its dot axes flattened into
    one, its other non-convolved axes into ``ignored_slot`` (1 or 2, the other slot
    size 1, so that both inputs' ignored axes make an outer product)."""
    ignored = [i for i in range(len(x.shape)) if i not in dot and i not in conv]
    moved = _shape.transpose(x, tuple(dot + ignored + conv))
    size = int(np.prod([x.shape[i] for i in ignored], dtype=np.int64))
    slots = (size, 1) if ignored_slot == 1 else (1, size)
    dot_size = int(np.prod([x.shape[i] for i in dot], dtype=np.int64))
    grouped = _shape.reshape(moved, (dot_size,) + slots + tuple(x.shape[i] for i in conv))
    return grouped, tuple(x.shape[i] for i in ignored)


def convolve_axes(in1: Any, in2: Any, axes: Any, dot_axes: Any = ((), ()),
                  mode: str = "full") -> Any:
    """Convolution over the paired ``axes`` (``([axes of in1], [axes of in2])``), a
    tensor contraction over the paired ``dot_axes``, and an outer product over every other
    axis. The result's axes: ``in1``'s other axes, then ``in2``'s, then the convolved
    ones (autograd's generalization of ``scipy.signal.convolve``)."""
    _check_mode(mode)
    in1, in2 = operand(in1), operand(in2)
    conv1, conv2 = (_axis_list(a, len(x.shape)) for a, x in zip(axes, (in1, in2)))
    dot1, dot2 = (_axis_list(a, len(x.shape)) for a, x in zip(dot_axes, (in1, in2)))
    if len(conv1) != len(conv2) or len(dot1) != len(dot2):
        raise ValueError("convolve: axes and dot_axes must pair the axes of in1 with as "
                         "many axes of in2.")
    if any(in1.shape[a] != in2.shape[b] for a, b in zip(dot1, dot2)):
        raise ValueError("convolve: the dot_axes of in1 and in2 must have equal sizes.")
    s1 = tuple(in1.shape[a] for a in conv1)
    s2 = tuple(in2.shape[b] for b in conv2)
    x, ignored1 = _grouped(in1, dot1, conv1, 1)
    k, ignored2 = _grouped(in2, dot2, conv2, 2)
    if mode == "valid":
        if all(a >= b for a, b in zip(s2, s1)) and s1 != s2:
            x, k = k, x  # convolution commutes; the batch layout keeps in1's axes first
        elif not all(a >= b for a, b in zip(s1, s2)):
            raise ValueError("For 'valid' mode, one must be at least as large as the "
                             "other in every dimension")
        out = _convolve(x, k, "valid", 3)
    else:
        out = _convolve(x, k, "full", 3)
        if mode == "same":
            out = _centered(out, tuple(out.shape[:3]) + s1)
    summed = _reduce.sum(out, 0)
    return _shape.reshape(summed, ignored1 + ignored2 + tuple(summed.shape[2:]))


def correlate_nd(in1: Any, in2: Any, mode: str = "full") -> Any:
    """``scipy.signal.correlate``: the convolution with ``in2`` flipped and conjugated."""
    in2 = operand(in2)
    return convolve_nd(in1, _flip_conj(in2, 0), mode)


def _numpy_1d(a, v, name: str):
    a, v = operand(a), operand(v)
    if len(a.shape) > 1 or len(v.shape) > 1:
        raise ValueError(f"np.{name}: object too deep for desired array")
    if len(a.shape) == 0:
        a = _shape.reshape(a, (1,))
    if len(v.shape) == 0:
        v = _shape.reshape(v, (1,))
    if a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    return a, v


@implements(np.convolve)
def numpy_convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """``np.convolve``: 1-d; the longer input comes first, so ``'same'`` has its length."""
    _check_mode(mode)
    a, v = _numpy_1d(a, v, "convolve")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    return convolve_nd(a, v, mode)


@implements(np.correlate)
def numpy_correlate(a: Any, v: Any, mode: str = "valid") -> Any:
    """``np.correlate``: ``c[k] = sum_n a[n + k] * conj(v[n])`` (NumPy's default 'valid')."""
    _check_mode(mode)
    a, v = _numpy_1d(a, v, "correlate")
    if v.shape[0] > a.shape[0]:
        # NumPy correlates the longer first and reverses (and conjugates) the result.
        return _flip_conj(numpy_convolve(v, _flip_conj(a, 0), mode), 0)
    return convolve_nd(a, _flip_conj(v, 0), mode)
