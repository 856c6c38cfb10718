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


@namespace_rule("conv_general", library=DASK)
def _conv_general(kind: ArrayKind):
    """Chunk-wise along the batch axis: each chunk of the input is convolved with the
    whole kernel. The other axes of the input become one chunk (a window crosses them);
    batch groups (a grouped kernel gradient) need the whole batch, so one chunk."""
    da = kind.namespace

    def run(lhs, rhs, **params):
        lhs, rhs = da.asarray(lhs), da.asarray(rhs)
        nd = lhs.ndim - 2
        batch_groups = params["batch_group_count"]
        lhs = lhs.rechunk({i: -1 for i in range(0 if batch_groups > 1 else 1, lhs.ndim)})
        rhs = rhs.rechunk(-1)
        out = out_spatial(lhs.shape[1:-1], rhs.shape[:-2], params["strides"],
                          params["padding"], params["lhs_dilation"], params["rhs_dilation"])
        spatial_in, window, spatial_out = "pqr"[:nd], "klm"[:nd], "PQR"[:nd]

        def block(x, w):
            return conv_general_impl(x, w, **params)

        return da.blockwise(
            block, "n" + spatial_out + "o", lhs, "n" + spatial_in + "c",
            rhs, window + "io", new_axes=dict(zip(spatial_out, out)), concatenate=True,
            adjust_chunks={"n": lambda n: n // batch_groups},
            dtype=np.result_type(lhs.dtype, rhs.dtype))
    return run


@namespace_rule("conv_general", library="cupy")
def _conv_general_on_cupy(kind: ArrayKind):
    def refuse(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            "gradtape's convolutions (tf.nn.conv2d and its family) do not run on cupy "
            "arrays yet: their kernels make NumPy strided views. Bring the input to the "
            "host with .numpy() first.")
    return unsupported(refuse)
