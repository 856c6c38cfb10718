"""The window primitives (pooling, ``ops/pooling.py``; resizing, ``ops/image.py``) on
other array kinds.

On Dask, chunk-wise: they act on their spatial ``axes`` alone, so each block holding
those axes whole is pooled (or resized) by the NumPy implementation, one task a block,
along the batch and channel chunks. Lazy: nothing computes. On CuPy they are refused
clearly (their implementations fill NumPy buffers); array-API libraries refuse them by
the general rule (no standard equivalent of strided views)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.backends import ArrayKind
from .. import image as _image
from .. import pooling as _pooling
from .rules import namespace_rule, unsupported

DASK = "dask.array"


def _whole_along(x: Any, axes: tuple[int, ...], like: Any = None) -> Any:
    """``x`` with ``axes`` in one chunk (and the other axes chunked as ``like``)."""
    chunks: dict[int, Any] = {a: -1 for a in axes}
    if like is not None:
        chunks.update({a: like.chunks[a] for a in range(like.ndim) if a not in axes})
    return x.rechunk(chunks)


def _as_dask(kind: ArrayKind, x: Any) -> Any:
    return x if hasattr(x, "chunks") and hasattr(x, "dask") else kind.namespace.from_array(
        np.asarray(x))


def _blockwise(impl: Any, sizes_of: Any, dtype_of: Any, block_params: Any = None):
    """A rule running ``impl`` on each block: ``sizes_of(params, first)`` gives the
    output's size on each spatial axis; ``block_params`` adapts shape params per block."""
    def make(kind: ArrayKind):
        def run(*args: Any, **params: Any) -> Any:
            axes = params["axes"]
            first = _whole_along(_as_dask(kind, args[0]), axes)
            rest = [_whole_along(_as_dask(kind, a), axes, like=first) for a in args[1:]]
            sizes = sizes_of(params, first)
            chunks = tuple((sizes[axes.index(a)],) if a in axes else c
                           for a, c in enumerate(first.chunks))

            def on_block(*blocks: Any) -> Any:
                local = params if block_params is None else block_params(params, blocks[0])
                return impl(*blocks, **local)
            return kind.namespace.map_blocks(on_block, first, *rest, chunks=chunks,
                                             dtype=dtype_of(first))
        return run
    return make


def _pooled_sizes(params: dict, x: Any) -> list[int]:
    return [_pooling.output_size(x.shape[a], k, s, d, lo, hi) for a, k, s, d, (lo, hi)
            in zip(params["axes"], params["window"], params["strides"],
                   params["dilations"], params["pads"])]


def _input_sizes(params: dict, x: Any) -> list[int]:
    return [params["in_shape"][a] for a in params["axes"]]


def _resized_sizes(params: dict, x: Any) -> list[int]:
    return list(params["out_size"])


def _block_in_shape(params: dict, block: Any) -> dict:
    """``in_shape`` of one block: the block's own sizes off the spatial axes."""
    in_shape = tuple(n if a in params["axes"] else block.shape[a]
                     for a, n in enumerate(params["in_shape"]))
    return dict(params, in_shape=in_shape)


def _same_dtype(x: Any) -> Any:
    return x.dtype


def _register(name: str, impl: Any, sizes_of: Any, dtype_of: Any = _same_dtype,
              block_params: Any = None) -> None:
    namespace_rule(name, library=DASK)(_blockwise(impl, sizes_of, dtype_of, block_params))


_register("max_pool", _pooling._max_pool_impl, _pooled_sizes)
_register("avg_pool", _pooling._avg_pool_impl, _pooled_sizes)
_register("pool_argmax", _pooling._pool_argmax_impl, _pooled_sizes,
          dtype_of=lambda x: np.dtype(np.int32))
_register("window_gather", _pooling._window_gather_impl, _pooled_sizes)
_register("window_scatter", _pooling._window_scatter_impl, _input_sizes,
          block_params=_block_in_shape)
_register("avg_pool_transpose", _pooling._avg_pool_transpose_impl, _input_sizes,
          block_params=_block_in_shape)
_register("resize", _image._resize_impl, _resized_sizes)
_register("resize_transpose", _image._resize_transpose_impl, _input_sizes,
          block_params=_block_in_shape)


def _refused_on_cupy(name: str) -> None:
    @namespace_rule(name, library="cupy")
    def rule(kind: ArrayKind):
        def refuse(*args: Any, **params: Any) -> Any:
            raise NotImplementedError(
                f"gradtape's {name!r} op does not run on cupy arrays yet: its implementation "
                "fills NumPy buffers. Bring the input to the host with .numpy() first.")
        return unsupported(refuse)


for _name in ("max_pool", "avg_pool", "pool_argmax", "window_gather", "window_scatter",
              "avg_pool_transpose", "resize", "resize_transpose"):
    _refused_on_cupy(_name)
