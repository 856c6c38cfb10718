"""The ``ndarray`` methods a NumPy user reaches for, on tensors.

They are NumPy's names, so they follow NumPy (``t.argmax()`` flattens, ``t.sum()`` sums
everything), and each records exactly like the NumPy function it mirrors: a method is
that function called on the tensor (``t.sum(axis=0)`` is ``np.sum(t, axis=0)``), so a
tape sees the same ops and the gradient is the function's. Methods that only read values
(``item``, ``tolist``, ``nonzero``) are guarded reads, like ``float(t)``. Tensors are
immutable: the in-place methods (``fill``, ``sort``, ``resize``, ...) raise ``TypeError``.

``IRValue`` shares ``OperatorMixin`` but not these: the methods are for user code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .operators import ops


def _dispatch(func: Any, args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)`` through gradtape's NumPy dispatch (what NumPy's
    ``__array_function__`` protocol would reach, without NumPy's overhead)."""
    from . import tensor  # the dispatch module the ops installed (core imports no ops)

    return tensor._dispatch_module.dispatch_function(func, args, kwargs)


def _numpy_method(func: Any) -> Callable[..., Any]:
    """The method ``t.name(*args, **kwargs)``: ``func(t, *args, **kwargs)``."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _dispatch(func, (self, *args), kwargs)

    method.__name__ = method.__qualname__ = func.__name__
    method.__doc__ = f"``np.{func.__name__}(t, ...)``: NumPy's method, recorded like the function."
    return method


def _axes_argument(axes: tuple) -> Any:
    """NumPy's ``*axes`` convention: ``t.transpose(1, 0)``, ``t.transpose((1, 0))`` and
    ``t.transpose()`` (``None``: all axes reversed)."""
    if not axes:
        return None
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        return axes[0]
    return axes


def _immutable(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"Tensor.{name}() would change the tensor in place, but tensors are immutable. "
            f"Compute a new tensor instead (e.g. gt.fill / np.full_like for fill, np.sort "
            f"for sort), or call .numpy() for a mutable NumPy copy."
        )

    method.__name__ = method.__qualname__ = name
    return method


class NdarrayMethods:
    """NumPy's ``ndarray`` methods for ``Tensor`` (see the module docstring)."""

    __slots__ = ()

    # Reductions and scans: NumPy's signatures (axis=None, dtype, out, keepdims, ddof...).
    sum = _numpy_method(np.sum)
    mean = _numpy_method(np.mean)
    prod = _numpy_method(np.prod)
    std = _numpy_method(np.std)
    var = _numpy_method(np.var)
    max = _numpy_method(np.max)
    min = _numpy_method(np.min)
    cumsum = _numpy_method(np.cumsum)
    cumprod = _numpy_method(np.cumprod)
    argmax = _numpy_method(np.argmax)
    argmin = _numpy_method(np.argmin)
    any = _numpy_method(np.any)
    all = _numpy_method(np.all)
    argsort = _numpy_method(np.argsort)

    # Shapes and element selection.
    ravel = _numpy_method(np.ravel)
    squeeze = _numpy_method(np.squeeze)
    swapaxes = _numpy_method(np.swapaxes)
    repeat = _numpy_method(np.repeat)
    take = _numpy_method(np.take)
    diagonal = _numpy_method(np.diagonal)
    trace = _numpy_method(np.trace)
    dot = _numpy_method(np.dot)
    round = _numpy_method(np.round)
    copy = _numpy_method(np.copy)

    def flatten(self, order: str = "C") -> Any:
        """``np.ravel(t)``: a tensor is immutable, so a copy and a view are the same."""
        return _dispatch(np.ravel, (self,), {"order": order})

    def reshape(self, *shape: Any, order: str = "C") -> Any:
        """``t.reshape(2, 3)`` or ``t.reshape((2, 3))``, as NumPy's."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _dispatch(np.reshape, (self, tuple(shape)), {"order": order})

    def transpose(self, *axes: Any) -> Any:
        """``t.transpose()``, ``t.transpose(1, 0)`` or ``t.transpose((1, 0))``."""
        return _dispatch(np.transpose, (self, _axes_argument(axes)), {})

    def clip(self, min: Any = None, max: Any = None, out: Any = None,
             **kwargs: Any) -> Any:
        """``np.clip(t, min, max)``; NumPy's older names ``a_min``/``a_max`` work too."""
        if out is not None:
            raise TypeError("Tensor.clip(out=...) cannot write into a tensor: tensors are "
                            "immutable.")
        min = kwargs.pop("a_min", min)
        max = kwargs.pop("a_max", max)
        if kwargs:
            raise TypeError(f"Tensor.clip() got unexpected arguments {sorted(kwargs)}.")
        return _dispatch(np.clip, (self, min, max), {})

    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe",
               subok: bool = True, copy: bool = True) -> Any:
        """``t`` converted to ``dtype`` (``gt.cast``: differentiable between floats)."""
        del order, subok, copy  # a tensor's layout is not observable; it is never shared
        dtype = np.dtype(dtype)
        if not np.can_cast(self.dtype, dtype, casting=casting):
            raise TypeError(f"Cannot cast a tensor from {self.dtype} to {dtype} according "
                            f"to the rule {casting!r}.")
        return ops().cast(self, dtype)

    def conj(self) -> Any:
        """Complex conjugate (the tensor itself when real)."""
        return ops().conj(self)

    conjugate = conj

    @property
    def real(self) -> Any:
        """Real part (``np.real(t)``)."""
        return _dispatch(np.real, (self,), {})

    @property
    def imag(self) -> Any:
        """Imaginary part (``np.imag(t)``; zeros for a real tensor)."""
        return _dispatch(np.imag, (self,), {})

    # Value reads: guarded inside @gt.function, like float(t); no gradient flows.
    def item(self, *args: Any) -> Any:
        """One element as a Python scalar (``ndarray.item``)."""
        from .tensor import concrete_value

        return concrete_value(self).item(*args)

    def tolist(self) -> Any:
        """The values as nested Python lists (``ndarray.tolist``)."""
        from .tensor import concrete_value

        return concrete_value(self).tolist()

    def nonzero(self) -> tuple[np.ndarray, ...]:
        """The indices of the non-zero elements, as NumPy arrays (``np.nonzero``)."""
        from .tensor import concrete_value

        return np.nonzero(concrete_value(self))

    fill = _immutable("fill")
    sort = _immutable("sort")
    resize = _immutable("resize")
    partition = _immutable("partition")
    put = _immutable("put")
    itemset = _immutable("itemset")
    setfield = _immutable("setfield")
