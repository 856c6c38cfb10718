"""``conv_general``: the one convolution primitive, closed under differentiation.

Like XLA's ``ConvGeneralDilated`` (and ``jax.lax.conv_general_dilated``): window
strides, explicit (possibly negative) padding, input (``lhs``) dilation, kernel
(``rhs``) dilation, feature groups and batch groups, channels-last. Its input VJP is a
convolution of the cotangent with the flipped kernel (input and window dilation swapped
with the strides); its kernel VJP is a convolution of the input, batch and channels
swapped, with the cotangent as the kernel. Both are ``conv_general`` again, so every
order of derivative stays in the family (a WGAN-GP penalty differentiates a gradient).
"""

from __future__ import annotations

import numpy as np

from ...ir.nodes import Aval
from .. import arrange as _arrange
from .. import shape as _shape
from ..registry import Primitive, bind
from .kernels import conv_general_impl, dilated, out_spatial


def _shape_rule(lhs, rhs, *, strides, padding, lhs_dilation, rhs_dilation,
                feature_group_count, batch_group_count):
    out = out_spatial(tuple(lhs.shape[1:-1]), tuple(rhs.shape[:-2]), strides, padding,
                      lhs_dilation, rhs_dilation)
    dtype = np.result_type(lhs.dtype, rhs.dtype)
    return Aval((lhs.shape[0] // batch_group_count, *out, rhs.shape[-1]), dtype)


def conv_general(lhs, rhs, *, strides, padding, lhs_dilation=None, rhs_dilation=None,
                 feature_group_count=1, batch_group_count=1):
    """``conv_general`` on channels-last operands (``padding``: one (lo, hi) per axis)."""
    n = len(strides)
    return bind(conv_general_p, lhs, rhs, strides=tuple(int(s) for s in strides),
                padding=tuple((int(lo), int(hi)) for lo, hi in padding),
                lhs_dilation=tuple(lhs_dilation or (1,) * n),
                rhs_dilation=tuple(rhs_dilation or (1,) * n),
                feature_group_count=int(feature_group_count),
                batch_group_count=int(batch_group_count))


def _spatial_axes(ndim: int, first: int) -> tuple[int, ...]:
    return tuple(range(first, first + ndim))


def _vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation,
                     rhs_dilation):
    pads = []
    for size, k, s, o, (lo, _), ld, rd in zip(in_shape, window, strides, out_shape, padding,
                                              lhs_dilation, rhs_dilation):
        before = dilated(k, rd) - lo - 1
        after = dilated(size, ld) + dilated(k, rd) - 1 - dilated(o, s) - before
        pads.append((before, after))
    return tuple(pads)


def _vjp_rhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation,
                     rhs_dilation):
    pads = []
    for size, k, s, o, (lo, _), ld, rd in zip(in_shape, window, strides, out_shape, padding,
                                              lhs_dilation, rhs_dilation):
        after = dilated(o, s) - dilated(size, ld) + dilated(k, rd) - lo - 1
        pads.append((lo, after))
    return tuple(pads)


def transpose_lhs(g, lhs_shape, rhs, strides, padding, lhs_dilation, rhs_dilation,
                  feature_group_count, batch_group_count):
    """The input cotangent (for an input of ``lhs_shape``): ``g`` convolved with the
    flipped kernel, its in/out channels swapped. A transposed convolution is this."""
    nd = len(strides)
    window = tuple(rhs.shape[:-2])
    ci, o = rhs.shape[-2], rhs.shape[-1]
    groups = max(feature_group_count, batch_group_count)
    # (*window, ci, groups, o/groups) -> (*window, o/groups, groups * ci)
    kernel = _shape.reshape(rhs, (*window, ci, groups, o // groups))
    kernel = _shape.transpose(kernel, (*range(nd), nd + 2, nd + 1, nd))
    kernel = _shape.reshape(kernel, (*window, o // groups, groups * ci))
    kernel = _arrange.flip(kernel, axis=_spatial_axes(nd, 0))
    pads = _vjp_lhs_padding(tuple(lhs_shape[1:-1]), window, strides, tuple(g.shape[1:-1]),
                            padding, lhs_dilation, rhs_dilation)
    out = conv_general(g, kernel, strides=lhs_dilation, padding=pads,
                       lhs_dilation=strides, rhs_dilation=rhs_dilation,
                       feature_group_count=groups)
    if batch_group_count > 1:  # (n/b, *s, b * c) -> (b * n/b, *s, c)
        b = batch_group_count
        nb, spatial, c = out.shape[0], tuple(out.shape[1:-1]), lhs_shape[-1]
        out = _shape.reshape(out, (nb, *spatial, b, c))
        out = _shape.transpose(out, (nd + 1, 0, *range(1, nd + 1), nd + 2))
        out = _shape.reshape(out, (b * nb, *spatial, c))
    return out


def transpose_rhs(g, lhs, window, strides, padding, lhs_dilation, rhs_dilation,
                  feature_group_count, batch_group_count):
    """The kernel cotangent: the input (batch and channels swapped) convolved with ``g``
    as the kernel (its batch as the kernel's input channels)."""
    nd = len(strides)
    lhs_t = _shape.transpose(lhs, (nd + 1, *range(1, nd + 1), 0))      # (C, *s, N)
    g_t = _shape.transpose(g, (*range(1, nd + 1), 0, nd + 1))          # (*out, N', O)
    pads = _vjp_rhs_padding(tuple(lhs.shape[1:-1]), window, strides, tuple(g.shape[1:-1]),
                            padding, lhs_dilation, rhs_dilation)
    out = conv_general(lhs_t, g_t, strides=rhs_dilation, padding=pads,
                       lhs_dilation=lhs_dilation, rhs_dilation=strides,
                       feature_group_count=batch_group_count,
                       batch_group_count=feature_group_count)          # (ci, *window, O)
    return _shape.transpose(out, (*range(1, nd + 1), 0, nd + 1))


def _vjp(g, y, lhs, rhs, **params):
    return (transpose_lhs(g, tuple(lhs.shape), rhs, **params),
            transpose_rhs(g, lhs, tuple(rhs.shape[:-2]), **params))


def _jvp(ts, y, lhs, rhs, **params):
    t_lhs, t_rhs = ts
    total = None
    if t_lhs is not None:
        total = bind(conv_general_p, t_lhs, rhs, **params)
    if t_rhs is not None:
        part = bind(conv_general_p, lhs, t_rhs, **params)
        total = part if total is None else total + part
    return total


def _batch(size, args, batched, **params):
    """The vmapped axis joins the batch (lhs), the output channels (rhs), or, both
    batched, becomes feature groups."""
    lhs, rhs = args
    nd = len(params["strides"])
    fg, bg = params["feature_group_count"], params["batch_group_count"]
    if batched[0] and batched[1]:
        if bg > 1:
            from ..batch_rules import batch_by_loop

            return batch_by_loop(conv_general_p, size, args, batched, **params)
        n, spatial, c = lhs.shape[1], tuple(lhs.shape[2:-1]), lhs.shape[-1]
        lhs = _shape.transpose(lhs, (*range(1, nd + 2), 0, nd + 2))
        lhs = _shape.reshape(lhs, (n, *spatial, size * c))
        rhs = _rhs_with_batch_in_outputs(rhs, size, nd, fg, batch_major=True)
        out = bind(conv_general_p, lhs, rhs, **{**params, "feature_group_count": size * fg})
        return _split_output_channels(out, size, nd, 1, batch_major=True)
    if batched[0]:
        n = lhs.shape[1]
        rest = tuple(lhs.shape[2:])
        if bg > 1:  # keep each batch group's rows together: (size, b, n/b) -> (b, size, n/b)
            lhs = _shape.reshape(lhs, (size, bg, n // bg, *rest))
            lhs = _shape.transpose(lhs, (1, 0, *range(2, nd + 4)))
        lhs = _shape.reshape(lhs, (size * n, *rest))
        out = bind(conv_general_p, lhs, rhs, **params)
        return _shape.reshape(out, (size, out.shape[0] // size, *tuple(out.shape[1:])))
    groups = max(fg, bg)
    rhs = _rhs_with_batch_in_outputs(rhs, size, nd, groups, batch_major=False)
    out = bind(conv_general_p, lhs, rhs, **params)
    return _split_output_channels(out, size, nd, groups, batch_major=False)


def _rhs_with_batch_in_outputs(rhs, size, nd, groups, batch_major):
    """``(size, *window, ci, o)`` -> ``(*window, ci, size*o)``, the vmapped axis inside
    each group's block of outputs (``batch_major``: outside the groups)."""
    window, ci, o = tuple(rhs.shape[1:-2]), rhs.shape[-2], rhs.shape[-1]
    rhs = _shape.reshape(rhs, (size, *window, ci, groups, o // groups))
    w = tuple(range(1, nd + 1))
    order = (*w, nd + 1, 0, nd + 2, nd + 3) if batch_major else (*w, nd + 1, nd + 2, 0, nd + 3)
    rhs = _shape.transpose(rhs, order)
    return _shape.reshape(rhs, (*window, ci, size * o))


def _split_output_channels(out, size, nd, groups, batch_major):
    """The inverse of ``_rhs_with_batch_in_outputs`` on the output: ``size`` to the front."""
    lead = tuple(out.shape[:-1])
    o = out.shape[-1] // size
    if batch_major:
        out = _shape.reshape(out, (*lead, size, o))
        return _shape.transpose(out, (nd + 1, *range(nd + 1), nd + 2))
    out = _shape.reshape(out, (*lead, groups, size, o // groups))
    out = _shape.transpose(out, (nd + 2, *range(nd + 1), nd + 1, nd + 3))
    return _shape.reshape(out, (size, *lead, o))


conv_general_p = Primitive(
    "conv_general", conv_general_impl, vjp=_vjp, jvp=_jvp, shape_rule=_shape_rule,
    batch=_batch,
    residuals=("in0", "in1"),  # each operand's cotangent reads the other; never the output
)
