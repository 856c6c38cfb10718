"""The NumPy kernels of ``conv_general``: im2col (strided windows and one ``matmul``),
col2im (one ``matmul`` and a strided accumulation per kernel offset) and window sums
(one ``matmul`` per output position, for kernel gradients).

Layouts are channels-last throughout: ``lhs`` is ``(N, *spatial, C)``, ``rhs`` is
``(*window, C // feature_groups, O)``, the output ``(N // batch_groups, *out, O)``.
Feature groups split ``C`` and ``O`` into contiguous blocks; batch groups split ``N``
and ``O`` into contiguous blocks (the kernel gradient of a grouped convolution).
"""

from __future__ import annotations

import itertools

import numpy as np


def dilated(size: int, dilation: int) -> int:
    """The extent of ``size`` elements spread ``dilation`` apart (0 stays 0)."""
    return 0 if size == 0 else (size - 1) * dilation + 1


def out_spatial(in_shape, window, strides, padding, lhs_dilation, rhs_dilation) -> tuple:
    """The output extent per spatial axis (0 where the window does not fit)."""
    out = []
    for size, k, s, (lo, hi), ld, rd in zip(in_shape, window, strides, padding,
                                            lhs_dilation, rhs_dilation):
        room = dilated(size, ld) + lo + hi - dilated(k, rd)
        out.append(0 if room < 0 else room // s + 1)
    return tuple(out)


def _dilate_and_pad(x, padding, lhs_dilation):
    """``x`` spread by ``lhs_dilation`` and padded with zeros (negative pads crop)."""
    if all(d == 1 for d in lhs_dilation) and all(lo == 0 and hi == 0 for lo, hi in padding):
        return x
    spatial = x.shape[1:-1]
    grown = [dilated(n, d) + max(lo, 0) + max(hi, 0)
             for n, d, (lo, hi) in zip(spatial, lhs_dilation, padding)]
    full = np.zeros((x.shape[0], *grown, x.shape[-1]), x.dtype)
    place = tuple(slice(max(lo, 0), max(lo, 0) + dilated(n, d), d)
                  for n, d, (lo, _) in zip(spatial, lhs_dilation, padding))
    full[(slice(None), *place, slice(None))] = x
    crop = tuple(slice(max(-lo, 0), g - max(-hi, 0)) for g, (lo, hi) in zip(grown, padding))
    return full[(slice(None), *crop, slice(None))]


def _windows(xp, window, out, strides, rhs_dilation):
    """The view ``(N, *out, *window, C)`` of ``xp``'s receptive fields (no copy)."""
    st = xp.strides
    spatial_strides = st[1:-1]
    shape = (xp.shape[0], *out, *window, xp.shape[-1])
    view_strides = (st[0], *(a * s for a, s in zip(spatial_strides, strides)),
                    *(a * d for a, d in zip(spatial_strides, rhs_dilation)), st[-1])
    return np.lib.stride_tricks.as_strided(xp, shape, view_strides, writeable=False)


def im2col_conv(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation,
                feature_groups, batch_groups):
    """Every receptive field copied into one matrix row, then one (batched) ``matmul``."""
    window = rhs.shape[:-2]
    out = out_spatial(lhs.shape[1:-1], window, strides, padding, lhs_dilation, rhs_dilation)
    dtype = np.result_type(lhs.dtype, rhs.dtype)
    n, c, o = lhs.shape[0], lhs.shape[-1], rhs.shape[-1]
    n_out = n // batch_groups
    if 0 in out or 0 in window or n_out == 0 or c == 0:
        base = np.zeros((n_out, *out, o), dtype)
        return base
    xp = _dilate_and_pad(lhs, padding, lhs_dilation)
    cols = _windows(xp, window, out, strides, rhs_dilation)
    rows, taps = int(np.prod(out)), int(np.prod(window))
    if feature_groups == 1 and batch_groups == 1:
        y = cols.reshape(n * rows, taps * c) @ rhs.reshape(taps * c, o)
        return y.reshape(n, *out, o)
    if feature_groups > 1:
        g = feature_groups
        cg = c // g
        grouped = cols.reshape(n * rows, taps, g, cg).transpose(2, 0, 1, 3)
        kernel = rhs.reshape(taps, cg, g, o // g).transpose(2, 0, 1, 3)
        y = grouped.reshape(g, n * rows, taps * cg) @ kernel.reshape(g, taps * cg, o // g)
        return y.transpose(1, 0, 2).reshape(n, *out, o)
    b = batch_groups
    grouped = cols.reshape(b, n_out * rows, taps * c)
    kernel = rhs.reshape(taps * c, b, o // b).transpose(1, 0, 2)
    y = grouped @ kernel
    return y.transpose(1, 0, 2).reshape(n_out, *out, o)


def _scatter_range(k: int, size_in: int, size_out: int, lo: int, s: int, d: int):
    """For kernel tap ``k``: input positions ``i`` landing at ``p = lo + i*s - k*d``
    inside ``[0, size_out)``, as (input slice, output slice)."""
    first = max(0, -((lo - k * d) // s))  # ceil((k*d - lo) / s)
    last = min(size_in, -((lo - k * d - size_out) // s))  # ceil((size_out - lo + k*d) / s)
    if last <= first:
        return None
    start = lo + first * s - k * d
    return slice(first, last), slice(start, start + (last - first - 1) * s + 1, s)


def col2im_conv(lhs, rhs, padding, lhs_dilation, rhs_dilation, feature_groups):
    """A unit-stride convolution of an ``lhs_dilation``-spread input (a transposed
    convolution) without the zeros: each input position times the kernel, one
    ``matmul``, then each kernel tap's products added into a strided output slice."""
    window = rhs.shape[:-2]
    spatial = lhs.shape[1:-1]
    ones = (1,) * len(window)
    out = out_spatial(spatial, window, ones, padding, lhs_dilation, rhs_dilation)
    dtype = np.result_type(lhs.dtype, rhs.dtype)
    n, c, o = lhs.shape[0], lhs.shape[-1], rhs.shape[-1]
    result = np.zeros((n, *out, o), dtype)
    if 0 in out or 0 in window or n == 0 or c == 0 or 0 in spatial:
        return result
    taps = int(np.prod(window))
    rows = n * int(np.prod(spatial))
    g = feature_groups
    cg, og = c // g, o // g
    # products[n, *spatial, tap, o] = lhs[n, *spatial, group(o)] @ rhs[tap, :, o]
    kernel = rhs.reshape(taps, cg, g, og).transpose(2, 1, 0, 3).reshape(g, cg, taps * og)
    grouped = lhs.reshape(rows, g, cg).transpose(1, 0, 2)
    products = (grouped @ kernel).reshape(g, rows, taps, og).transpose(1, 2, 0, 3)
    products = products.reshape(n, *spatial, taps, o)
    for tap, offset in enumerate(itertools.product(*(range(k) for k in window))):
        ranges = [_scatter_range(k, size, size_out, lo, s, d)
                  for k, size, size_out, (lo, _), s, d in
                  zip(offset, spatial, out, padding, lhs_dilation, rhs_dilation)]
        if any(r is None for r in ranges):
            continue
        src = (slice(None), *(r[0] for r in ranges), tap, slice(None))
        dst = (slice(None), *(r[1] for r in ranges), slice(None))
        result[dst] += products[src]
    return result


def window_sums(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation):
    """Few output positions under a large window (the kernel gradient: the input
    convolved with the cotangent): one ``matmul`` per output position, over the input
    with batch and channels swapped back, which is how the gradient's transposes found
    it in memory (contiguous)."""
    nd = lhs.ndim - 2
    window = rhs.shape[:-2]
    out = out_spatial(lhs.shape[1:-1], window, strides, padding, lhs_dilation, rhs_dilation)
    b, o = lhs.shape[0], rhs.shape[-1]
    swapped = _dilate_and_pad(lhs.transpose(nd + 1, *range(1, nd + 1), 0), padding,
                              lhs_dilation)                            # (c, *padded, b)
    kernel = rhs.transpose(nd, *range(nd), nd + 1).reshape(-1, o)       # (c * taps, o)
    result = np.empty((b, *out, o), np.result_type(lhs.dtype, rhs.dtype))
    for position in itertools.product(*(range(n) for n in out)):
        field = tuple(slice(p * s, p * s + dilated(k, d), d)
                      for p, s, k, d in zip(position, strides, window, rhs_dilation))
        patch = swapped[(slice(None), *field, slice(None))].reshape(-1, b)
        result[(slice(None), *position, slice(None))] = patch.T @ kernel
    return result


def conv_general_impl(lhs, rhs, *, strides, padding, lhs_dilation, rhs_dilation,
                      feature_group_count, batch_group_count):
    """The convolution by the kernel that does least work for its shape (measured:
    docs/performance.md): col2im for a unit-stride convolution that grows its input
    (an input gradient, a transposed convolution: it skips the spread input's zeros),
    one ``matmul`` per output position when the window is larger than the output (a
    kernel gradient), else im2col."""
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    spatial, window = lhs.shape[1:-1], rhs.shape[:-2]
    out = out_spatial(spatial, window, strides, padding, lhs_dilation, rhs_dilation)
    if all(s == 1 for s in strides) and batch_group_count == 1 and (
            any(d > 1 for d in lhs_dilation) or np.prod(out) > np.prod(spatial)):
        return col2im_conv(lhs, rhs, padding, lhs_dilation, rhs_dilation,
                           feature_group_count)
    if (feature_group_count == batch_group_count == 1 and 0 < np.prod(out) < np.prod(window)
            and lhs.size and rhs.size):
        return window_sums(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation)
    return im2col_conv(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation,
                       feature_group_count, batch_group_count)
