"""Python operators shared by tensors, variables and IR values.

Every operator calls the same op function a user could call, so ``a * b`` records on a
tape when ``a`` is a Tensor and emits an IR equation when ``a`` is an IR value.
"""

from __future__ import annotations


class OperatorMixin:
    __slots__ = ()
    # Lets NumPy defer to us in ``ndarray + Tensor`` instead of looping elementwise.
    __array_priority__ = 1000

    def __add__(self, other):
        return _ops.add(self, other)

    def __radd__(self, other):
        return _ops.add(other, self)

    def __sub__(self, other):
        return _ops.subtract(self, other)

    def __rsub__(self, other):
        return _ops.subtract(other, self)

    def __mul__(self, other):
        return _ops.multiply(self, other)

    def __rmul__(self, other):
        return _ops.multiply(other, self)

    def __truediv__(self, other):
        return _ops.divide(self, other)

    def __rtruediv__(self, other):
        return _ops.divide(other, self)

    def __floordiv__(self, other):
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _ops.floor_divide(other, self)

    def __mod__(self, other):
        return _ops.mod(self, other)

    def __rmod__(self, other):
        return _ops.mod(other, self)

    def __pow__(self, other):
        return _ops.power(self, other)

    def __rpow__(self, other):
        return _ops.power(other, self)

    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.matmul(other, self)

    def __neg__(self):
        return _ops.negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.abs(self)

    def __lt__(self, other):
        return _ops.less(self, other)

    def __le__(self, other):
        return _ops.less_equal(self, other)

    def __gt__(self, other):
        return _ops.greater(self, other)

    def __ge__(self, other):
        return _ops.greater_equal(self, other)

    def __eq__(self, other):
        return _ops.equal(self, other)

    def __ne__(self, other):
        return _ops.not_equal(self, other)

    def __and__(self, other):
        return _ops.logical_and(self, other)

    def __or__(self, other):
        return _ops.logical_or(self, other)

    def __invert__(self):
        return _ops.logical_not(self)

    def __getitem__(self, index):
        return _ops.getitem(self, index)

    @property
    def T(self):
        return _ops.transpose(self)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _ops.reshape(self, tuple(shape))

    def sum(self, axis=None, keepdims=False):
        return _ops.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return _ops.mean(self, axis=axis, keepdims=keepdims)

    def astype(self, dtype):
        return _ops.cast(self, dtype)

    __hash__ = None  # type: ignore[assignment]  # == is elementwise, as in NumPy


# The op namespace, installed by ``gradtape.ops`` once every op is defined (the ops
# themselves need Tensor, so this module cannot import them at the top).
_ops = None  # type: ignore[assignment]


def install_ops(namespace) -> None:
    global _ops
    _ops = namespace


def ops():
    """The op namespace ``gradtape.ops`` installed (for the core modules below it)."""
    return _ops
