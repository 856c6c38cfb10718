"""Elementwise primitives: NumPy ufuncs with their derivatives side by side.

A unary rule is one line: the derivative as a function of the input ``x`` and output
``y``. The VJP multiplies the cotangent by its conjugate (TF's convention for complex
numbers; a no-op for reals) and the JVP multiplies the tangent by it. Binary rules undo
broadcasting with ``unbroadcast``, whose axes come from static shapes.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..ir.nodes import Literal
from . import shape as _shape
from .numpy_dispatch import implements, register_ufunc
from .operands import _NUMPY1, _OPERAND_TYPES, _PLAIN_OPERANDS, _checked_operand, weak_scalars
from .registry import EVERY_INPUT, Primitive, bind, operand, unchanged

__all__: list[str] = []


def _export(op, *ufuncs, public=True):
    if public:  # a name of gt (and docs/api.md); else only NumPy's ufuncs reach it
        __all__.append(op.__name__)
    for ufunc in ufuncs:
        register_ufunc(ufunc, op)
    return op


def _ub(g, x):
    """The cotangent ``g`` summed back to the shape of input ``x``."""
    return _shape.unbroadcast(g, x.shape)


def _is_complex(x) -> bool:
    # np.issubdtype(dtype, np.complexfloating), without its Python-level type checks:
    # reverse mode asks this of every matmul and transpose it emits.
    return np.dtype(x.dtype).kind == "c"


def conj(x):
    """Complex conjugate (identity on real tensors)."""
    if not _is_complex(x):
        return unchanged(x)
    return bind(conj_p, x)


# --- unary ops ---------------------------------------------------------------------

def _unary(name, impl, deriv, ufunc=None, *, guard_zero=False, vjp=None, jvp=None,
           template=None, residuals=None, on_floats=None):
    """A differentiable elementwise op of one input: its rules come from ``deriv(x, y)``
    (the derivative from the input and the output) unless ``vjp`` and ``jvp`` are given;
    ``guard_zero`` makes them 0 where the incoming (co)tangent is 0 (``_zero_guarded``);
    ``residuals`` what the rules read: ``("in0",)`` for ``x``, ``("out",)`` for ``y``."""
    if vjp is None:
        vjp = lambda g, y, x: (g * conj(deriv(x, y)),)  # noqa: E731
        jvp = lambda ts, y, x: ts[0] * deriv(x, y)  # noqa: E731
    if guard_zero:
        vjp, jvp = _zero_guarded(vjp, jvp)
    prim = Primitive(name, impl, vjp=vjp, jvp=jvp, elementwise=True, template=template,
                     residuals=residuals, float_template=on_floats)

    def op(x):
        return bind(prim, operand(x))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise {name}, differentiable."
    op.primitive = prim
    return _export(op, *([ufunc] if ufunc is not None else []))


def _sigmoid_impl(x):
    # TF's and JAX's formula: one exp, half the cost of the overflow-free
    # exp(-logaddexp(0, -x)). exp(-x) overflows to inf below x = -709, where
    # 1 / inf = 0 is the right value: no warning for it.
    with np.errstate(over="ignore"):
        e = np.exp(-x)
    # dtype=: NumPy 1.26 makes 1 + a float32 scalar a float64.
    return np.divide(1, np.add(1, e, dtype=e.dtype), dtype=e.dtype)


def _relu_impl(x):
    return np.maximum(x, 0)


def _softplus_impl(x):
    return np.logaddexp(0, x)


def _zero_guarded(vjp, jvp):
    """Unary rules that give 0 where the incoming (co)tangent is 0: TF's SqrtGrad,
    RsqrtGrad and ReciprocalGrad kernels, so a ``where`` that masks the branch at
    ``sqrt(0)`` or ``1/0`` hides its infinite derivative."""
    def guarded_vjp(g, y, x):
        zero = equal(g, 0)
        return (where(zero, 0, vjp(g, _safe_output(zero, y), x)[0]),)

    def guarded_jvp(ts, y, x):
        zero = equal(ts[0], 0)
        return where(zero, 0, jvp(ts, _safe_output(zero, y), x))

    return guarded_vjp, guarded_jvp


def _safe_output(zero, y):
    """``y`` with 1 where the incoming (co)tangent is 0. The guarded rules read the
    derivative from ``y`` (``0.5 / y``, ``-y**2``): at ``sqrt(0)`` an infinite derivative
    times the zero cotangent of the masked branch would make the NEXT derivative NaN
    (differentiating a ``where``); with ``y`` replaced there, it is 0."""
    return where(zero, 1, y)


# What a unary op's rules read (``Primitive.residuals``): its input x or its output y.
_X, _Y = ("in0",), ("out",)
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

exp = _unary("exp", np.exp, lambda x, y: y, np.exp, residuals=_Y)
exp2 = _unary("exp2", np.exp2, lambda x, y: y * _LN2, np.exp2, residuals=_Y)
expm1 = _unary("expm1", np.expm1, lambda x, y: y + 1.0, np.expm1, residuals=_Y)
log = _unary("log", np.log, lambda x, y: reciprocal(x), np.log, residuals=_X)
log2 = _unary("log2", np.log2, lambda x, y: reciprocal(x * _LN2), np.log2, residuals=_X)
log10 = _unary("log10", np.log10, lambda x, y: reciprocal(x * _LN10), np.log10, residuals=_X)
log1p = _unary("log1p", np.log1p, lambda x, y: reciprocal(x + 1.0), np.log1p, residuals=_X)
sqrt = _unary("sqrt", np.sqrt, lambda x, y: 0.5 / y, np.sqrt, guard_zero=True, residuals=_Y,
              on_floats="sqrt({0})")
cbrt = _unary("cbrt", np.cbrt, lambda x, y: reciprocal(square(y) * 3.0), np.cbrt, residuals=_Y)
square = _unary("square", np.square, lambda x, y: x * 2.0, np.square, residuals=_X,
                on_floats="{0} * {0}")
reciprocal = _unary("reciprocal", np.reciprocal, lambda x, y: -square(y), np.reciprocal,
                    guard_zero=True, residuals=_Y, on_floats="1.0 / {0}")


# NumPy's SIMD float32 sin/cos may be one unit in the last place away from TF's (the
# seed Jacobian prints cos(2) as -0.4161468, TF as -0.41614684). Computing them in
# float64 would match, but would cost the ufunc (fusion, out= buffers): documented in
# docs/semantics.md instead.
sin = _unary("sin", np.sin, lambda x, y: cos(x), np.sin, residuals=_X, on_floats="sin({0})")
cos = _unary("cos", np.cos, lambda x, y: -sin(x), np.cos, residuals=_X, on_floats="cos({0})")
tan = _unary("tan", np.tan, lambda x, y: square(y) + 1.0, np.tan, residuals=_Y)
arcsin = _unary("arcsin", np.arcsin, lambda x, y: reciprocal(sqrt(1.0 - square(x))), np.arcsin)
arccos = _unary("arccos", np.arccos, lambda x, y: -reciprocal(sqrt(1.0 - square(x))), np.arccos)
arctan = _unary("arctan", np.arctan, lambda x, y: reciprocal(square(x) + 1.0), np.arctan)
sinh = _unary("sinh", np.sinh, lambda x, y: cosh(x), np.sinh, residuals=_X)
cosh = _unary("cosh", np.cosh, lambda x, y: sinh(x), np.cosh, residuals=_X)
tanh = _unary("tanh", np.tanh, lambda x, y: 1.0 - square(y), np.tanh, residuals=_Y)
arcsinh = _unary("arcsinh", np.arcsinh, lambda x, y: reciprocal(sqrt(square(x) + 1.0)), np.arcsinh)
arccosh = _unary("arccosh", np.arccosh, lambda x, y: reciprocal(sqrt(square(x) - 1.0)), np.arccosh)
arctanh = _unary("arctanh", np.arctanh, lambda x, y: reciprocal(1.0 - square(x)), np.arctanh)
sigmoid = _unary("sigmoid", _sigmoid_impl, lambda x, y: y * (1.0 - y), residuals=_Y)
softplus = _unary("softplus", _softplus_impl, lambda x, y: sigmoid(x),
                  template="logaddexp(0, {0})", residuals=_X)



def _abs_vjp(g, y, x):
    if not _is_complex(x):
        return (g * sign(x),)
    # Real |z| of complex z: TF's gradient is g * z / |z| (0 at z = 0, like div_no_nan).
    safe = where(equal(y, 0), 1.0, y)
    return (cast(g, x.dtype) * (x / cast(safe, x.dtype)),)


def _abs_jvp(ts, y, x):
    if not _is_complex(x):
        return ts[0] * sign(x)
    safe = where(equal(y, 0), 1.0, y)
    return real(conj(x) * ts[0]) / safe


abs = _unary("abs", np.abs, None, np.absolute, vjp=_abs_vjp, jvp=_abs_jvp, residuals=("in0", "out"))
# y > 0 exactly where x > 0 (NaN and -0.0 included): reading the output lets a tape drop
# the input, a convolution's or matmul's output that nothing else reads (PyTorch's too).
relu = _unary("relu", _relu_impl, lambda x, y: cast(greater(y, 0), y.dtype),
              template="maximum({0}, 0)", residuals=_Y)

# Aliases under TF's and NumPy's other names.
absolute = abs
arcsin_ = asin = arcsin
acos, atan, asinh, acosh, atanh = arccos, arctan, arcsinh, arccosh, arctanh
__all__ += ["absolute", "asin", "acos", "atan", "asinh", "acosh", "atanh"]
del arcsin_


negative_p = Primitive(
    "negative", np.negative, vjp=lambda g, y, x: (-g,), jvp=lambda ts, y, x: -ts[0],
    elementwise=True, template="-{0}", residuals=(), float_template="-{0}",
)


def negative(x):
    """Elementwise -x."""
    return bind(negative_p, x)


_export(negative, np.negative)


def _pos(x):
    return unchanged(x)


register_ufunc(np.positive, _pos)

conj_p = Primitive(
    "conj", np.conjugate, vjp=lambda g, y, x: (conj(g),), jvp=lambda ts, y, x: conj(ts[0]),
    elementwise=True,
)
_export(conj, np.conjugate)
conjugate = conj

real_p = Primitive(
    "real", np.real,
    vjp=lambda g, y, x: (cast(g, x.dtype),),
    jvp=lambda ts, y, x: real(ts[0]),
    elementwise=True,
)
imag_p = Primitive(
    "imag", np.imag,
    vjp=lambda g, y, x: (cast(g, x.dtype) * 1j,),
    jvp=lambda ts, y, x: imag(ts[0]),
    elementwise=True,
)


@implements(np.real)
def real(x):
    """Real part (identity on real tensors)."""
    return bind(real_p, x) if _is_complex(x) else x


@implements(np.imag)
def imag(x):
    """Imaginary part."""
    return bind(imag_p, x)


__all__ += ["real", "imag", "conjugate"]


# --- casts ---------------------------------------------------------------------------

def _cast_impl(x, dtype):
    return np.asarray(x).astype(dtype)


def _cast_vjp(g, y, x, dtype):
    if not np.issubdtype(x.dtype, np.inexact):
        return (None,)
    if _is_complex(g) and not _is_complex(x):
        g = real(g)
    return (cast(g, x.dtype.name),)


cast_p = Primitive(
    "cast", _cast_impl, vjp=_cast_vjp,
    jvp=lambda ts, y, x, dtype: cast(ts[0], dtype), elementwise=True,
    template="asarray({0}).astype({dtype})", array_template="{0}.astype({dtype})",
)


def cast(x, dtype):
    """``x`` converted to ``dtype`` (TF's ``tf.cast``); differentiable between floats."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return unchanged(x)
    if _is_complex(x) and not np.issubdtype(dtype, np.complexfloating):
        x = real(x)
        if x.dtype == dtype:
            return x
    return bind(cast_p, x, dtype=dtype.name)


__all__.append("cast")


# --- binary ops ----------------------------------------------------------------------

# What binary ops do to their operands before binding, or None (the default under NumPy
# 2): NumPy 1's weak scalars, or TF's conversion of a NumPy operand beside a tensor
# (ops/promotion.py installs it; bind checks two tensors).
_prepare = (lambda prim, x, y: weak_scalars(x, y)) if _NUMPY1 else None


def _binary(name, impl, vjp, jvp, ufunc=None, eager=None, template=None, public=True,
            residuals=None, on_floats=None):
    prim = Primitive(name, impl, vjp=vjp, jvp=jvp, elementwise=True, eager=eager,
                     template=template, same_dtype=EVERY_INPUT, residuals=residuals,
                     float_template=on_floats)

    def op(x, y):
        if not isinstance(x, _OPERAND_TYPES):
            if not isinstance(y, _OPERAND_TYPES):
                x, y = operand(x), operand(y)  # no tensor at all: TF's dtypes for both
            elif x.__class__ not in _PLAIN_OPERANDS:
                x = _checked_operand(x)
        elif y.__class__ not in _PLAIN_OPERANDS:
            y = _checked_operand(y)
        if _prepare:  # NumPy 1's weak scalars, or gt.config(dtype_promotion="tf")
            x, y = _prepare(prim, x, y)
        return bind(prim, x, y)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise {name} with NumPy broadcasting, differentiable."
    op.primitive = prim
    return _export(op, *([ufunc] if ufunc is not None else []), public=public)


def _tangent_sum(a, b):
    """Sum of two tangents where ``None`` is zero."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _scaled(t, factor):
    return None if t is None else t * factor


add = _binary(
    "add", np.add,
    lambda g, y, a, b: (_ub(g, a), _ub(g, b)),
    lambda ts, y, a, b: _tangent_sum(ts[0], ts[1]),
    np.add, operator.add, "{0} + {1}",
    residuals=(), on_floats="{0} + {1}",
)
subtract = _binary(
    "subtract", np.subtract,
    lambda g, y, a, b: (_ub(g, a), _ub(-g, b)),
    lambda ts, y, a, b: _tangent_sum(ts[0], _scaled(ts[1], -1.0)),
    np.subtract, operator.sub, "{0} - {1}",
    residuals=(), on_floats="{0} - {1}",
)
def _multiply_vjp(g, y, a, b):
    if a is b:  # x * x: one product, counted twice (not two equal products)
        return (_ub(g * conj(a) * 2.0, a), None)
    return (_ub(g * conj(b), a), _ub(g * conj(a), b))


multiply = _binary(
    "multiply", np.multiply,
    _multiply_vjp,
    lambda ts, y, a, b: _tangent_sum(_scaled(ts[0], b), _scaled(ts[1], a)),
    np.multiply, operator.mul, "{0} * {1}",
    residuals=("in0", "in1"), on_floats="{0} * {1}",
)
divide = _binary(
    "divide", np.true_divide,
    lambda g, y, a, b: (_ub(g / conj(b), a), _ub(-g * conj(y / b), b)),
    lambda ts, y, a, b: _tangent_sum(
        None if ts[0] is None else ts[0] / b, _scaled(ts[1], -y / b)
    ),
    np.true_divide, operator.truediv, "{0} / {1}",
    residuals=("in1", "out"), on_floats="{0} / {1}",
)


def _pow_dx(x, y, out):
    # A Literal's value (not getattr: Variable.value is a method, seen by eager JVPs).
    exponent = y.value if isinstance(y, Literal) else None
    if exponent is not None and not isinstance(exponent, np.ndarray):
        # x ** c: the derivative c * x ** (c - 1), folded at trace time.
        if exponent == 2:
            return x * 2.0
        if exponent == 0:  # x ** 0 is 1 everywhere: 0, not 0 * 0 ** -1 = NaN at x = 0
            return zeros_like(x)
        return power(x, exponent - 1) * exponent
    # Where y == 0 the derivative is 0, also at x == 0 (as JAX and autograd give); x is
    # replaced by 1 there so that the next derivative is not 0 * inf either.
    zero_exponent = equal(y, 0)
    return where(zero_exponent, 0, y * power(where(zero_exponent, 1.0, x), y - 1))


def _pow_dy(x, y, out):
    # log(x) where x > 0; 0 where x == 0 so that 0 ** y has a finite derivative.
    safe_x = where(equal(x, 0), 1.0, x)
    return log(safe_x) * out


power = _binary(
    "power", np.power,
    lambda g, out, x, y: (
        _ub(g * conj(_pow_dx(x, y, out)), x), _ub(g * conj(_pow_dy(x, y, out)), y)
    ),
    lambda ts, out, x, y: _tangent_sum(
        _scaled(ts[0], _pow_dx(x, y, out)),
        None if ts[1] is None else ts[1] * _pow_dy(x, y, out),  # no log(x) unless needed
    ),
    np.power, template="{0} ** {1}",
)
pow = power
__all__.append("pow")


def _select_vjp(mask_fn):
    """VJP of max/min-like ops: the cotangent goes to the input the mask selects (TF ties)."""

    def vjp(g, y, a, b):
        mask = mask_fn(a, b)
        return (_ub(where(mask, g, 0.0), a), _ub(where(mask, 0.0, g), b))

    return vjp


def _select_jvp(mask_fn):
    def jvp(ts, y, a, b):
        mask = mask_fn(a, b)
        ta = ts[0] if ts[0] is not None else 0.0
        tb = ts[1] if ts[1] is not None else 0.0
        return where(mask, ta, tb) + zeros_like(y)

    return jvp


maximum = _binary(
    "maximum", np.maximum,
    _select_vjp(lambda a, b: greater_equal(a, b)),
    _select_jvp(lambda a, b: greater_equal(a, b)),
    np.maximum,
)
minimum = _binary(
    "minimum", np.minimum,
    _select_vjp(lambda a, b: less_equal(a, b)),
    _select_jvp(lambda a, b: less_equal(a, b)),
    np.minimum,
)
# NumPy's fmax/fmin ignore a NaN operand: the other one is selected, and so gets the
# gradient.
fmax = _binary(
    "fmax", np.fmax,
    _select_vjp(lambda a, b: logical_or(greater_equal(a, b), isnan(b))),
    _select_jvp(lambda a, b: logical_or(greater_equal(a, b), isnan(b))),
    np.fmax, public=False,
)
fmin = _binary(
    "fmin", np.fmin,
    _select_vjp(lambda a, b: logical_or(less_equal(a, b), isnan(b))),
    _select_jvp(lambda a, b: logical_or(less_equal(a, b), isnan(b))),
    np.fmin, public=False,
)


def _atan2_parts(y, x):
    denom = square(x) + square(y)
    return x / denom, -y / denom


arctan2 = _binary(
    "arctan2", np.arctan2,
    lambda g, out, y, x: (
        _ub(g * _atan2_parts(y, x)[0], y), _ub(g * _atan2_parts(y, x)[1], x)
    ),
    lambda ts, out, y, x: _tangent_sum(
        _scaled(ts[0], _atan2_parts(y, x)[0]), _scaled(ts[1], _atan2_parts(y, x)[1])
    ),
    np.arctan2,
)
atan2 = arctan2
hypot = _binary(
    "hypot", np.hypot,
    lambda g, out, a, b: (_ub(g * (a / out), a), _ub(g * (b / out), b)),
    lambda ts, out, a, b: _tangent_sum(_scaled(ts[0], a / out), _scaled(ts[1], b / out)),
    np.hypot,
)
logaddexp = _binary(
    "logaddexp", np.logaddexp,
    lambda g, out, a, b: (_ub(g * exp(a - out), a), _ub(g * exp(b - out), b)),
    lambda ts, out, a, b: _tangent_sum(_scaled(ts[0], exp(a - out)), _scaled(ts[1], exp(b - out))),
    np.logaddexp,
)
mod = _binary(
    "mod", np.mod,
    lambda g, out, a, b: (_ub(g, a), _ub(-g * floor_divide(a, b), b)),
    lambda ts, out, a, b: _tangent_sum(ts[0], _scaled(ts[1], -floor_divide(a, b))),
    np.remainder, template="{0} % {1}",
)
floormod = remainder = mod
# C's remainder (the sign of the dividend): a - b * trunc(a / b). TF's truncatemod.
fmod = _binary(
    "fmod", np.fmod,
    lambda g, out, a, b: (_ub(g, a), _ub(-g * trunc(a / b), b)),
    lambda ts, out, a, b: _tangent_sum(ts[0], _scaled(ts[1], -trunc(a / b))),
    np.fmod, public=False,
)
truncatemod = fmod
__all__ += ["atan2", "floormod", "remainder", "fmax", "fmin", "truncatemod"]


# --- where and clip ------------------------------------------------------------------

def _where_vjp(g, y, cond, a, b):
    return (None, _ub(where(cond, g, 0.0), a), _ub(where(cond, 0.0, g), b))


def _where_jvp(ts, y, cond, a, b):
    ta = ts[1] if ts[1] is not None else 0.0
    tb = ts[2] if ts[2] is not None else 0.0
    return where(cond, ta, tb) + zeros_like(y)


where_p = Primitive("where", np.where, vjp=_where_vjp, jvp=_where_jvp, elementwise=True,
                    same_dtype=slice(1, None))  # x and y; the condition is bool


@implements(np.where)
def where(condition, x=None, y=None):
    """Elementwise select: ``x`` where ``condition`` holds, else ``y`` (broadcasting)."""
    if x is None or y is None:
        raise ValueError("gt.where needs both x and y; use np.nonzero on .numpy() for indices.")
    if _NUMPY1:
        x, y = weak_scalars(x, y)
    return bind(where_p, condition, x, y)


def _clip_vjp(g, y, x, lo, hi):
    inside = logical_and(greater_equal(x, lo), less_equal(x, hi))
    return (
        _ub(where(inside, g, 0.0), x),
        _ub(where(less(x, lo), g, 0.0), lo),
        _ub(where(greater(x, hi), g, 0.0), hi),
    )


def _clip_jvp(ts, y, x, lo, hi):
    parts = [0.0 if t is None else t for t in ts]
    inside = logical_and(greater_equal(x, lo), less_equal(x, hi))
    return where(inside, parts[0], where(less(x, lo), parts[1], parts[2])) + zeros_like(y)


clip_p = Primitive("clip", np.clip, vjp=_clip_vjp, jvp=_clip_jvp, elementwise=True,
                   same_dtype=EVERY_INPUT)


@implements(np.clip)
def clip(x, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """``x`` limited to ``[a_min, a_max]``; the gradient flows where x is inside. A
    bound that is ``None`` is no bound (NumPy's ``min=``/``max=`` names work too)."""
    if out is not None:
        raise TypeError("np.clip(..., out=) cannot write into a tensor: tensors are immutable.")
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    if a_min is None or a_max is None:
        return _one_sided_clip(x, a_min, a_max)
    if _NUMPY1:
        x, a_min, a_max = weak_scalars(x, a_min, a_max)
    return bind(clip_p, x, a_min, a_max)


def _one_sided_clip(x, a_min, a_max):
    """``clip`` with one bound (or none): ``maximum``/``minimum``, whose ties send the
    gradient to ``x`` as ``clip``'s do."""
    if a_min is not None:
        return maximum(x, a_min)
    if a_max is not None:
        return minimum(x, a_max)
    return unchanged(operand(x))


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """TF's ``tf.clip_by_value``: :func:`clip` (the gradient flows at the bounds too)."""
    del name
    return clip(t, clip_value_min, clip_value_max)


__all__ += ["where", "clip", "clip_by_value"]


# --- non-differentiable ops: their outputs are constants to every tape -----------------

def _constant_op(name, impl, arity, ufunc=None, check_operands=True, public=True):
    prim = Primitive(name, impl, elementwise=True,  # no vjp: never recorded
                     same_dtype=EVERY_INPUT if arity == 2 else None)
    if arity == 1:
        def op(x):
            return bind(prim, x)
    elif not check_operands:
        def op(x, y):
            if _prepare:
                x, y = _prepare(prim, x, y)
            return bind(prim, x, y)
    else:
        def op(x, y):
            if x.__class__ not in _PLAIN_OPERANDS:
                x = _checked_operand(x)
            if y.__class__ not in _PLAIN_OPERANDS:
                y = _checked_operand(y)
            if _prepare:
                x, y = _prepare(prim, x, y)
            return bind(prim, x, y)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise {name} (not differentiable: no gradient flows through it)."
    op.primitive = prim
    return _export(op, *([ufunc] if ufunc is not None else []), public=public)


# sign is piecewise constant like floor, ceil and round, but TF registers a zero
# gradient for it (zeros, not None), whatever the incoming gradient holds.
sign_p = Primitive(
    "sign", np.sign, vjp=lambda g, y, x: (zeros_like(x),),
    jvp=lambda ts, y, x: zeros_like(y), elementwise=True,
)


def sign(x):
    """Elementwise sign; its gradient is zeros (TF's convention), never ``None``."""
    return bind(sign_p, x)


sign.primitive = sign_p
_export(sign, np.sign)
floor = _constant_op("floor", np.floor, 1, np.floor)
ceil = _constant_op("ceil", np.ceil, 1, np.ceil)
round = _constant_op("round", np.round, 1, np.rint)
trunc = _constant_op("trunc", np.trunc, 1, np.trunc, public=False)


@implements(np.fix)
def _np_fix(x, out=None):
    """NumPy's ``fix``: rounding toward zero, ``trunc``."""
    if out is not None:
        raise TypeError("np.fix(..., out=) cannot write into a tensor: tensors are immutable.")
    return trunc(x)


rint = round
floor_divide = _constant_op("floor_divide", np.floor_divide, 2, np.floor_divide)
floordiv = floor_divide
less = _constant_op("less", np.less, 2, np.less)
less_equal = _constant_op("less_equal", np.less_equal, 2, np.less_equal)
greater = _constant_op("greater", np.greater, 2, np.greater)
greater_equal = _constant_op("greater_equal", np.greater_equal, 2, np.greater_equal)
# == and != answer for any operand (t == None is all False), as NumPy's do.
equal = _constant_op("equal", np.equal, 2, np.equal, check_operands=False)
not_equal = _constant_op("not_equal", np.not_equal, 2, np.not_equal, check_operands=False)
logical_and = _constant_op("logical_and", np.logical_and, 2, np.logical_and)
logical_or = _constant_op("logical_or", np.logical_or, 2, np.logical_or)
logical_xor = _constant_op("logical_xor", np.logical_xor, 2, np.logical_xor)
logical_not = _constant_op("logical_not", np.logical_not, 1, np.logical_not)
isnan = _constant_op("isnan", np.isnan, 1, np.isnan)
isinf = _constant_op("isinf", np.isinf, 1, np.isinf)
isfinite = _constant_op("isfinite", np.isfinite, 1, np.isfinite)
register_ufunc(np.bitwise_and, logical_and)
register_ufunc(np.bitwise_or, logical_or)
register_ufunc(np.invert, logical_not)
__all__ += ["rint", "floordiv"]
@implements(np.round, np.around)
def _np_round(a, decimals=0, out=None):
    """NumPy's ``round``: half to even, at ``decimals`` places (negative: tens,
    hundreds...), scaling as NumPy does. Not differentiable, like ``round``."""
    if out is not None:
        raise TypeError("np.round(..., out=) cannot write into a tensor: tensors are immutable.")
    a = operand(a)
    decimals = operator.index(decimals)
    if decimals == 0:
        return round(a)
    if a.dtype.kind in "iub":
        if decimals > 0:  # an integer has no digits after the point
            return unchanged(a)
        return cast(round(cast(a, np.float64) / 10.0 ** -decimals) * 10.0 ** -decimals,
                    a.dtype)
    if decimals > 0:
        return round(a * 10.0 ** decimals) / 10.0 ** decimals
    return round(a / 10.0 ** -decimals) * 10.0 ** -decimals


# --- creation helpers used by rules --------------------------------------------------

zeros_like_p = Primitive("zeros_like", np.zeros_like, elementwise=True)
ones_like_p = Primitive("ones_like", np.ones_like, elementwise=True)


@implements(np.zeros_like)
def zeros_like(x, dtype=None):
    """Zeros of ``x``'s shape (and dtype unless given)."""
    out = bind(zeros_like_p, x)
    return out if dtype is None else cast(out, dtype)


@implements(np.ones_like)
def ones_like(x, dtype=None):
    """Ones of ``x``'s shape (and dtype unless given)."""
    out = bind(ones_like_p, x)
    return out if dtype is None else cast(out, dtype)


__all__ += ["zeros_like", "ones_like"]
