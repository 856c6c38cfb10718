"""Array kinds other than NumPy: Dask, CuPy, and any library with an array-API namespace.

A tensor holds the user's array as it is. NumPy arrays (and NumPy and Python scalars)
are the default kind, ``None``: every op runs its NumPy implementation and nothing here
is consulted. Any other array has an :class:`ArrayKind`, found once per array class:

- its *namespace*, the module whose functions compute on it: ``dask.array`` for Dask,
  ``x.__array_namespace__()`` (the array API standard) for the others;
- whether it takes part in NumPy's protocols (``__array_ufunc__``): then a NumPy
  function called on it runs in its own library (Dask, CuPy), else a NumPy function
  would convert it to NumPy behind the user's back (``array_api_strict``), so each op
  runs the namespace's function of the same name, or a rule (``ops/backends/``, which
  installs them here: ``install_implementations``).

A primitive's implementation on a kind is built once per (kind, primitive) and checked:
an op whose result became a NumPy array raises instead of converting the user's data.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

_ndarray = np.ndarray

_DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float32", "float64", "complex64", "complex128")

class ArrayKind:
    """One array library other than NumPy, and the implementations of ops on it."""

    __slots__ = ("name", "namespace", "protocols", "takes_numpy", "_impls", "_dtypes")

    def __init__(self, name: str, namespace: ModuleType, protocols: bool):
        self.name = name  # the namespace's module name: "dask.array", "array_api_strict"
        self.namespace = namespace
        self.protocols = protocols
        # Whether the library computes on NumPy arrays mixed with its own: Dask does
        # (it wraps them); CuPy and array-API libraries raise, as TF does across devices.
        self.takes_numpy = name == "dask.array"
        self._impls: dict[Any, Callable[..., Any]] = {}
        self._dtypes: dict[Any, np.dtype] = {}
        for dtype_name in _DTYPE_NAMES:
            dtype = getattr(namespace, dtype_name, None)
            if dtype is not None and not isinstance(dtype, type):
                self._dtypes[dtype] = np.dtype(dtype_name)

    def __repr__(self) -> str:
        return f"ArrayKind({self.name})"

    def numpy_dtype(self, dtype: Any) -> np.dtype:
        """The NumPy dtype of one of this library's dtypes (TF's dtypes are NumPy's)."""
        return dtype if isinstance(dtype, np.dtype) else self._dtypes[dtype]

    def dtype(self, dtype: Any) -> Any:
        """This library's dtype for a NumPy dtype (the same object for Dask and CuPy)."""
        dtype = np.dtype(dtype)
        if self.protocols:
            return dtype
        for theirs, ours in self._dtypes.items():
            if ours == dtype:
                return theirs
        raise TypeError(f"{self.name} has no dtype {dtype.name}.")

    # Array helpers for gradtape's own plumbing (fitting a gradient to its source).
    def astype(self, array: Any, dtype: np.dtype) -> Any:
        if self.protocols:
            return array.astype(dtype)
        return self.namespace.astype(array, self.dtype(dtype))

    def broadcast_to(self, array: Any, shape: tuple[int, ...]) -> Any:
        return self.namespace.broadcast_to(array, shape)

    def concatenate(self, arrays: list, axis: int = 0) -> Any:
        xp = self.namespace
        return (getattr(xp, "concat", None) or xp.concatenate)(arrays, axis=axis)

    def stack(self, arrays: list) -> Any:
        return self.namespace.stack(arrays)

    def fit(self, array: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        """``array`` with ``dtype`` and broadcast to ``shape`` (a gradient fitted to its
        source, TF's rule), staying this library's array."""
        if self.numpy_dtype(array.dtype) != dtype:
            array = self.astype(array, dtype)
        return array if tuple(array.shape) == tuple(shape) else self.broadcast_to(array, shape)

    def from_constant(self, array: Any, like: Any) -> Any:
        """A NumPy ``array`` the backward built from constants alone (a ones seed, the
        broadcast of one) as this library's array of ``like``'s shape: the gradient of
        a Dask source is a Dask array chunked like it."""
        array = np.broadcast_to(array, tuple(like.shape))
        if self.name == "dask.array":
            return self.namespace.from_array(array, chunks=like.chunks, name=False)
        return self.namespace.asarray(array)

    def zeros_like(self, like: Any, dtype: np.dtype) -> Any:
        """Zeros of ``like``'s shape (and chunks), lazily on Dask."""
        if self.name == "dask.array":
            return self.namespace.zeros_like(like, dtype=dtype)
        return self.namespace.zeros(tuple(like.shape), dtype=self.dtype(dtype))

    def supports(self, prim: Any) -> bool:
        """Whether ``prim`` runs on this kind's arrays (else it raises NotImplementedError)."""
        return not getattr(getattr(self.impl(prim), "__wrapped__", None), "unsupported", False)

    def impl(self, prim: Any) -> Callable[..., Any]:
        """``prim``'s implementation on this kind's arrays (built once)."""
        found = self._impls.get(prim)
        if found is None:
            found = self._impls[prim] = (
                prim.impl if prim.kind_neutral
                else _checked(prim, self, _implementations(self, prim)))
        return found


# How a primitive runs on a kind: the rules of ``ops/backends/`` (installed by it, a
# layer above: ``install_implementations``), given the kind and the primitive.
_implementations: Callable[[ArrayKind, Any], Callable[..., Any]]


def install_implementations(build: Callable[[ArrayKind, Any], Callable[..., Any]]) -> None:
    """Set how ``ArrayKind.impl`` builds a primitive's implementation on a kind (once,
    when ``ops/backends`` is imported)."""
    global _implementations
    _implementations = build


# What a conversion to NumPy returns: an array, or a scalar (np.linalg.det's fallback).
_NUMPY_RESULTS = (_ndarray, np.generic)


def _checked(prim: Any, kind: ArrayKind, impl: Callable[..., Any]) -> Callable[..., Any]:
    """``impl`` where an input is this kind's array, NumPy's implementation where none
    is (a program on Dask arrays has NumPy constants too); refusing to return a NumPy
    array made from this kind's arrays (a silent conversion: for Dask, a computation of
    the whole graph)."""
    prim_name, numpy_impl = prim.name, prim.impl

    def run(*args: Any, **params: Any) -> Any:
        if kind_of_all(args) is None:
            return numpy_impl(*args, **params)
        out = impl(*args, **params)
        if isinstance(out, _NUMPY_RESULTS) or (isinstance(out, tuple) and any(
                isinstance(o, _NUMPY_RESULTS) for o in out)):
            raise NotImplementedError(
                f"gradtape's {prim_name!r} op turned {kind.name} arrays into NumPy arrays; "
                f"it does not run on {kind.name} arrays yet. Convert the input with "
                "np.asarray first if that is what you want.")
        return out
    run.__name__ = getattr(impl, "__name__", prim_name)
    run.__wrapped__ = impl  # type: ignore[attr-defined]
    return run


# --- which kind an array is ------------------------------------------------------------

# Classes that are NumPy's kind: checked first, so NumPy values never reach _KINDS.
_NUMPY_CLASSES = frozenset((_ndarray, bool, int, float, complex, np.float64, np.float32,
                            np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8,
                            np.uint16, np.uint32, np.uint64, np.bool_, np.complex64,
                            np.complex128))
NUMPY_CLASSES = _NUMPY_CLASSES  # for inline checks on hot paths
PLAIN_CLASSES = _NUMPY_CLASSES | {type(None)}  # a backward's arguments may be None
_KINDS: dict[type, ArrayKind | None] = {}
_BY_NAME: dict[str, ArrayKind] = {}


def kind_of(value: Any) -> ArrayKind | None:
    """The kind of ``value``'s array library; ``None`` for NumPy and anything else."""
    cls = value.__class__
    if cls in _NUMPY_CLASSES:
        return None
    try:
        return _KINDS[cls]
    except KeyError:
        kind = _KINDS[cls] = _find_kind(value)
        return kind


def _find_kind(value: Any) -> ArrayKind | None:
    if isinstance(value, (_ndarray, np.generic)):
        return None
    namespace = _namespace_of(value)
    if namespace is None or namespace is np:
        return None
    name = namespace.__name__
    kind = _BY_NAME.get(name)
    if kind is None:
        protocols = hasattr(type(value), "__array_ufunc__")
        kind = _BY_NAME[name] = ArrayKind(name, namespace, protocols)
    return kind


def _namespace_of(value: Any) -> ModuleType | None:
    dask_array = sys.modules.get("dask.array")
    if dask_array is not None and isinstance(value, dask_array.Array):
        return dask_array  # Dask's arrays have no __array_namespace__ yet
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(value, cupy.ndarray):
        # The module itself: cupy.ndarray has no __array_namespace__ before CuPy 14,
        # and NumPy's protocols route NumPy's functions to CuPy on its arrays.
        return cupy
    get = getattr(type(value), "__array_namespace__", None)
    if get is None or not hasattr(value, "shape") or not hasattr(value, "dtype"):
        return None
    return get(value)


def kind_named(name: str) -> ArrayKind:
    """The kind whose namespace module is ``name`` (generated modules import it so)."""
    kind = _BY_NAME.get(name)
    if kind is None:
        import importlib

        namespace = importlib.import_module(name)
        kind = _BY_NAME[name] = ArrayKind(name, namespace, name in ("dask.array", "cupy"))
    return kind


def kind_of_all(values: Any) -> ArrayKind | None:
    """The one kind other than NumPy among ``values`` (``None``: all NumPy). Two other
    kinds mixed raise: no library computes on the other's arrays."""
    found = None
    for v in values:
        if v.__class__ in _NUMPY_CLASSES or v is None:
            continue
        kind = kind_of(v)
        if kind is None or kind is found:
            continue
        if found is not None:
            raise TypeError(
                f"Cannot mix {found.name} and {kind.name} arrays in one computation; "
                f"convert one of them first (e.g. with {kind.name}.asarray).")
        found = kind
    return found


def eager_impl(prim: Any, values: list) -> Callable[..., Any]:
    """What an eager op runs when an input is not NumPy's (the dispatcher's slow path)."""
    kind = kind_of_all(values)
    if kind is None:
        return prim.eager
    if not kind.takes_numpy and not prim.kind_neutral:
        check_no_numpy_arrays(prim, kind, values)
    return kind.impl(prim)


def constant_like(reference: Any, array: np.ndarray) -> Any:
    """gradtape's own NumPy constant ``array`` (a composite op's weights) as an array of
    the library of ``reference`` (a tensor or array): one that takes no NumPy arrays
    would refuse it as the user's data (``check_no_numpy_arrays``)."""
    kind = kind_of(getattr(reference, "_value", reference))
    return array if kind is None or kind.takes_numpy else kind.namespace.asarray(array)


def check_no_numpy_arrays(prim: Any, kind: ArrayKind, values: list) -> None:
    """A user's op mixing ``kind``'s arrays with a NumPy array raises, naming the fix,
    as TF does for tensors on two devices. Scalars (Python, NumPy, 0-d arrays) mix."""
    data = values[:1] if prim.index_operands else values
    for v in data:
        if v.__class__ is _ndarray and v.ndim:
            raise _mixing_error(prim.name, kind, v)


def _mixing_error(prim_name: str, kind: ArrayKind, array: np.ndarray) -> Exception:
    from .errors import InvalidArgumentError

    if kind.name == "cupy":
        fix = ("Move the NumPy array to the GPU with cupy.asarray(x), or bring the CuPy "
               "one to the host with .numpy() (x.get() for a cupy array)")
    else:
        fix = (f"Convert the NumPy array with {kind.name}.asarray(x), or the "
               f"{kind.name} one to NumPy with .numpy()")
    return InvalidArgumentError(
        f"gradtape's {prim_name!r} op got both {kind.name} and NumPy arrays (one of shape "
        f"{array.shape}): {kind.name} does not compute on NumPy arrays, as TF's ops do "
        f"not take tensors on two devices. {fix}, so that both live on one device.")


# --- converting to a tensor ---------------------------------------------------------------

def check_static_shape(array: Any, kind: ArrayKind) -> None:
    """A tensor has a static shape: an array of unknown size (Dask after a boolean index
    or ``unique``) cannot be one."""
    for d in array.shape:
        if d is None or (isinstance(d, float) and math.isnan(d)):
            fix = (" Call x.compute_chunk_sizes() first (it computes the chunks' sizes)."
                   if kind.name == "dask.array" else " Compute its size first.")
            raise ValueError(
                f"Cannot make a tensor of a {kind.name} array of unknown shape "
                f"{tuple(array.shape)}: gradtape needs every dimension's size.{fix}")


def convert(array: Any, kind: ArrayKind, dtype: Any) -> Any:
    """A tensor's private value of another library's ``array``, cast to ``dtype``: no
    conversion to NumPy, and a copy only where the library's arrays can be written."""
    check_static_shape(array, kind)
    if dtype is not None and kind.numpy_dtype(array.dtype) != dtype:
        if dtype.kind == "c" or kind.numpy_dtype(array.dtype).kind != "c":
            return kind.namespace.astype(array, kind.dtype(dtype)) \
                if not kind.protocols else array.astype(dtype)
        raise TypeError(f"Cannot convert a complex array to {dtype.name}; take its real "
                        "part (gt.real) first.")
    if kind.name == "dask.array":  # immutable: sharing it is safe, and keeps it lazy
        return array
    if kind.protocols:  # CuPy: ndarray's copy (cupy.asarray takes no copy= before 14)
        return array.copy()
    return kind.namespace.asarray(array, copy=True)


# --- reading values -----------------------------------------------------------------------

def is_lazy(value: Any) -> bool:
    """Whether reading ``value`` runs a computation (a Dask array)."""
    return kind_of(value) is not None and hasattr(value, "dask") and hasattr(value, "compute")


def to_numpy(value: Any) -> np.ndarray:
    """``value`` as a NumPy array, where the user asks for it: Dask computes it, CuPy
    copies it from the device."""
    if is_lazy(value):
        value = value.compute()
    get = getattr(value, "get", None)
    if callable(get) and type(value).__module__.startswith("cupy"):
        value = get()
    return np.asarray(value)


def dtype_of(array: Any) -> np.dtype:
    """``array.dtype`` as NumPy's dtype (TF's dtypes are NumPy's; an array-API library's
    arrays have dtypes of their own)."""
    dtype = array.dtype
    if type(array) in _NUMPY_CLASSES or isinstance(dtype, np.dtype):
        return dtype
    return kind_of(array).numpy_dtype(dtype)
