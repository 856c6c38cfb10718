"""``keras.Variable``: a ``gt.Variable`` named as Keras 3 names a layer's weights."""

from __future__ import annotations

from typing import Any

from ..core.dtypes import numpy_dtype
from ..core.state import state
from ..core.tensor import Tensor
from ..core.variable import Variable as _Variable
from ..functions.trace import init_scope
from .naming import variable_path

__all__ = ["Variable"]


class Variable(_Variable):
    """Keras 3's variable: ``name`` is the bare name (``"kernel"``), ``path`` the layers it
    belongs to (``"dense/kernel"``). ``initializer`` is a value or a callable taking
    ``(shape, dtype)`` (a Keras initializer). Tapes, ``@gt.function`` and the optimizers
    treat it as any ``gt.Variable``."""

    __slots__ = ("_path", "_constraint", "_regularizer", "_created_trainable")

    def __init__(self, initializer: Any, shape: Any = None, dtype: Any = None,
                 trainable: bool = True, name: str | None = None):
        name = name or "variable"
        if callable(initializer) and not isinstance(initializer, Tensor):
            if shape is None:
                raise ValueError(f"Variable {name!r}: an initializer that is a callable "
                                 "needs `shape=`; pass the shape or an initial value.")
            initializer = _initial_value(initializer, shape, dtype)
        super().__init__(initializer, trainable=trainable, name=name,
                         dtype=None if dtype is None else numpy_dtype(dtype))
        self._path = variable_path(name)
        self._constraint = None  # a Keras constraint: fit applies it after each update
        self._regularizer = None  # its penalty is in the layer's `losses` while trainable
        self._created_trainable = bool(trainable)

    @property
    def name(self) -> str:
        return self._name

    @property
    def path(self) -> str:
        return self._path

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self._trainable = bool(value)

    def __repr__(self) -> str:
        head = f"<Variable path={self._path}, shape={tuple(self.shape)}, dtype={self.dtype.name}"
        if state.tracer is not None:
            return head + ">"
        return f"{head}, value={self._value}>"

    __str__ = __repr__


def _initial_value(initializer: Any, shape: Any, dtype: Any) -> Any:
    """The initializer's value, drawn eagerly even while a ``@gt.function`` traces (a
    model first called in a compiled ``train_step``): TF and Keras create variables under
    ``tf.init_scope()``, so an initializer that computes in NumPy (``Orthogonal``'s QR)
    works there too. Keras passes dtype by keyword: ``tf.random.normal`` works too."""
    dtype = numpy_dtype(dtype or "float32")
    if state.tracer is None:
        return initializer(tuple(shape), dtype=dtype)
    with init_scope():
        return initializer(tuple(shape), dtype=dtype)
