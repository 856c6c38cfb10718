"""Tensor: an immutable NumPy array that tapes can watch, and TF's conversion rules."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from . import backends
from .backends import kind_of
from .dask_collection import DaskCollection
from .devices import DEVICE_NAME
from .gradient_drops import report_conversion
from .methods import NdarrayMethods
from .operators import OperatorMixin
from .state import state
from .tensor_shape import _CACHE as _SHAPES
from .tensor_shape import TensorShape, shape_of

# Every tensor gets a fresh integer id; tapes track ids, never objects, so an id is
# never reused while a record might still refer to it.
_next_id = itertools.count(1).__next__


class Tensor(NdarrayMethods, OperatorMixin, DaskCollection):
    """An immutable n-dimensional array, TF-style. Operators and NumPy functions on it
    run at once (eagerly) and are recorded by any tape that watches an input."""

    __slots__ = ("_value", "_id", "__weakref__")
    # Variables read inside a tape are watched automatically; plain tensors never are.
    _watch_on_read = False

    def __init__(self, value: Any, dtype: Any = None):
        self._value = _to_array(value, dtype)
        self._id = _next_id()

    @classmethod
    def _alias(cls, array: Any, tensor_id: int) -> Tensor:
        """A tensor that a tape sees as the existing tensor ``tensor_id``."""
        t = object.__new__(Tensor)
        t._value = array
        t._id = tensor_id
        return t

    # --- the array it holds -------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The value as a NumPy array (a NumPy scalar for rank 0, as in TF)."""
        value = self._value
        if isinstance(value, np.ndarray):
            out = value.copy()
            return _read(self, "array", out[()] if out.ndim == 0 else out)
        if kind_of(value) is not None:  # the user asks for the value: Dask computes it
            out = backends.to_numpy(value)
            return _read(self, "array", out[()] if out.ndim == 0 else out)
        return _read(self, "array", value)

    @property
    def shape(self) -> TensorShape:
        """TF's TensorShape (a tuple subclass: ``.as_list()``, ``.rank``, ...)."""
        try:  # shapes repeat: a dict lookup, not a new object
            return _SHAPES[self._value.shape]
        except KeyError:
            return shape_of(self._value.shape)

    def get_shape(self) -> TensorShape:
        """Same as :attr:`shape` (TF's ``Tensor.get_shape()``)."""
        return self.shape

    def set_shape(self, shape: Any) -> None:
        """TF's ``Tensor.set_shape`` on an eager tensor: a check only (its shape is known),
        raising TF's ``ValueError`` when ``shape`` (``None`` entries: any size) does not
        fit it. ``None`` (an unknown rank) fits every shape."""
        if shape is None:
            return
        supplied = TensorShape(shape)
        if not self.shape.is_compatible_with(supplied):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied "
                             f"shape {supplied}.")

    @property
    def dtype(self) -> np.dtype:
        value = self._value
        if type(value) in backends.NUMPY_CLASSES:
            return value.dtype
        return backends.dtype_of(value)  # an array-API library's dtype: NumPy's, as TF's

    @property
    def device(self) -> str:
        """Where the tensor lives (TF's name): always the process's CPU."""
        return DEVICE_NAME

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def size(self) -> int:
        return self._value.size

    def __len__(self) -> int:
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`; use t.shape or t.size.")
        return len(self._value)

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(len(self._value)):
            yield self[i]

    def __array__(self, dtype=None, copy=None):
        # NumPy's conversion (np.asarray, a list of tensors handed to NumPy) leaves the
        # tape: say so when a tape or accumulator watches this tensor (a @gt.function
        # trace keeps the report for the calls its outer tapes watch).
        if state.recording or state.accumulators or state.tracer is not None:
            report_conversion(self)
        value = np.asarray(self._value)
        if dtype is not None and value.dtype != dtype:
            return _read(self, "array", value.astype(dtype))
        # Our arrays are shared with tapes: hand out a copy unless told not to.
        return _read(self, "array", value if copy is False else value.copy())

    def __float__(self) -> float:
        return _read(self, "float", float(self._value))

    def __int__(self) -> int:
        return _read(self, "int", int(self._value))

    def __index__(self) -> int:
        if not np.issubdtype(self.dtype, np.integer):
            raise TypeError(f"Only integer tensors can be used as an index, got {self.dtype}.")
        return _read(self, "int", int(self._value))

    def __bool__(self) -> bool:
        if self._value.size != 1:
            raise ValueError(
                "The truth value of a tensor with more than one element is ambiguous. "
                "Use t.numpy().any() or t.numpy().all()."
            )
        return _read(self, "bool", bool(self._value))

    def __complex__(self) -> complex:
        return _read(self, "complex", complex(self._value))

    def __repr__(self) -> str:
        name = _symbolic_name(self)
        if name is not None:  # inside @gt.function: no value, as TF's graph tensors
            return f'Tensor("{name}", shape={self.shape}, dtype={self.dtype.name})'
        return f"Tensor({format_value(self._value)}, shape={self.shape}, dtype={self.dtype.name})"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if spec and self._value.ndim == 0:
            if _symbolic_name(self) is not None:
                raise TypeError(
                    f"unsupported format string {spec!r} passed to a traced Tensor: inside "
                    "@gt.function a tensor has no value to format (as in TF). Format "
                    "float(t) instead (a guard: the function traces again when it "
                    "changes), or format the result after the call."
                )
            return format(self._value.item(), spec)
        return repr(self)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def ref(self):
        """A hashable reference to this tensor (TF's ``Tensor.ref()``)."""
        return _Ref(self)

    # --- NumPy protocol: np.sin(t), np.sum(t), ... record like gt.sin(t) -----------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _dispatch_module.dispatch_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _dispatch_module.dispatch_function(func, args, kwargs)


# ``gradtape.ops.numpy_dispatch``, installed by it when it is imported: the ops need
# Tensor, so this module cannot import them (the same for operators.install_ops).
_dispatch_module: Any = None


def install_numpy_dispatch(module: Any) -> None:
    global _dispatch_module
    _dispatch_module = module


def _read(tensor: Tensor, kind: str, result: Any) -> Any:
    """Python read ``tensor``'s value as ``result``: while a ``@gt.function`` traces, the
    tracer keeps it as a guard (checked on later calls)."""
    tracer = state.tracer
    if tracer is not None:
        tracer.on_read(tensor, kind, result)
    return result


def _symbolic_name(tensor: Tensor) -> str | None:
    """While a ``@gt.function`` traces, the name its repr shows for ``tensor`` instead
    of a value that later calls of the trace may not share (None: show the value)."""
    tracer = state.tracer
    return None if tracer is None else tracer.symbolic_name(tensor)


def read_value(tensor: Tensor, value: Any) -> Any:
    """``value``, computed from ``tensor`` where the user asks for it (``dask.compute``):
    a read, as ``.numpy()`` is."""
    return _read(tensor, "array", value)


def concrete_value(tensor: Tensor) -> Any:
    """``tensor``'s array, for op wrappers that compute Python values from it (index
    arrays, pad widths, label checks): while a ``@gt.function`` traces, a guard on the
    whole value, so a trace is never reused with other values."""
    return _read(tensor, "array", tensor._value)


def format_value(value: Any) -> str:
    """NumPy's printing, as TF shows it: ``75.0`` for scalars, a new line before arrays."""
    if backends.is_lazy(value):  # printing must not compute a Dask graph
        return repr(value)
    value = np.asarray(value)
    if value.ndim == 0:
        return str(value[()])
    text = str(value)
    return "\n" + text if "\n" in text else text


_new_object = object.__new__


def wrap(array: Any) -> Tensor:
    """A tensor around an op's fresh result (no copy, no conversion): the one way every
    op, gradient and generated function turns an array it made into a tensor."""
    t = _new_object(Tensor)
    t._value = array
    t._id = _next_id()
    return t


class _Ref:
    """Hashable wrapper returned by ``Tensor.ref()``."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor: Tensor):
        self._tensor = tensor

    def deref(self) -> Tensor:
        return self._tensor

    def __hash__(self) -> int:
        return hash(self._tensor._id)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Ref) and other._tensor._id == self._tensor._id


# --- conversion, with TensorFlow's default dtypes --------------------------------------

_INT32 = np.iinfo(np.int32)


def _python_leaves(value: Any) -> list[Any] | None:
    """The leaves of a (nested) list of Python scalars, or None if any leaf is something
    else (a NumPy value or a tensor: then NumPy's inference decides, as in TF)."""
    leaves: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, (bool, int, float, complex)) and not isinstance(item, np.generic):
            leaves.append(item)
        else:
            return None
    return leaves


def _scalar_dtype(leaves: list[Any]) -> np.dtype | None:
    """TF's dtype for Python scalars: bool, int32 (int64 if too big), float32, complex128."""
    kinds = {type(v) for v in leaves}
    if complex in kinds:
        return np.dtype(np.complex128)
    if float in kinds:
        return np.dtype(np.float32)
    if int in kinds:
        big = any(not _INT32.min <= v <= _INT32.max for v in leaves if type(v) is int)
        return np.dtype(np.int64 if big else np.int32)
    if bool in kinds:
        return np.dtype(np.bool_)
    return None


_SCALAR_DTYPES = {float: np.dtype(np.float32), bool: np.dtype(np.bool_),
                  complex: np.dtype(np.complex128)}  # ints depend on their size


def _default_dtype(value: Any) -> np.dtype | None:
    """TF's dtype for Python values: float -> float32, int -> int32, complex -> complex128.
    NumPy values (and lists holding them) keep NumPy's dtype."""
    if isinstance(value, (np.ndarray, np.generic)):
        return None
    kind = _SCALAR_DTYPES.get(type(value))
    if kind is not None:
        return kind
    if isinstance(value, (bool, int, float, complex)):
        return _scalar_dtype([value])
    if isinstance(value, (list, tuple)):
        leaves = _python_leaves(value)
        return None if leaves is None else _scalar_dtype(leaves)
    return None


def _check_python_conversion(value: Any, dtype: np.dtype) -> None:
    """TF refuses to lose information converting Python numbers: 1.5 to int32, 1j to
    float32."""
    leaves = _python_leaves(value)
    if not leaves:
        return
    for v in leaves:
        if isinstance(v, complex) and dtype.kind != "c":
            raise TypeError(f"Cannot convert {v!r} to a tensor of dtype {dtype.name}: it is "
                            "complex. Use a complex dtype, or pass its real part.")
        if isinstance(v, float) and dtype.kind in "iub" and not float(v).is_integer():
            raise TypeError(f"Cannot convert {v!r} to a tensor of dtype {dtype.name} without "
                            "losing its fraction. Round it first, or use a float dtype.")


def _to_array(value: Any, dtype: Any = None) -> np.ndarray:
    if value is None:  # np.array(None, float32) would be nan
        raise _unsupported(value)
    if isinstance(value, Tensor):
        value = _read(value, "array", value._value)
    kind = kind_of(value)
    if kind is not None:  # Dask, CuPy, ...: kept as the user's array type, never NumPy's
        return backends.convert(value, kind, None if dtype is None else np.dtype(dtype))
    if dtype is None:
        dtype = _default_dtype(value)
    else:
        dtype = np.dtype(dtype)
        if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.complexfloating):
            if not np.issubdtype(dtype, np.complexfloating):
                raise TypeError(f"Cannot convert a complex array to {dtype.name}; take its "
                                "real part (gt.real) first.")
        _check_python_conversion(value, dtype)
    # Always a private copy: a tensor must not change when the caller's array does.
    array = np.array(value, dtype=dtype)
    if array.dtype.kind in "USO":
        return _string_array(value, array)
    return array


def _string_array(value: Any, array: np.ndarray) -> np.ndarray:
    """TF's ``tf.string`` tensor: an object array of ``bytes`` (``.numpy()`` gives
    ``b'abc'``, as TF); anything but text is not a tensor's value."""
    items = array.reshape(-1).tolist() if array.dtype.kind == "O" else []
    if not all(isinstance(item, (str, bytes)) for item in items):
        raise _unsupported(value)
    text = np.empty(array.shape, object)
    for index, item in np.ndenumerate(array):
        text[index] = item.encode() if isinstance(item, str) else bytes(item)
    return text


def _unsupported(value: Any) -> Exception:
    """TF's error for values that are not numbers (``None`` above all)."""
    if value is None or None in _leaves(value):
        return ValueError("None values not supported: a tensor or variable needs numbers "
                          "(a Python number, a nested list of them, an array or a tensor).")
    return TypeError(f"Cannot convert {value!r} to a tensor: its elements are not numbers "
                     "of one dtype. Pass numbers, a nested list of them, or an array.")


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> Tensor:
    """Create a tensor: Python floats become float32, ints int32, NumPy arrays keep their
    dtype (TensorFlow's rules). ``shape`` broadcasts a scalar or reshapes, as in TF."""
    del name  # accepted for TF compatibility
    if isinstance(value, Tensor) and dtype is None and shape is None:
        return Tensor(value)
    array = _to_array(value, dtype)
    if shape is not None:
        shape = tuple(shape)
        if array.size == 1:
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        else:
            array = array.reshape(shape)
    t = Tensor.__new__(Tensor)
    t._value = array
    t._id = _next_id()
    return t


# TF packs a list or tuple that holds a tensor into one tensor, differentiably (its
# autopacking conversion): ops/stacking.py installs its ``stack`` here, which core cannot
# import. Keras's losses and ``keras.ops`` convert their arguments through this function.
pack_list: Any = None


def _holds_tensor(items: list | tuple) -> bool:
    return any(isinstance(i, Tensor) or (isinstance(i, (list, tuple)) and _holds_tensor(i))
               for i in items)


def convert_to_tensor(value: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """Return ``value`` as a Tensor; a tensor of the right dtype is returned as is, and a
    list or tuple holding tensors is stacked into one, its gradient kept (TF's packing)."""
    del name
    if isinstance(value, Tensor):
        if dtype is not None and np.dtype(dtype) != value.dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {np.dtype(dtype).name} for a tensor of "
                f"dtype {value.dtype.name}; use gt.cast to change the dtype."
            )
        if value._watch_on_read:  # a Variable: a read of its current value, as in TF
            return value.read_value()
        return value
    if isinstance(value, (list, tuple)) and pack_list is not None and _holds_tensor(value):
        return convert_to_tensor(pack_list(value), dtype)
    return constant(value, dtype)


def is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor)
