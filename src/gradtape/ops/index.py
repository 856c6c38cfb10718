"""Indexing: ``x[index]`` with NumPy's exact semantics, and its transpose, scatter-add.

An index is split into a hashable *template* (a param: ints, slices as
``("slice", start, stop, step)``, ``None``, ``Ellipsis``, ``("array", k)`` for the k-th
index array, ``("arange", n, shape)`` for an ``np.arange(n).reshape(shape)`` built by
the implementation, ``("const", ints)`` for a 1-d index fixed by static shapes) and the
integer index arrays, which are extra non-differentiable inputs. The compile-cache key
therefore holds no arrays: the same indexing structure with new index values reuses the
compiled code. Boolean masks become integer arrays (``np.nonzero``), which is exactly how
NumPy defines them. Integer index tensors are passed as they are (inputs of the op), so
a ``@gt.function`` trace takes new index values without a guard; while tracing, a
boolean tensor mask becomes a ``nonzero`` op on it, guarded on its count only.

The VJP of ``getitem`` is ``scatter_add`` (``np.add.at``: repeated indices accumulate),
whose VJP is ``getitem`` again, so derivatives of any order stay in these two primitives.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from ..core import backends
from ..core.errors import InvalidArgumentError
from ..core.state import state
from ..core.tensor import Tensor, concrete_value
from ..ir.nodes import Aval, IRValue
from . import shape as _shape
from .numpy_dispatch import implements
from .registry import Primitive, bind, operand, unchanged

__all__ = [
    "getitem", "scatter_add", "take", "take_along_axis", "gather", "gather_nd",
    "boolean_mask",
]


# --- templates -----------------------------------------------------------------------

_FULL = ("slice", None, None, None)  # ``:``


@functools.lru_cache(maxsize=1024)
def _compile_template(template: tuple) -> tuple[list, tuple]:
    """The index as a list with placeholders, and (position, entry) of the entries built
    per call. Cached: parsing a template happens once per structure, not per call."""
    static, dynamic = [], []
    for pos, entry in enumerate(template):
        if type(entry) is tuple:
            if entry[0] == "slice":
                static.append(slice(*entry[1:]))
                continue
            dynamic.append((pos, entry))
            static.append(None)
        else:
            static.append(entry)
    return static, tuple(dynamic)


def _build_index(template: tuple, arrays: tuple) -> tuple:
    static, dynamic = _compile_template(template)
    if not dynamic:
        return tuple(static)
    index = list(static)
    for pos, entry in dynamic:
        kind = entry[0]
        if kind == "array":
            index[pos] = arrays[entry[1]]
        elif kind == "arange":  # ("arange", n, shape)
            index[pos] = np.arange(entry[1]).reshape(entry[2])
        else:  # ("const", ints): fixed by static shapes (pad modes, repeat counts)
            index[pos] = _const_array(entry[1])
    return tuple(index)


@functools.lru_cache(maxsize=256)
def _const_array(values: tuple) -> np.ndarray:
    out = np.array(values, dtype=np.intp)
    out.flags.writeable = False
    return out


def _has_arrays(template: tuple) -> bool:
    return bool(_compile_template(template)[1])


# --- primitives ----------------------------------------------------------------------

def _getitem_impl(x, *arrays, index):
    return x[_build_index(index, arrays)]


def _scatter_add_impl(g, *arrays, index, shape):
    out = np.zeros(shape, dtype=np.result_type(g))
    idx = _build_index(index, arrays)
    if _has_arrays(index):
        np.add.at(out, idx, g)  # repeated indices accumulate
    else:
        out[idx] = g  # basic indexing never selects an element twice
    return out


def _dummy_indexed(x_shape, dtype, arrays, index):
    """Index a zero-strided array (no memory) to learn the result's shape."""
    dummy = np.broadcast_to(np.zeros((), dtype), x_shape)
    zeros = tuple(np.zeros(a.shape, np.intp) for a in arrays)
    return dummy[_build_index(index, zeros)]


def _getitem_shape(x, *arrays, index):
    out = _dummy_indexed(x.shape, x.dtype, arrays, index)
    return Aval(tuple(out.shape), x.dtype)


def _scatter_add_shape(g, *arrays, index, shape):
    return Aval(tuple(shape), g.dtype)


def _no_index_cts(arrays) -> tuple:
    return (None,) * len(arrays)


def _getitem_batch(size, args, batched, *, index):
    from . import batch_rules

    if any(batched[1:]):  # batched index arrays: rare (indices are constants)
        return batch_rules.batch_by_loop(getitem_p, size, args, batched, index=index)
    out = bind(getitem_p, *args, index=(_FULL,) + index)
    lead = _advanced_first(index, args[1:])
    return out if lead is None else batch_rules.move_batch_axis_to_front(out, lead)


getitem_p = Primitive(
    "getitem", _getitem_impl,
    residuals=("in1:",),  # the index arrays; of the array x, its shape
    index_operands=True,
    vjp=lambda g, y, x, *arrays, index: (
        scatter_add(g, arrays, index, x.shape), *_no_index_cts(arrays)
    ),
    jvp=lambda ts, y, x, *arrays, index: (
        None if ts[0] is None else bind(getitem_p, ts[0], *arrays, index=index)
    ),
    shape_rule=_getitem_shape,
    batch=_getitem_batch,
)


def _scatter_add_batch(size, args, batched, *, index, shape):
    from . import batch_rules

    if any(batched[1:]):
        return batch_rules.batch_by_loop(scatter_add_p, size, args, batched, index=index,
                                      shape=shape)
    g, arrays = args[0], args[1:]
    lead = _advanced_first(index, arrays)
    if lead is not None:  # where getitem of the batched result puts the batch axis
        g = _shape.moveaxis(g, 0, lead)
    return bind(scatter_add_p, g, *arrays, index=(_FULL,) + index, shape=(size,) + shape)


scatter_add_p = Primitive(
    "scatter_add", _scatter_add_impl,
    index_operands=True,
    vjp=lambda g, y, u, *arrays, index, shape: (
        bind(getitem_p, g, *arrays, index=index), *_no_index_cts(arrays)
    ),
    jvp=lambda ts, y, u, *arrays, index, shape: (
        None if ts[0] is None else scatter_add(ts[0], arrays, index, shape)
    ),
    shape_rule=_scatter_add_shape,
    batch=_scatter_add_batch,
)


# --- batching rules (vectorizing over a new leading axis, ir/batching.py) -----------------

def _advanced_first(index: tuple, arrays: tuple) -> int | None:
    """NumPy puts the dims of advanced indices first when they are not adjacent (separated
    by a slice, None or Ellipsis); then their broadcast rank, else None."""
    positions, shapes = [], []
    for pos, e in enumerate(index):
        if type(e) is tuple and e[0] == "array":
            positions.append(pos)
            shapes.append(tuple(arrays[e[1]].shape))
        elif type(e) is tuple and e[0] == "arange":
            positions.append(pos)
            shapes.append(e[2])
        elif type(e) is tuple and e[0] == "const":
            positions.append(pos)
            shapes.append((len(e[1]),))
        elif type(e) is int:  # an int is an advanced index next to arrays
            positions.append(pos)
            shapes.append(())
    if len(shapes) == sum(s == () for s in shapes):
        return None  # basic indexing only
    if positions[-1] - positions[0] == len(positions) - 1:
        return None
    return len(np.broadcast_shapes(*shapes))


def scatter_add(updates: Any, arrays: tuple, index: tuple, shape: tuple) -> Any:
    """Zeros of ``shape`` with ``updates`` added at ``index`` (a template, see the
    module doc), repeated positions accumulating: the transpose of ``getitem``."""
    return bind(scatter_add_p, operand(updates), *arrays, index=index,
                shape=tuple(int(d) for d in shape))


# --- parsing a user's index ----------------------------------------------------------

def _as_int(v: Any) -> int | None:
    """A slice bound as a Python int (``operator.index`` raises TypeError for floats)."""
    return None if v is None else operator.index(v)


def _is_int_scalar(entry: Any) -> bool:
    if isinstance(entry, (bool, np.bool_)):
        return False
    if isinstance(entry, (int, np.integer)):
        return True
    if isinstance(entry, Tensor) and state.tracer is not None:
        return False  # a program input while tracing (_index_tensor), not a Python int
    if isinstance(entry, (Tensor, np.ndarray)):
        return entry.ndim == 0 and np.issubdtype(entry.dtype, np.integer)
    return False


def _index_tensor(entry: Tensor) -> Tensor | None:
    """An integer tensor used as an index, as it is: an input of the indexing op, so a
    ``@gt.function`` trace takes its value at each call instead of guarding on it. A
    boolean mask too while tracing (``_mask_indices``). ``None`` for anything else
    (eager masks become arrays; _index_array raises for other dtypes)."""
    if np.issubdtype(entry.dtype, np.integer):
        return entry
    if entry.dtype == bool and entry.ndim > 0 and state.tracer is not None:
        return entry
    return None


def _is_mask(entry: Any) -> bool:
    return isinstance(entry, (np.ndarray, Tensor)) and entry.dtype == bool


# ``nonzero(mask)``: NumPy's ``np.nonzero``, one index array per axis of the mask. Its
# output shape depends on the mask's value (the count of True): only traces make it,
# with a guard on that count (``_mask_indices``). No vjp: indices are integers.
def _nonzero_batch(size, args, batched):
    """One ``nonzero`` per batch member, stacked: rectangular only when every member has
    the same count (stacking raises otherwise, as the shapes differ)."""
    from . import batch_rules

    return batch_rules.batch_by_loop(nonzero_p, size, args, batched)


nonzero_p = Primitive("nonzero", np.nonzero, multiple_results=True, batch=_nonzero_batch)


def _mask_indices(mask: Tensor) -> tuple:
    """The indices of a boolean mask's True entries, computed by an op on the mask so a
    ``@gt.function`` trace takes the mask at each call. The number of them fixes every
    shape after it, so Python reads that count (a guard) and not the whole mask."""
    from .elementwise import cast
    from .reduce import sum as reduce_sum

    int(reduce_sum(cast(mask, np.int64)))  # the guard: a new count traces again
    return bind(nonzero_p, mask)


def _index_array(entry: Any) -> np.ndarray:
    value = concrete_value(entry) if isinstance(entry, Tensor) else entry
    arr = np.asarray(value)
    if arr.dtype == bool and arr.ndim == 0:
        raise TypeError(
            "A boolean scalar index is not supported; use None (np.newaxis) to add an "
            "axis, or a boolean array mask."
        )
    if arr.dtype == bool or np.issubdtype(arr.dtype, np.integer):
        return arr
    if arr.size == 0:
        return arr.astype(np.intp)  # x[[]] selects nothing, as in NumPy
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None (`np.newaxis`) and integer "
        f"or boolean arrays are valid indices; got an array of dtype {arr.dtype}."
    )


def _consumed(entry: Any) -> int:
    """How many dimensions of ``x`` an index entry uses up."""
    if entry is None or entry is Ellipsis:
        return 0
    if _is_mask(entry):
        return entry.ndim
    return 1


def _check_masks(entries: list, x_shape: tuple) -> None:
    """NumPy's checks that a nonzero() conversion would lose: rank and mask shapes."""
    ndim = len(x_shape)
    used = sum(_consumed(e) for e in entries)
    if sum(e is Ellipsis for e in entries) > 1:
        raise IndexError("an index can only have a single ellipsis ('...').")
    if used > ndim:
        raise IndexError(
            f"too many indices for a tensor of rank {ndim}: {used} dimensions indexed."
        )
    dim = 0
    for e in entries:
        if e is Ellipsis:
            dim += ndim - used
        elif _is_mask(e):
            expected = tuple(x_shape[dim:dim + e.ndim])
            if tuple(e.shape) != expected:
                raise IndexError(
                    f"boolean index of shape {e.shape} does not match the indexed "
                    f"dimensions {expected} (tensor shape {tuple(x_shape)}, from axis {dim})."
                )
        dim += _consumed(e)


def _slice_entry(s: slice) -> tuple:
    start, stop, step = s.start, s.stop, s.step
    if start.__class__ is not int:
        start = _as_int(start)
    if stop.__class__ is not int:
        stop = _as_int(stop)
    if step.__class__ is not int:
        step = _as_int(step)
    return ("slice", start, stop, step)


_BASIC_TYPES = frozenset({int, slice, type(None), type(Ellipsis)})


def _basic_template(index: tuple) -> tuple | None:
    """The template of an index made only of ints, slices, None and Ellipsis (the
    common case, kept fast: NumPy itself reports any error when the index is applied)."""
    for e in index:
        if e.__class__ not in _BASIC_TYPES:
            return None
    return tuple(_slice_entry(e) if e.__class__ is slice else e for e in index)


def parse_index(index: Any, x_shape: tuple) -> tuple[tuple, tuple]:
    """A user's index as (template, index arrays); see the module doc."""
    if not isinstance(index, tuple):
        index = (index,)
    template = _basic_template(index)
    if template is not None:
        return template, ()
    entries: list[Any] = []
    for e in index:
        if e is None or e is Ellipsis or isinstance(e, slice) or _is_int_scalar(e):
            entries.append(e)
        elif isinstance(e, (bool, np.bool_)):
            raise TypeError(
                "A boolean scalar index is not supported; use None (np.newaxis) to add an "
                "axis, or a boolean array mask."
            )
        elif isinstance(e, IRValue):
            if not np.issubdtype(e.dtype, np.integer):
                raise TypeError(
                    f"Only integer index arrays can be used inside derivative rules; got "
                    f"{e.dtype}."
                )
            entries.append(e)
        elif isinstance(e, Tensor) and _index_tensor(e) is not None:
            entries.append(e)
        elif isinstance(e, (Tensor, np.ndarray, list, tuple)):  # NumPy: a tuple inside
            entries.append(_index_array(e))  # the index is a sequence, like a list
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None (`np.newaxis`) and "
                f"integer or boolean arrays are valid indices; got {type(e).__name__}."
            )
    _check_masks(entries, x_shape)
    template = []
    arrays: list[Any] = []

    def add_array(a):
        template.append(("array", len(arrays)))
        arrays.append(a)

    for e in entries:
        if isinstance(e, slice):
            template.append(_slice_entry(e))
        elif e is None or e is Ellipsis:
            template.append(e)
        elif isinstance(e, Tensor) and e.dtype == bool:
            for a in _mask_indices(e):
                add_array(a)
        elif isinstance(e, (IRValue, Tensor)):
            add_array(e)
        elif isinstance(e, np.ndarray) and e.dtype == bool:
            for a in np.nonzero(e):
                add_array(a)
        elif isinstance(e, np.ndarray):
            add_array(e.astype(np.intp, copy=False))
        else:
            template.append(int(e))
    return tuple(template), tuple(arrays)


def _is_whole(template: tuple) -> bool:
    """``x[...]``, ``x[:]``, ``x[()]``: the tensor itself (tensors are immutable)."""
    for e in template:
        if e is not Ellipsis and e != _FULL:
            return False
    return True


def getitem(x: Any, index: Any) -> Any:
    """``x[index]`` with NumPy's semantics: basic and advanced indexing, boolean masks.

    Differentiable; where an element is selected more than once its gradient is the sum.
    """
    x = operand(x)
    template, arrays = parse_index(index, x.shape)
    if arrays:
        return bind(getitem_p, x, *arrays, index=template)
    if _is_whole(template):
        return unchanged(x)
    return bind(getitem_p, x, index=template)


def index_axis(x: Any, axis: int, entry: Any) -> Any:
    """``x[:, ..., entry]`` with ``entry`` (an int or a ("slice", ...) tuple) at ``axis``.

    Used by shape ops and derivative rules; takes no arrays, so it works on IR values."""
    return bind(getitem_p, x, index=(_FULL,) * axis + (entry,))


# --- take, take_along_axis, gather -----------------------------------------------------

def _int_indices(indices: Any) -> Any:
    if isinstance(indices, IRValue):
        return indices
    if isinstance(indices, Tensor) and _index_tensor(indices) is not None:
        return indices
    arr = _index_array(indices)
    if arr.dtype == bool:
        raise TypeError("take/gather need integer indices, not a boolean mask.")
    return arr.astype(np.intp, copy=False)


@implements(np.take)
def take(a: Any, indices: Any, axis: int | None = None, out: Any = None,
         mode: str = "raise") -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` if None)."""
    if out is not None or mode != "raise":
        raise TypeError("gradtape take supports neither out= nor mode other than 'raise'.")
    a = operand(a)
    if axis is None:
        a, axis = _shape.ravel(a), 0
    axis = _shape._normalize_axis(int(axis), len(a.shape))
    if _is_int_scalar(indices):
        return bind(getitem_p, a, index=(_FULL,) * axis + (int(indices),))
    idx = _int_indices(indices)
    return bind(getitem_p, a, idx, index=(_FULL,) * axis + (("array", 0),))


def take_static(x: Any, indices: Any, axis: int) -> Any:
    """``take`` with indices fixed by static shapes, written into the template (not an
    input array), so that it also works on IR values inside rules."""
    entry = ("const", tuple(int(i) for i in indices))
    return bind(getitem_p, x, index=(_FULL,) * axis + (entry,))


def _aranges(shape: tuple, skip: int) -> list:
    """("arange", n, shape) entries indexing every axis of ``shape`` but ``skip``."""
    ndim = len(shape)
    out = []
    for i, n in enumerate(shape):
        if i != skip:
            bshape = tuple(n if j == i else 1 for j in range(ndim))
            out.append(("arange", int(n), bshape))
        else:
            out.append(None)
    return out


@implements(np.take_along_axis)
def take_along_axis(arr: Any, indices: Any, axis: int | None) -> Any:
    """NumPy's ``take_along_axis``: ``arr`` indexed by ``indices`` along ``axis``, the
    other axes matched (broadcast) with ``indices``'."""
    arr = operand(arr)
    idx = _int_indices(indices)
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("take_along_axis with axis=None needs 1-d indices.")
        return bind(getitem_p, _shape.ravel(arr), idx, index=(("array", 0),))
    ndim = len(arr.shape)
    if idx.ndim != ndim:
        raise ValueError(
            f"`indices` (rank {idx.ndim}) and `arr` (rank {ndim}) must have the same rank."
        )
    axis = _shape._normalize_axis(int(axis), ndim)
    np.broadcast_shapes(  # raises ValueError, as NumPy does, if the shapes do not match
        tuple(1 if i == axis else d for i, d in enumerate(arr.shape)),
        tuple(1 if i == axis else d for i, d in enumerate(idx.shape)),
    )
    # An arange over each other axis; one of size 1 broadcasts against indices as NumPy's.
    template = _aranges(tuple(arr.shape), axis)
    template[axis] = ("array", 0)
    return bind(getitem_p, arr, idx, index=tuple(template))


def _check_gather_range(indices: Any, params_shape: tuple, axis: int,
                        column: int | None = None) -> None:
    """TF's ``InvalidArgumentError`` for an index outside ``params``' axis, where the
    indices' values are known now (an array, an eager tensor). Traced indices are read
    at each call and get NumPy's ``IndexError`` there; lazy (Dask) ones are not computed.
    ``column``: ``indices`` is ``gather_nd``'s ``indices[..., column]``."""
    if isinstance(indices, IRValue):
        return
    if isinstance(indices, Tensor):
        if state.tracer is not None:
            return
        indices = indices._value
    if backends.is_lazy(indices) or not np.size(indices):
        return
    values = backends.to_numpy(indices)
    size = int(params_shape[axis])
    bad = (values >= size) | (values < -size)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        shown = list(where) if column is None else [*where, column]
        raise InvalidArgumentError(
            f"indices{shown} = {int(values[where])} is not in [0, {size}): gather "
            f"along axis {axis} of params with shape {tuple(params_shape)}. Pass indices "
            f"below {size} (negative ones down to -{size} count from the end).")


def gather(params: Any, indices: Any, validate_indices: Any = None, axis: int | None = None,
           batch_dims: int = 0, name: str | None = None) -> Any:
    """TF's ``tf.gather``: slices of ``params`` along ``axis`` at ``indices``.

    The result's shape is ``params.shape[:axis] + indices.shape[batch_dims:] +
    params.shape[axis + 1:]``. Negative indices count from the end (NumPy's rule; TF
    raises for them on CPU). An index past the axis raises TF's
    ``InvalidArgumentError``.
    """
    del validate_indices, name
    params = operand(params)
    idx = _int_indices(indices)
    idx_ndim = idx.ndim
    if batch_dims < 0:
        batch_dims += idx_ndim
    if axis is None:
        axis = batch_dims
    axis = _shape._normalize_axis(int(axis), len(params.shape))
    if not 0 <= batch_dims <= min(axis, idx_ndim):
        raise ValueError(
            f"batch_dims={batch_dims} must be in [0, min(axis={axis}, rank(indices)="
            f"{idx_ndim})]."
        )
    _check_gather_range(idx, tuple(params.shape), axis)
    if batch_dims == 0:
        return take(params, idx, axis=axis)
    batch = tuple(params.shape[:batch_dims])
    if tuple(idx.shape[:batch_dims]) != batch:
        raise ValueError(
            f"params.shape[:{batch_dims}] = {batch} and indices.shape[:{batch_dims}] = "
            f"{tuple(idx.shape[:batch_dims])} must be equal for batch_dims={batch_dims}."
        )
    template: list[Any] = []
    for i, n in enumerate(batch):
        bshape = tuple(n if j == i else 1 for j in range(idx_ndim))
        template.append(("arange", int(n), bshape))
    template += [_FULL] * (axis - batch_dims) + [("array", 0)]
    out = bind(getitem_p, params, idx, index=tuple(template))
    if axis == batch_dims:
        return out
    # Slices between the advanced indices moved the index dims to the front (NumPy's
    # rule); put the sliced params dims back before them, as TF orders them.
    nb, ni, nm = batch_dims, idx_ndim - batch_dims, axis - batch_dims
    perm = (list(range(nb)) + list(range(nb + ni, nb + ni + nm)) + list(range(nb, nb + ni))
            + list(range(nb + ni + nm, len(out.shape))))
    return _shape.transpose(out, tuple(perm))


def gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: str | None = None) -> Any:
    """TF's ``tf.gather_nd``: ``indices[..., :k]`` address the first k axes of params."""
    del name
    if batch_dims != 0:
        raise NotImplementedError(
            "gradtape gather_nd supports batch_dims=0 only; use gather(..., batch_dims=) or "
            "index with explicit arange arrays."
        )
    params = operand(params)
    idx = _int_indices(indices)
    if isinstance(idx, IRValue):
        raise TypeError("gather_nd cannot take IR index values; use getitem.")
    depth = idx.shape[-1]
    if depth > len(params.shape):
        raise InvalidArgumentError(f"indices.shape[-1]={depth} exceeds the rank of params.")
    if isinstance(idx, Tensor):  # index columns by ops: program values under a trace
        arrays = tuple(index_axis(idx, idx.ndim - 1, k) for k in range(depth))
    else:
        arrays = tuple(np.ascontiguousarray(idx[..., k]) for k in range(depth))
    for k, column in enumerate(arrays):
        _check_gather_range(column, tuple(params.shape), k, column=k)
    template = tuple(("array", k) for k in range(depth))
    return bind(getitem_p, params, *arrays, index=template)


def boolean_mask(tensor: Any, mask: Any, axis: int | None = None,
                 name: str | None = None) -> Any:
    """TF's ``tf.boolean_mask``: the elements (or slices from ``axis``) where mask holds."""
    del name
    tensor = operand(tensor)
    if not (isinstance(mask, Tensor) and mask.dtype == bool):  # a bool tensor: an input
        mask = np.asarray(concrete_value(mask) if isinstance(mask, Tensor) else mask,
                          dtype=bool)
    axis = 0 if axis is None else _shape._normalize_axis(int(axis), len(tensor.shape))
    return getitem(tensor, (slice(None),) * axis + (mask,))
