"""``gt.experimental.numpy`` (TF's ``tf.experimental.numpy``; also ``gradtape.numpy``): a
NumPy namespace whose functions differentiate, like ``jax.numpy``.

Each function is the gradtape op that ``np.<name>`` on a tensor already runs (the
NumPy-dispatch registry, ``ops/numpy_dispatch.py``), called directly, with one more
conversion: a list or tuple holding tensors anywhere is packed into one tensor with
gradtape's ``stack`` (TF packs it so), so ``tnp.mean([t, t + 2])`` and
``tnp.array([x, y])`` keep their gradient where plain NumPy would convert the list and
drop it. Functions that take a sequence of arrays (``concatenate``, ``stack``...) keep
the sequence and pack each element. Results are tensors (``tnp.ndarray`` is
``gt.Tensor``). A NumPy function gradtape has no gradient rule for is not here: it
raises an ``AttributeError`` that says so.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.namespaces import namespace
from ..core.tensor import Tensor, constant
from ..ops import numpy_dispatch as _dispatch
from ..ops.promotion import numpy_rule
from ..ops.registry import holds_tensor, operand

__all__ = ["build"]

# Arguments that are sequences of arrays (by position): kept as sequences.
_SEQUENCES = {"concatenate": (0,), "stack": (0,), "vstack": (0,), "hstack": (0,),
              "dstack": (0,), "column_stack": (0,), "row_stack": (0,), "select": (0, 1),
              "block": (0,)}
_DTYPES = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float16", "float32", "float64", "complex64", "complex128")
_CONSTANTS = {"pi": np.pi, "e": np.e, "inf": np.inf, "nan": np.nan, "newaxis": None}


def _packed(value: Any) -> Any:
    """A list or tuple holding a tensor, as one tensor (differentiable); else as it is."""
    if isinstance(value, (list, tuple)) and holds_tensor(value):
        return operand(value)
    return value


def _wrapped(name: str, op: Callable[..., Any]) -> Callable[..., Any]:
    sequences = _SEQUENCES.get(name, ())

    def function(*args: Any, **kwargs: Any) -> Any:
        args = tuple(type(a)(map(_packed, a)) if i in sequences and
                     isinstance(a, (list, tuple)) else _packed(a)
                     for i, a in enumerate(args))
        return op(*args, **{k: _packed(v) for k, v in kwargs.items()})

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"``numpy.{name}`` on tensors and nests of them, differentiable "
                        f"(gradtape's rule for it).")
    return numpy_rule(function)  # NumPy's promotion, as TF's tnp promotes by itself


def _inspection(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """A NumPy function that only reads values (``shape``, ``allclose``): NumPy's."""

    def function(*args: Any, **kwargs: Any) -> Any:
        return func(*map(_packed, args), **{k: _packed(v) for k, v in kwargs.items()})

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``numpy.{name}``: reads values only (no gradient to keep)."
    return function


@numpy_rule
def asarray(a: Any, dtype: Any = None) -> Tensor:
    """``a`` as a tensor: a tensor as it is (cast to ``dtype``), a nest holding tensors
    packed (differentiable), anything else with NumPy's dtypes."""
    if isinstance(a, Tensor) or (isinstance(a, (list, tuple)) and holds_tensor(a)):
        packed = _packed(a)
        return packed if dtype is None else _cast(packed, dtype)
    return constant(np.asarray(a, dtype=dtype))


def array(object: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> Tensor:
    """``numpy.array`` as a tensor (``asarray``'s conversions), with ``ndmin``."""
    del copy  # tensors are immutable: a copy is never observable
    result = asarray(object, dtype)
    while len(result.shape) < ndmin:
        result = _dispatch._FUNCTIONS[np.expand_dims](result, 0)
    return result


def _cast(x: Any, dtype: Any) -> Tensor:
    from ..ops.elementwise import cast

    return cast(x, np.dtype(dtype))


def _creation(func: Callable[..., np.ndarray]) -> Callable[..., Tensor]:
    """A NumPy creation function (``zeros``, ``arange``...) returning a constant tensor."""

    def create(*args: Any, **kwargs: Any) -> Tensor:
        return constant(func(*args, **kwargs))

    create.__name__ = create.__qualname__ = func.__name__
    create.__doc__ = f"``numpy.{func.__name__}`` as a (constant) tensor."
    return create


class _RClass:
    """``tnp.r_[...]``: NumPy's ``r_`` with tensors (concatenated differentiably).
    Slices are ``arange`` (or ``linspace`` for a complex step); string directives are
    not supported."""

    @numpy_rule
    def __getitem__(self, key: Any) -> Tensor:
        items = key if isinstance(key, tuple) else (key,)
        parts = [self._part(item) for item in items]
        return _dispatch._FUNCTIONS[np.concatenate](parts)

    @staticmethod
    def _part(item: Any) -> Any:
        if isinstance(item, str):
            raise ValueError(f"tnp.r_ does not support NumPy's string directives "
                             f"({item!r}); use tnp.concatenate or tnp.stack with axis=.")
        if isinstance(item, slice):
            return constant(np.r_[item])
        return _dispatch._FUNCTIONS[np.atleast_1d](_packed(item))


def _public_numpy_names(module: types.ModuleType) -> dict[str, Any]:
    """The public names ``module`` holds now: ``vars``, not ``getattr``, so that NumPy's
    lazily loaded submodules (``numpy.testing``, ``numpy.f2py``...) stay unloaded."""
    return {name: value for name, value in vars(module).items() if not name.startswith("_")}


def _rules_for(module: types.ModuleType) -> dict[str, Callable[..., Any]]:
    """Each public name of NumPy's ``module`` that gradtape differentiates, wrapped."""
    members: dict[str, Callable[..., Any]] = {}
    for name, func in _public_numpy_names(module).items():
        try:
            op = _dispatch._FUNCTIONS.get(func) or _dispatch._UFUNCS.get(func)
        except TypeError:  # unhashable attributes
            continue
        if op is not None:
            members[name] = _wrapped(name, op)
        elif func in _dispatch._INSPECTION:
            members[name] = _inspection(name, func)
    return members


def _missing(module_name: str, numpy_module: types.ModuleType) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        plain = f"module {module_name!r} has no attribute {name!r}"
        if name.startswith("_") or not hasattr(numpy_module, name):
            raise AttributeError(plain)
        raise AttributeError(
            f"{plain}: gradtape has no gradient rule for {numpy_module.__name__}.{name}, "
            f"so its NumPy namespace leaves it out; call np.{name} on .numpy() values "
            f"(no gradient flows) or build it from the functions here.")

    return __getattr__


def build() -> types.ModuleType:
    """The ``gradtape.experimental.numpy`` module (with ``linalg`` and ``fft``)."""
    members: dict[str, Any] = dict(_rules_for(np))
    creation = ("zeros", "ones", "empty", "full", "arange", "eye", "identity", "logspace",
                "geomspace", "tri")
    members.update({name: _creation(getattr(np, name)) for name in creation})
    members.update({"array": array, "asarray": asarray, "asanyarray": asarray,
                    "r_": _RClass(), "ndarray": Tensor})
    members.update({name: getattr(np, name) for name in _DTYPES})
    members.update(_CONSTANTS)
    name = "gradtape.experimental.numpy"
    for sub in ("linalg", "fft"):
        numpy_sub = getattr(np, sub)
        members[sub] = namespace(f"{name}.{sub}", f"numpy.{sub} on tensors.",
                                 _rules_for(numpy_sub))
        members[sub].__getattr__ = _missing(f"{name}.{sub}", numpy_sub)
    module = namespace(name, __doc__, members)
    module.__getattr__ = _missing(name, np)
    return module
