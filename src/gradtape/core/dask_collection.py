"""Dask's collection protocol on tensors, so ``dask.compute(loss, *grads)`` computes a
step's loss and gradients in one pass over the data, as it does for Dask arrays.

A tensor holding a Dask array is a Dask collection that delegates to its array:
``dask.compute`` gives a tensor holding the NumPy result, ``dask.persist`` a tensor
holding the persisted Dask array. A tensor holding anything else is not a collection
(``__dask_graph__`` is ``None``), so Dask passes it through unchanged. Computing is a
read of the value: inside ``@gt.function`` the tracer guards it, as for ``.numpy()``.
Dask runs the finalize step in a worker thread (or process), where no tracer is active,
so the guard is taken in the caller's thread when Dask asks for that step.
"""

from __future__ import annotations

from typing import Any

from .backends import is_lazy


class DaskCollection:
    """The protocol's methods, for ``Tensor``: each reads ``self._value``."""

    __slots__ = ()

    def __dask_graph__(self) -> Any:
        value = self._value  # type: ignore[attr-defined]
        return value.__dask_graph__() if is_lazy(value) else None

    def __dask_keys__(self) -> Any:
        return self._value.__dask_keys__()  # type: ignore[attr-defined]

    def __dask_layers__(self) -> Any:
        return self._value.__dask_layers__()  # type: ignore[attr-defined]

    def __dask_tokenize__(self) -> Any:
        return ("gradtape.Tensor", self._value.name)  # type: ignore[attr-defined]

    @property
    def __dask_optimize__(self) -> Any:
        return self._value.__dask_optimize__  # type: ignore[attr-defined]

    @property
    def __dask_scheduler__(self) -> Any:
        return self._value.__dask_scheduler__  # type: ignore[attr-defined]

    def __dask_postcompute__(self) -> Any:
        _guard_read_while_tracing(self)
        finalize, args = self._value.__dask_postcompute__()  # type: ignore[attr-defined]
        return _computed_tensor, (finalize, args)

    def __dask_postpersist__(self) -> Any:
        rebuild, args = self._value.__dask_postpersist__()  # type: ignore[attr-defined]
        return _persisted_tensor, (rebuild, args)


def _guard_read_while_tracing(tensor: Any) -> None:
    """Inside ``@gt.function``, ``dask.compute(t)`` reads ``t``'s value: the trace keeps
    a guard on it, else later calls would return this call's numbers. The value is
    computed here (in the caller's thread, where the tracer is), once per trace."""
    from .state import state
    from .tensor import concrete_value

    if state.tracer is not None:
        concrete_value(tensor)


def _computed_tensor(results: Any, finalize: Any, args: tuple) -> Any:
    from .tensor import wrap

    return wrap(finalize(results, *args))


def _persisted_tensor(dsk: Any, rebuild: Any, args: tuple, rename: Any = None) -> Any:
    from .tensor import wrap

    return wrap(rebuild(dsk, *args, rename=rename))
