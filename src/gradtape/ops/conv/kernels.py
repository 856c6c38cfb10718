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


# Window rows (im2col's matrix, col2im's products) are built this many bytes at a time: a
# 3x3 convolution's whole window matrix is 9x its input, a block of it stays in cache, and
# one matmul per block runs as fast as one over all rows (docs/performance.md, issue [6/6]).
BLOCK_BYTES = 1 << 22


def _image_blocks(n: int, image_bytes: int):
    """Batch slices of as many whole images as fit in ``BLOCK_BYTES`` (at least one)."""
    images = max(1, BLOCK_BYTES // max(image_bytes, 1))
    return [slice(start, min(n, start + images)) for start in range(0, n, images)]


def _slabs(out: tuple, row_bytes: int):
    """Slices along the first output axis of one image whose rows fit in ``BLOCK_BYTES``
    (every row of the image in one slice when it fits, or without spatial axes)."""
    if not out:
        return [()]
    per_line = int(np.prod(out[1:])) * row_bytes
    lines = max(1, BLOCK_BYTES // max(per_line, 1))
    return [(slice(start, min(out[0], start + lines)),) for start in range(0, out[0], lines)]


def im2col_conv(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation,
                feature_groups, batch_groups):
    """Receptive fields copied into matrix rows, then a (batched) ``matmul``: a block of
    images at a time (each padded on its own), or of one image's rows when it is larger
    than a block, each block's product written into its rows of the output."""
    window = rhs.shape[:-2]
    out = out_spatial(lhs.shape[1:-1], window, strides, padding, lhs_dilation, rhs_dilation)
    dtype = np.result_type(lhs.dtype, rhs.dtype)
    n, c, o = lhs.shape[0], lhs.shape[-1], rhs.shape[-1]
    n_out = n // batch_groups
    if 0 in out or 0 in window or n_out == 0 or c == 0:
        base = np.zeros((n_out, *out, o), dtype)
        return base
    rows, taps = int(np.prod(out)), int(np.prod(window))
    if batch_groups > 1:  # a kernel gradient's few output rows: one block
        cols = _windows(_dilate_and_pad(lhs, padding, lhs_dilation), window, out, strides,
                        rhs_dilation)
        b = batch_groups
        grouped = cols.reshape(b, n_out * rows, taps * c)
        kernel = rhs.reshape(taps * c, b, o // b).transpose(1, 0, 2)
        y = grouped @ kernel
        return y.transpose(1, 0, 2).reshape(n_out, *out, o)
    g = feature_groups
    cg = c // g
    if g == 1:
        kernel = rhs.reshape(taps * c, o)
    else:
        kernel = rhs.reshape(taps, cg, g, o // g).transpose(2, 0, 1, 3).reshape(
            g, taps * cg, o // g)
    y = np.empty((n, *out, o), dtype)
    row_bytes = taps * c * lhs.itemsize
    slabs = _slabs(out, row_bytes)
    for images in _image_blocks(n, rows * row_bytes):
        cols = _windows(_dilate_and_pad(lhs[images], padding, lhs_dilation), window, out,
                        strides, rhs_dilation)
        for image in range(cols.shape[0]) if len(slabs) > 1 else [slice(None)]:
            for slab in slabs:
                field = cols[(image, *slab)]
                into = y[images][(image, *slab)].reshape(-1, o)
                if g == 1:
                    np.matmul(field.reshape(-1, taps * c), kernel, out=into)
                    continue
                grouped = field.reshape(-1, taps, g, cg).transpose(2, 0, 1, 3)
                into[...] = (grouped.reshape(g, -1, taps * cg) @ kernel).transpose(
                    1, 0, 2).reshape(-1, o)
    return y


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
    g = feature_groups
    cg, og = c // g, o // g
    kernel = rhs.reshape(taps, cg, g, og).transpose(2, 1, 0, 3).reshape(g, cg, taps * og)
    scatters = []
    for offset in itertools.product(*(range(k) for k in window)):
        ranges = [_scatter_range(k, size, size_out, lo, s, d)
                  for k, size, size_out, (lo, _), s, d in
                  zip(offset, spatial, out, padding, lhs_dilation, rhs_dilation)]
        scatters.append(None if any(r is None for r in ranges) else ranges)
    # Whole images a block at a time: each tap's products land in their own images.
    for images in _image_blocks(n, int(np.prod(spatial)) * taps * o * lhs.itemsize):
        part = lhs[images]
        m = part.shape[0]
        rows = m * int(np.prod(spatial))
        # products[n, *spatial, tap, o] = lhs[n, *spatial, group(o)] @ rhs[tap, :, o]
        grouped = part.reshape(rows, g, cg).transpose(1, 0, 2)
        products = (grouped @ kernel).reshape(g, rows, taps, og).transpose(1, 2, 0, 3)
        products = products.reshape(m, *spatial, taps, o)
        into = result[images]
        for tap, ranges in enumerate(scatters):
            if ranges is None:
                continue
            src = (slice(None), *(r[0] for r in ranges), tap, slice(None))
            dst = (slice(None), *(r[1] for r in ranges), slice(None))
            into[dst] += products[src]
    return result


def window_sums(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation):
    """Few output positions under a large window (the kernel gradient: the input
    convolved with the cotangent): one ``matmul`` per output position, over the input
    with batch and channels swapped back, which is how the gradient's transposes found
    it in memory (contiguous). The contraction runs over the swapped input's leading
    axis (the images) a block of them at a time, each block padded on its own, so no
    copy is larger than a block (``BLOCK_BYTES``)."""
    nd = lhs.ndim - 2
    window = rhs.shape[:-2]
    out = out_spatial(lhs.shape[1:-1], window, strides, padding, lhs_dilation, rhs_dilation)
    b, o = lhs.shape[0], rhs.shape[-1]
    swapped = lhs.transpose(nd + 1, *range(1, nd + 1), 0)              # (c, *spatial, b)
    kernel = rhs.transpose(nd, *range(nd), nd + 1)                     # (c, *window, o)
    dtype = np.result_type(lhs.dtype, rhs.dtype)
    result = np.zeros((b, *out, o), dtype)
    positions = list(itertools.product(*(range(n) for n in out)))
    fields = [tuple(slice(p * s, p * s + dilated(k, d), d)
                    for p, s, k, d in zip(position, strides, window, rhs_dilation))
              for position in positions]
    image_bytes = int(np.prod(window)) * b * lhs.itemsize
    for images in _image_blocks(swapped.shape[0], image_bytes):
        padded = _dilate_and_pad(swapped[images], padding, lhs_dilation)
        weights = kernel[images].reshape(-1, o)
        for position, field in zip(positions, fields):
            patch = padded[(slice(None), *field, slice(None))].reshape(-1, b)
            result[(slice(None), *position, slice(None))] += patch.T @ weights
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
