"""Routes NumPy calls on tensors (``np.sin(t)``, ``np.sum(t)``) to gradtape ops.

Each op module registers the NumPy functions it implements. An unregistered ufunc
raises ``TypeError`` naming it; an unregistered NumPy function runs on the arrays (as
NumPy would), and a watched tensor's drop is told: a gradient is never silently dropped.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import tensor as _tensor

_UFUNCS: dict[Any, Callable[..., Any]] = {}
_FUNCTIONS: dict[Any, Callable[..., Any]] = {}


def register_ufunc(ufunc: Any, op: Callable[..., Any]) -> None:
    _UFUNCS[ufunc] = op


# Loaders of ufuncs from optional libraries (SciPy's special functions): run when an
# unknown ufunc reaches a tensor, until each reports that it registered its ufuncs.
_LAZY_UFUNC_LOADERS: list[Callable[[], bool]] = []


def register_lazy_ufuncs(loader: Callable[[], bool]) -> None:
    _LAZY_UFUNC_LOADERS.append(loader)


def _load_lazy_ufuncs() -> None:
    for loader in list(_LAZY_UFUNC_LOADERS):
        if loader():
            _LAZY_UFUNC_LOADERS.remove(loader)


def implements(*numpy_functions: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: ``op`` handles these NumPy functions (given the same arguments)."""

    def register(op: Callable[..., Any]) -> Callable[..., Any]:
        for func in numpy_functions:
            _FUNCTIONS[func] = op
        return op

    return register


def dispatch_ufunc(ufunc, method: str, inputs, kwargs):
    op = _UFUNCS.get(ufunc)
    if op is None and _LAZY_UFUNC_LOADERS:
        _load_lazy_ufuncs()
        op = _UFUNCS.get(ufunc)
    if method != "__call__" or op is None:
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        raise TypeError(
            f"numpy.{name} has no differentiable gradtape rule. Use a gradtape op, or "
            "convert the tensor with .numpy() if no gradient should flow through it."
        )
    out = kwargs.pop("out", None)
    if out is not None:
        raise TypeError(f"numpy.{ufunc.__name__}(..., out=) cannot write into a tensor: "
                        "tensors are immutable.")
    if kwargs.get("dtype") is None:
        kwargs.pop("dtype", None)
    if kwargs:
        raise TypeError(
            f"numpy.{ufunc.__name__} on tensors does not support the arguments "
            f"{sorted(kwargs)}."
        )
    return op(*inputs)


# Functions that only look at values (shapes, comparisons): they run on the arrays and
# return plain NumPy results, like calling them on ``.numpy()``.
_INSPECTION = {
    np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj, np.isrealobj,
    np.allclose, np.isclose, np.array_equal, np.array_equiv, np.count_nonzero,
    np.nonzero, np.argwhere, np.flatnonzero, np.array2string, np.array_repr, np.array_str,
    np.any, np.all, np.unique, np.searchsorted, np.argsort,
}


# Of those, the ones that look at shapes and dtypes only (no guard in @gt.function).
_STATIC = {np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj, np.isrealobj}


def _unwrap(x, static=False):
    from ..core.tensor import Tensor, concrete_value

    if isinstance(x, Tensor):
        return x._value if static else concrete_value(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(i, static) for i in x)
    return x


def dispatch_function(func, args, kwargs):
    op = _FUNCTIONS.get(func)
    if op is None and func in _INSPECTION:
        static = func in _STATIC
        return func(*_unwrap(args, static),
                    **{k: _unwrap(v, static) for k, v in kwargs.items()})
    if op is None:
        return _run_on_arrays(func, args, kwargs)
    return op(*args, **kwargs)


def _run_on_arrays(func, args, kwargs):
    """A NumPy function gradtape has no rule for runs on the tensors' arrays and returns
    NumPy's result, as it would on arrays (TF's tensors convert so); a watched tensor's
    gradient stops here, and the drop warning names the function and the user's line."""
    name = f"np.{getattr(func, '__name__', func)}"
    return func(*as_arrays(args, name), **{k: as_arrays(v, name) for k, v in kwargs.items()})


def as_arrays(x, function_name: str):
    """``x`` with each tensor (in lists and tuples too) replaced by its array, reporting
    a watched tensor's conversion as ``function_name``'s."""
    from ..core.gradient_drops import report_conversion
    from ..core.state import state
    from ..core.tensor import Tensor, concrete_value

    if isinstance(x, Tensor):
        if state.recording or state.accumulators or state.tracer is not None:
            report_conversion(x, numpy_function=function_name)
        return concrete_value(x)
    if isinstance(x, (list, tuple)):
        return type(x)(as_arrays(i, function_name) for i in x)
    return x


# Tensors route NumPy's protocols through this module.
_tensor.install_numpy_dispatch(sys.modules[__name__])


def supported_names() -> dict[str, list[str]]:
    """The NumPy functions and ufuncs with gradtape rules, and the inspection-only ones,
    by qualified name (``numpy.sin``, ``numpy.linalg.svd``): what docs/api.md lists."""

    def qualified(f: Any) -> str:
        module = getattr(f, "__module__", None) or "numpy"
        if isinstance(f, np.ufunc) or module.startswith("numpy._") or module == "numpy":
            module = "numpy"
        module = module.replace("numpy.fft._pocketfft", "numpy.fft")
        module = module.replace("numpy.linalg._linalg", "numpy.linalg")
        module = module.replace("numpy.linalg.linalg", "numpy.linalg")
        return f"{module}.{f.__name__}"

    numpy_ufuncs = [u for u in _UFUNCS if getattr(np, u.__name__, None) is u]
    return {
        "differentiable": sorted({qualified(f) for f in [*_FUNCTIONS, *numpy_ufuncs]}),
        "inspection": sorted({qualified(f) for f in _INSPECTION}),
    }
