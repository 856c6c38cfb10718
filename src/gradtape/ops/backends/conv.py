"""``conv_general`` (``ops/conv``) on other array kinds: on Dask, chunk-wise along the
batch; on CuPy refused clearly (its kernels make NumPy strided views and buffers);
array-API libraries refuse it by the general rule (no standard equivalent)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.backends import ArrayKind
from ..conv.kernels import conv_general_impl, out_spatial
from .rules import namespace_rule, unsupported

DASK = "dask.array"
# The partial results per chunk of channels are summed in a tree of this fan-in: no task
# reads more than four of them, however many chunks the batch has.
_FAN_IN = 4


@namespace_rule("conv_general", library=DASK)
def _conv_general(kind: ArrayKind):
    """Chunk-wise along the batch axis: each chunk of the input is convolved with the
    whole kernel. The spatial axes of the input become one chunk (a window crosses
    them). A convolution sums over the input channels, so chunked channels (the batch,
    in a kernel gradient) stay chunked: one partial result per chunk, summed by a tree
    reduction. Batch or feature groups (a grouped kernel gradient) need the whole
    batch and channels, so one chunk."""
    da = kind.namespace

    def run(lhs, rhs, **params):
        lhs, rhs = da.asarray(lhs), da.asarray(rhs)
        nd = lhs.ndim - 2
        batch_groups = params["batch_group_count"]
        split = (batch_groups == 1 and params["feature_group_count"] == 1
                 and lhs.numblocks[-1] > 1)
        lhs = lhs.rechunk({i: -1 for i in range(0 if batch_groups > 1 else 1,
                                                 lhs.ndim - split)})
        rhs = rhs.rechunk({i: lhs.chunks[-1] if split and i == nd else -1
                           for i in range(rhs.ndim)})
        out = out_spatial(lhs.shape[1:-1], rhs.shape[:-2], params["strides"],
                          params["padding"], params["lhs_dilation"], params["rhs_dilation"])
        spatial_in, window, spatial_out = "pqr"[:nd], "klm"[:nd], "PQR"[:nd]
        dtype = np.result_type(lhs.dtype, rhs.dtype)
        if split:
            def partial(x, w):  # this chunk of channels' share, on a new leading axis
                return conv_general_impl(x, w, **params)[None]

            partials = da.blockwise(
                partial, "c" + "n" + spatial_out + "o", lhs, "n" + spatial_in + "c",
                rhs, window + "co", new_axes=dict(zip(spatial_out, out)), concatenate=True,
                adjust_chunks={"c": 1}, dtype=dtype)
            return partials.sum(axis=0, dtype=dtype, split_every=_FAN_IN)

        def block(x, w):
            return conv_general_impl(x, w, **params)

        return da.blockwise(
            block, "n" + spatial_out + "o", lhs, "n" + spatial_in + "c",
            rhs, window + "io", new_axes=dict(zip(spatial_out, out)), concatenate=True,
            adjust_chunks={"n": lambda n: n // batch_groups}, dtype=dtype)
    return run


@namespace_rule("conv_general", library="cupy")
def _conv_general_on_cupy(kind: ArrayKind):
    def refuse(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            "gradtape's convolutions (tf.nn.conv2d and its family) do not run on cupy "
            "arrays yet: their kernels make NumPy strided views. Bring the input to the "
            "host with .numpy() first.")
    return unsupported(refuse)
