"""More NumPy functions on tensors: each a composition of existing primitives where that
gives correct derivatives of every order and readable generated code.

Only ``signbit`` (a boolean) is a new primitive here, with no derivative rule (order
statistics, NaN-aware reductions and ``linspace`` are in ``numpy_stats``).
Functions that only inspect values (``iscomplex``, one-argument ``where``) run on the
arrays and return plain NumPy results.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.tensor import Tensor, concrete_value, constant
from . import elementwise as _ew
from . import index as _index
from . import reduce as _reduce
from . import shape as _shape
from . import stacking as _stacking
from .arrange import flip
from .linalg.products import diagonal, diagonal_scatter_p
from .numpy_dispatch import implements, register_ufunc
from .registry import Primitive, bind, operand

__all__: list[str] = []



def _slice(x: Any, axis: int, start: int | None, stop: int | None) -> Any:
    """``x[..., start:stop, ...]`` at ``axis`` (a static slice)."""
    return _index.index_axis(x, axis, ("slice", start, stop, None))


def _is_complex(x: Any) -> bool:
    return np.issubdtype(x.dtype, np.complexfloating)


def _floating(x: Any) -> Any:
    """``x`` as a floating tensor (NumPy's float64 for integers and booleans)."""
    x = operand(x)
    if np.issubdtype(x.dtype, np.inexact):
        return x
    return _ew.cast(x, np.float64)


def _dtype_of(value: Any) -> Any:
    """What ``np.result_type`` should see for ``value``: a tensor's dtype, a Python scalar
    as it is (weak, as NumPy 2 treats it), anything else as an array."""
    if isinstance(value, Tensor):
        return value.dtype
    if isinstance(value, (bool, int, float, complex)):
        return value
    return np.asarray(value).dtype


def _numpy_array(value: Any, dtype: Any = None) -> Any:
    """A tensor as it is, anything else converted by NumPy's rules (``1.0`` is float64,
    not TF's float32)."""
    if isinstance(value, Tensor):
        return value if dtype is None else _ew.cast(value, dtype)
    return constant(np.asarray(value, dtype))


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise TypeError(f"numpy.{name}(..., out=) cannot write into a tensor: tensors are "
                        "immutable.")


# --- diagonals --------------------------------------------------------------------------

@implements(np.diag)
def diag(v: Any, k: int = 0) -> Any:
    """NumPy's ``diag``: the ``k``-th diagonal of a matrix, or a square matrix with a
    vector on its ``k``-th diagonal (each direction the other's gradient)."""
    v = operand(v)
    k = int(k)
    if len(v.shape) == 2:
        return diagonal(v, k)
    if len(v.shape) != 1:
        raise ValueError("diag needs a tensor of rank 1 or 2.")
    n = v.shape[0] + abs(k)
    return bind(diagonal_scatter_p, v, offset=k, axis1=0, axis2=1, shape=(n, n))


@implements(np.diagflat)
def diagflat(v: Any, k: int = 0) -> Any:
    """NumPy's ``diagflat``: the flattened input on the ``k``-th diagonal of a matrix."""
    return diag(_shape.ravel(operand(v)), k)


# --- elementwise functions built from others ------------------------------------------

@implements(np.angle)
def angle(z: Any, deg: bool = False) -> Any:
    """NumPy's ``angle``: ``arctan2(imag, real)``; constant (0 or pi) on real tensors, with a
    zero gradient."""
    z = operand(z)
    if _is_complex(z):
        out = _ew.arctan2(_ew.imag(z), _ew.real(z))
    else:  # arctan2(0, z): pi where the sign bit is set; sign's zero gradient keeps the
        # result connected without arctan2's 0/0 at z == 0
        z = _floating(z)
        out = _ew.cast(_ew.where(signbit(z), math.pi, 0.0), z.dtype) + _ew.sign(z) * 0.0
    return out * (180.0 / math.pi) if deg else out


def _scaled_by(factor: float, name: str):
    def op(x: Any) -> Any:
        x = _floating(x)
        if _is_complex(x):
            raise TypeError(f"numpy.{name} is not defined for complex tensors.")
        return x * factor

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"NumPy's ``{name}``: the input times {factor!r}."
    return op


deg2rad = _scaled_by(math.pi / 180.0, "deg2rad")
rad2deg = _scaled_by(180.0 / math.pi, "rad2deg")
register_ufunc(np.deg2rad, deg2rad)
register_ufunc(np.radians, deg2rad)
register_ufunc(np.rad2deg, rad2deg)
register_ufunc(np.degrees, rad2deg)


def fabs(x: Any) -> Any:
    """NumPy's ``fabs``: ``abs`` of a real tensor (complex is a TypeError, as in NumPy)."""
    x = _floating(x)
    if _is_complex(x):
        raise TypeError("numpy.fabs is not defined for complex tensors; use np.abs.")
    return _ew.abs(x)


register_ufunc(np.fabs, fabs)

_LN2 = math.log(2.0)


def logaddexp2(a: Any, b: Any) -> Any:
    """``log2(2**a + 2**b)``, through ``logaddexp`` (stable for large inputs)."""
    return _ew.logaddexp(_floating(a) * _LN2, _floating(b) * _LN2) * (1.0 / _LN2)


register_ufunc(np.logaddexp2, logaddexp2)


_SINC_SERIES_BELOW = 1e-2  # |pi x| under which sinc is its Taylor polynomial


@implements(np.sinc)
def sinc(x: Any) -> Any:
    """NumPy's normalized ``sinc``: ``sin(pi x) / (pi x)``, 1 at 0. Near 0 its Taylor
    polynomial stands in: the quotient's derivatives cancel catastrophically there."""
    x = _floating(x)
    y = x * math.pi
    near_zero = _ew.less(_ew.abs(y), _SINC_SERIES_BELOW)
    safe = _ew.where(near_zero, 1.0, y)
    y2 = y * y
    series = 1.0 + y2 * (-1.0 / 6.0 + y2 * (1.0 / 120.0 - y2 * (1.0 / 5040.0)))
    return _ew.where(near_zero, series, _ew.sin(safe) / safe)


@implements(np.nan_to_num)
def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    """NumPy's ``nan_to_num``: NaN and infinities replaced by finite numbers. The gradient
    is 1 where the input was finite and 0 where it was replaced."""
    del copy
    x = operand(x)
    if _is_complex(x):
        raise TypeError("numpy.nan_to_num on complex tensors is not supported; apply it to "
                        "np.real and np.imag separately.")
    if not np.issubdtype(x.dtype, np.floating):
        return x
    info = np.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = -info.max if neginf is None else neginf
    out = _ew.where(_ew.isnan(x), nan, x)
    out = _ew.where(_ew.logical_and(_ew.greater(x, 0), _ew.isinf(x)), big, out)
    return _ew.where(_ew.logical_and(_ew.less(x, 0), _ew.isinf(x)), small, out)


def _sign_of_sign_bit(x: Any) -> Any:
    return _ew.where(signbit(x), -1.0, 1.0)


def copysign(x1: Any, x2: Any) -> Any:
    """``|x1|`` with the sign (bit) of ``x2``; no gradient flows to ``x2``."""
    x1 = _floating(x1)
    dtype = np.result_type(x1.dtype, _dtype_of(x2))
    return _ew.cast(_ew.abs(x1) * _sign_of_sign_bit(x2), dtype)


register_ufunc(np.copysign, copysign)


def heaviside(x1: Any, x2: Any) -> Any:
    """NumPy's ``heaviside``: 0 below 0, ``x2`` at 0, 1 above; the gradient for ``x1`` is
    zeros (like TF's ``sign``), the one for ``x2`` flows where ``x1 == 0``."""
    x1 = _floating(x1)
    step = _ew.where(_ew.less(x1, 0), 0.0, _ew.where(_ew.greater(x1, 0), 1.0, x2))
    return _ew.cast(step, np.result_type(x1.dtype, _dtype_of(x2))) + _ew.sign(x1) * 0.0


register_ufunc(np.heaviside, heaviside)


def ldexp(x1: Any, x2: Any) -> Any:
    """``x1 * 2**x2`` with integer exponents (constants to tapes)."""
    exponent = concrete_value(x2) if isinstance(x2, Tensor) else np.asarray(x2)
    x1 = _floating(x1)
    return x1 * np.ldexp(np.ones((), x1.dtype), exponent)


register_ufunc(np.ldexp, ldexp)


def frexp(x: Any) -> tuple:
    """``(mantissa, exponent)`` with ``x == mantissa * 2**exponent``; the mantissa is
    differentiable (``x`` divided by a constant power of two), the exponent an integer."""
    x = _floating(x)
    _, exponent = np.frexp(concrete_value(x) if isinstance(x, Tensor) else x)
    return x * np.ldexp(np.ones((), x.dtype), -exponent), constant(exponent)


register_ufunc(np.frexp, frexp)

signbit_p = Primitive("signbit", np.signbit, elementwise=True)  # no vjp: a boolean


def signbit(x: Any) -> Any:
    """Whether the sign bit is set (not differentiable)."""
    return bind(signbit_p, operand(x))


register_ufunc(np.signbit, signbit)


@implements(np.real_if_close)
def real_if_close(a: Any, tol: float = 100) -> Any:
    """The real part of a complex tensor whose imaginary parts are all within ``tol``
    machine epsilons of 0 (NumPy's rule); else the tensor as it is."""
    a = operand(a)
    if not _is_complex(a):
        return a
    eps = np.finfo(np.real(np.zeros((), a.dtype)).dtype).eps
    limit = tol * eps if tol > 1 else tol
    if np.all(np.abs(np.imag(concrete_value(a))) < limit):
        return _ew.real(a)
    return a


# --- constants of a tensor's shape, and inspection ---------------------------------------

@implements(np.full_like)
def full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K",
              subok: bool = True, shape: Any = None, *, device: Any = None) -> Any:
    """A constant of ``a``'s shape (no gradient: it does not depend on ``a``'s values)."""
    del order, subok, device
    value = np.full(a.shape if shape is None else shape, fill_value,
                    a.dtype if dtype is None else dtype)
    return constant(value)


@implements(np.empty_like)
def empty_like(prototype: Any, dtype: Any = None, order: str = "K", subok: bool = True,
               shape: Any = None, *, device: Any = None) -> Any:
    """Zeros of the prototype's shape (NumPy leaves them unset; a constant either way)."""
    return full_like(prototype, 0, dtype, shape=shape)


def _inspect(func):
    """``func`` run on the arrays of its tensor arguments: a plain NumPy result."""

    def run(*args, **kwargs):
        def unwrap(x):
            return concrete_value(x) if isinstance(x, Tensor) else x

        return func(*map(unwrap, args), **{k: unwrap(v) for k, v in kwargs.items()})

    return implements(func)(run)


for _func in (np.iscomplex, np.isreal, np.isneginf, np.isposinf):
    _inspect(_func)


@implements(np.where)
def _np_where(condition: Any, *xy: Any) -> Any:
    """NumPy's ``where``: elementwise select with ``x`` and ``y`` (differentiable), or the
    indices of the true entries with the condition alone (an inspection, like
    ``np.nonzero``). Replaces the two-argument registration in ``elementwise``."""
    if not xy:
        cond = concrete_value(condition) if isinstance(condition, Tensor) else condition
        return np.nonzero(cond)
    if len(xy) != 2:
        raise ValueError("either both or neither of x and y should be given")
    return _ew.where(condition, *xy)


# --- differences, sums of neighbours -------------------------------------------------------

def _along(value: Any, like: Any, axis: int) -> Any:
    """``value`` (prepend/append) as a tensor matching ``like`` except at ``axis``: a
    scalar becomes one slice along ``axis``."""
    value = _numpy_array(value)
    if len(value.shape) == 0:
        shape = list(like.shape)
        shape[axis] = 1
        return _shape.broadcast_to(value, tuple(shape))
    return value


@implements(np.diff)
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = np._NoValue,
         append: Any = np._NoValue) -> Any:
    """NumPy's ``diff``: the ``n``-th forward difference along ``axis``."""
    a = operand(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    if len(a.shape) == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _shape._normalize_axis(int(axis), len(a.shape))
    parts = [a]
    if prepend is not np._NoValue:
        parts.insert(0, _along(prepend, a, axis))
    if append is not np._NoValue:
        parts.append(_along(append, a, axis))
    if len(parts) > 1:
        a = _stacking.concatenate(parts, axis=axis)
    for _ in range(n):
        a = _slice(a, axis, 1, None) - _slice(a, axis, None, -1)
    return a


@implements(np.ediff1d)
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of the flattened input, with optional values before and after."""
    d = diff(_shape.ravel(operand(ary)))
    # NumPy keeps the input's dtype: the added values are cast to it.
    parts = [_shape.ravel(_numpy_array(to_begin, d.dtype))] if to_begin is not None else []
    parts.append(d)
    if to_end is not None:
        parts.append(_shape.ravel(_numpy_array(to_end, d.dtype)))
    return _stacking.concatenate(parts) if len(parts) > 1 else d


def _gradient_along(f: Any, h: float, axis: int, edge_order: int) -> Any:
    """Second-order central differences inside, one-sided ones of ``edge_order`` at the
    two ends (NumPy's ``gradient`` with uniform spacing ``h``)."""
    n = f.shape[axis]
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")

    def at(i):
        return _slice(f, axis, i, i + 1 if i != -1 else None)

    inner = (_slice(f, axis, 2, None) - _slice(f, axis, None, -2)) * (0.5 / h)
    if edge_order == 1:
        first = (at(1) - at(0)) * (1.0 / h)
        last = (at(-1) - at(-2)) * (1.0 / h)
    else:
        first = (at(0) * -1.5 + at(1) * 2.0 - at(2) * 0.5) * (1.0 / h)
        last = (at(-3) * 0.5 - at(-2) * 2.0 + at(-1) * 1.5) * (1.0 / h)
    return _stacking.concatenate([first, inner, last], axis=axis)


@implements(np.gradient)
def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """NumPy's ``gradient`` with scalar spacings: one tensor per axis (a list when there
    are several axes)."""
    f = _floating(f)
    ndim = len(f.shape)
    axes = _reduce.normalize_axes(axis, ndim) if axis is not None else tuple(range(ndim))
    if axis is not None and not isinstance(axis, (int, np.integer)):
        axes = tuple(_shape._normalize_axis(int(a), ndim) for a in axis)
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    spacings = list(varargs) if varargs else [1.0]
    if len(spacings) == 1:
        spacings = spacings * len(axes)
    if len(spacings) != len(axes):
        raise TypeError("invalid number of arguments")
    if any(np.ndim(h) != 0 for h in spacings):
        raise TypeError("np.gradient on tensors supports scalar spacings only; pass one "
                        "number per axis.")
    out = [_gradient_along(f, float(h), ax, edge_order) for h, ax in zip(spacings, axes)]
    return out[0] if len(out) == 1 else _GRADIENTS_TYPE(out)


# Several axes give a tuple of arrays in NumPy 2 and a list in NumPy 1, as here.
_GRADIENTS_TYPE = type(np.gradient(np.zeros((2, 2))))


# np.trapezoid is NumPy 2 (np.trapz before it; removed in 2.4).
@implements(*[f for f in (getattr(np, "trapezoid", None), getattr(np, "trapz", None)) if f])
def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """The trapezoidal rule along ``axis`` (sample points ``x`` or spacing ``dx``)."""
    y = _floating(y)
    axis = _shape._normalize_axis(int(axis), len(y.shape))
    if x is None:
        d = dx
    else:
        x = operand(x)
        if len(x.shape) == 1:
            d = diff(x)
            d = _shape.reshape(d, tuple(-1 if i == axis else 1 for i in range(len(y.shape))))
        else:
            d = diff(x, axis=axis)
    mid = (_slice(y, axis, 1, None) + _slice(y, axis, None, -1)) * 0.5
    return _reduce.sum(mid * d, axis=axis)


# --- products ---------------------------------------------------------------------------

@implements(np.kron)
def kron(a: Any, b: Any) -> Any:
    """The Kronecker product: every element of ``a`` times the whole of ``b``."""
    a, b = operand(a), operand(b)
    nd = max(len(a.shape), len(b.shape))
    sa = (1,) * (nd - len(a.shape)) + tuple(a.shape)
    sb = (1,) * (nd - len(b.shape)) + tuple(b.shape)
    interleaved_a = tuple(d for n in sa for d in (n, 1))
    interleaved_b = tuple(d for n in sb for d in (1, n))
    outer = _shape.reshape(a, interleaved_a) * _shape.reshape(b, interleaved_b)
    return _shape.reshape(outer, tuple(m * n for m, n in zip(sa, sb)))


def _vector_components(v: Any, axis: int) -> list:
    v = _shape.moveaxis(v, axis, -1)
    n = v.shape[-1]
    if n not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 "
                         "or 3)")
    return [_index.index_axis(v, len(v.shape) - 1, i) for i in range(n)]


def _product(u: Any, v: Any) -> Any:
    return None if u is None or v is None else u * v


def _difference(u: Any, v: Any) -> Any:
    """``u - v`` where None is a zero (cross products of 2-vectors)."""
    return -v if u is None else u if v is None else u - v


def _numpy_crosses_2d_vectors() -> bool:
    """NumPy 2.0-2.4 deprecate 2-d vectors in ``np.cross``; 2.5 removed them."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            np.cross(np.zeros(2), np.zeros(3))
        except ValueError:
            return False
    return True


_CROSS_2D = _numpy_crosses_2d_vectors()


@implements(np.cross)
def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """NumPy's ``cross`` of 2- and 3-vectors along the given axes (``axis`` sets all)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = operand(a), operand(b)
    ca = _vector_components(a, _shape._normalize_axis(int(axisa), len(a.shape)))
    cb = _vector_components(b, _shape._normalize_axis(int(axisb), len(b.shape)))
    if not _CROSS_2D and (len(ca) == 2 or len(cb) == 2):  # as the installed NumPy
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they are {len(ca)} and {len(cb)} dimensional instead.")
    if len(ca) == 2 and len(cb) == 2:
        return ca[0] * cb[1] - ca[1] * cb[0]
    a0, a1, a2 = ca if len(ca) == 3 else (*ca, None)  # None: a zero third component
    b0, b1, b2 = cb if len(cb) == 3 else (*cb, None)
    x = _difference(_product(a1, b2), _product(a2, b1))
    y = _difference(_product(a2, b0), _product(a0, b2))
    z = a0 * b1 - a1 * b0
    shape = np.broadcast_shapes(tuple(x.shape), tuple(y.shape), tuple(z.shape))
    c = _stacking.stack([_shape.broadcast_to(t, shape) for t in (x, y, z)], axis=-1)
    return _shape.moveaxis(c, -1, _shape._normalize_axis(int(axisc), len(c.shape)))


@implements(np.polyval)
def polyval(p: Any, x: Any) -> Any:
    """Horner's rule: the polynomial with coefficients ``p`` (highest power first)."""
    coefficients = p if isinstance(p, (list, tuple)) else _stacking.unstack(operand(p))
    if not coefficients:
        return _ew.zeros_like(_floating(x))
    y = _numpy_array(coefficients[0]) + _ew.zeros_like(_floating(x))
    for c in coefficients[1:]:
        y = y * x + c
    return y


# --- rearranging --------------------------------------------------------------------------

@implements(np.rot90)
def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    m = operand(m)
    axes = tuple(axes)
    ndim = len(m.shape)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    a0, a1 = (_shape._normalize_axis(int(a), ndim) for a in axes)
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    if k == 1:
        return _shape.swapaxes(flip(m, a1), a0, a1)
    return flip(_shape.swapaxes(m, a0, a1), a1)


@implements(np.rollaxis)
def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """NumPy's ``rollaxis``: ``axis`` moved to sit before position ``start``."""
    a = operand(a)
    n = len(a.shape)
    axis = _shape._normalize_axis(int(axis), n)
    start = int(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"start={start} is out of bounds for rank {n}")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    return _shape.moveaxis(a, axis, start)


@implements(np.append)
def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """NumPy's ``append``: concatenated with ``values`` (both flattened if ``axis`` is
    None). Differentiable in both."""
    arr, values = operand(arr), operand(values)
    if axis is None:
        return _stacking.concatenate([_shape.ravel(arr), _shape.ravel(values)])
    return _stacking.concatenate([arr, values], axis=axis)


@implements(np.dsplit)
def dsplit(ary: Any, indices_or_sections: Any) -> list:
    """NumPy's ``dsplit``: split along the third axis of a tensor of rank >= 3."""
    ary = operand(ary)
    if len(ary.shape) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _stacking._np_split(ary, indices_or_sections, 2)


@implements(np.meshgrid)
def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> tuple:
    """Coordinate tensors from 1-d ones (``xy`` or ``ij`` indexing), each broadcast."""
    del copy
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xs = [_shape.ravel(operand(x)) for x in xi]
    n = len(xs)
    shapes = [[1] * n for _ in xs]
    for i, x in enumerate(xs):
        shapes[i][i] = x.shape[0]
    if indexing == "xy" and n > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    grids = [_shape.reshape(x, tuple(s)) for x, s in zip(xs, shapes)]
    if sparse:
        return tuple(grids)
    full = np.broadcast_shapes(*(tuple(s) for s in shapes))
    return tuple(_shape.broadcast_to(g, full) for g in grids)


# --- selection ----------------------------------------------------------------------------

@implements(np.select)
def select(condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    """NumPy's ``select``: per element, the choice of the first condition that holds,
    else ``default``. Each choice's gradient flows where it was chosen."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    choices = [operand(c) for c in choicelist]
    dtype = np.result_type(*(c.dtype for c in choices), _dtype_of(default))
    out = _numpy_array(default, dtype)
    for cond, choice in reversed(list(zip(condlist, choices))):
        out = _ew.where(cond, choice, out)
    return out
