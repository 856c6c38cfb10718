"""Special functions: ``scipy.special``'s ufuncs on tensors, with their derivatives.

Each function is an elementwise primitive whose implementation is SciPy's ufunc (erf
and erfc fall back to ``erf_numpy`` without SciPy), so generated code calls it by its
SciPy name and can write into ``out=`` buffers. SciPy is optional: ``import gradtape``
never imports it. A primitive is built on its first use (importing SciPy then, or
raising ``ImportError`` naming the extra), and SciPy's ufuncs are mapped to these ops
the first time one reaches ``Tensor.__array_ufunc__`` (``register_scipy_ufuncs``).

A rule is the list of partial derivatives, written with gradtape's ops so that it
differentiates again; ``None`` marks an argument that is not differentiable (integer
orders, TF's and JAX's convention).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..core.tensor import Tensor
from ..ir.nodes import Aval
from . import erf_numpy
from .elementwise import cast as _cast
from .elementwise import conj, cos, exp, log, log1p, not_equal, sign, sin, zeros_like
from .numpy_dispatch import register_lazy_ufuncs, register_ufunc
from .operands import _NUMPY1, _OPERAND_TYPES, _PLAIN_OPERANDS, _checked_operand, weak_scalars
from .registry import Primitive, bind, operand
from .shape import unbroadcast

__all__: list[str] = []

# gradtape is installed from its clone (it is not on PyPI): the extra is `.[scipy]`.
SCIPY_MISSING = "pip install scipy (or, in gradtape's clone, pip install -e '.[scipy]')"


def scipy_special() -> Any:
    """``scipy.special``, or an ``ImportError`` that says which extra to install."""
    try:
        import scipy.special
    except ImportError:
        raise ImportError("This special function needs SciPy, an optional dependency of "
                          f"gradtape: {SCIPY_MISSING}") from None
    return scipy.special


# --- primitives, built on first use -------------------------------------------------------

# name -> how to build the primitive (called once), and the primitives built so far.
_BUILDERS: dict[str, Callable[[], Primitive]] = {}
_PRIMITIVES: dict[str, Primitive] = {}


def primitive(name: str) -> Primitive:
    """The primitive of special function ``name``, built (and SciPy imported) if new."""
    prim = _PRIMITIVES.get(name)
    if prim is None:
        prim = _PRIMITIVES[name] = _BUILDERS[name]()
    return prim


def lazy_primitive(name: str) -> Primitive | None:
    """The primitive ``name`` of this family, or None: how generated modules imported in
    a new process find an implementation (``codegen.runtime.primitive_impl``)."""
    return primitive(name) if name in _BUILDERS else None


def _shaped(x) -> bool:
    return getattr(x, "shape", None) is not None


class NoRule(NamedTuple):
    """A partial derivative gradtape does not implement (betainc's ``a``): asking for
    it raises ``NotImplementedError`` naming ``what``; not asking costs nothing."""

    what: str


def _no_gradient_impl(x, message):
    raise NotImplementedError(message)


# A stand-in cotangent that raises when it is run: dead code (removed, never run) unless
# that gradient is asked for, so it is never silently zero, also inside @gt.function.
no_gradient_p = Primitive(
    "no_gradient", _no_gradient_impl,
    kind_neutral=True,
    shape_rule=lambda x, message: Aval(tuple(x.shape), x.dtype), pure=False,
    batch=lambda size, args, batched, message: bind(no_gradient_p, args[0], message=message),
)


def no_gradient(like: Any, what: str) -> Any:
    """A cotangent for ``like`` that raises ``NotImplementedError`` when computed."""
    return bind(no_gradient_p, like, message=f"{what} is not implemented: gradtape cannot "
                "differentiate it; pass that argument as a constant.")


def refuse_tangent(t: Any, what: str) -> None:
    """Forward mode: raise if the argument without a rule has a tangent."""
    if t is not None:
        raise NotImplementedError(f"{what} is not implemented: gradtape cannot "
                                  "differentiate it; pass that argument as a constant.")


def _vjp_from(partials: Callable[..., tuple]) -> Callable[..., tuple]:
    def vjp(g, y, *args):
        return tuple(
            None if d is None or not _shaped(a)
            else no_gradient(a, d.what) if isinstance(d, NoRule)
            else unbroadcast(g * conj(d), a.shape)
            for a, d in zip(args, partials(y, *args)))
    return vjp


def _jvp_from(partials: Callable[..., tuple]) -> Callable[..., Any]:
    def jvp(ts, y, *args):
        total = None
        for t, d in zip(ts, partials(y, *args)):
            if isinstance(d, NoRule):
                refuse_tangent(t, d.what)
                continue
            if t is None or d is None:
                continue
            total = t * d if total is None else total + t * d
        return zeros_like(y) if total is None else total
    return jvp


def _define(name: str, arity: int, partials: Callable[..., tuple], *,
            impl: Callable[[], Callable[..., Any]] | None = None,
            scipy_name: str | None = None, doc: str = "") -> Callable[..., Any]:
    """Declare special function ``name``: an elementwise primitive of ``arity`` inputs
    whose partial derivatives are ``partials(y, *inputs)``, implemented by
    ``scipy.special.<scipy_name>`` (or ``impl()``), and its public op."""

    def build() -> Primitive:
        func = impl() if impl is not None else getattr(scipy_special(), scipy_name or name)
        return Primitive(name, func, vjp=_vjp_from(partials), jvp=_jvp_from(partials),
                         elementwise=True)

    _BUILDERS[name] = build

    def op(*args):
        if len(args) != arity:
            raise TypeError(f"{name} takes {arity} argument(s), got {len(args)}.")
        return bind(primitive(name), *_operands(args))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc or f"scipy.special.{scipy_name or name}, elementwise and differentiable."
    __all__.append(name)
    return op


def _operands(args: tuple) -> tuple:
    """Elementwise operands as ``gt.multiply`` takes them: tensors and numbers as they
    are beside a tensor, TF's conversion when no argument is a tensor."""
    if not any(isinstance(a, _OPERAND_TYPES) for a in args):
        return tuple(operand(a) for a in args)
    args = tuple(a if a.__class__ in _PLAIN_OPERANDS else _checked_operand(a) for a in args)
    return weak_scalars(*args) if _NUMPY1 else args


# --- derivative helpers -------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0
_ONE_OVER_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _is_complex(x) -> bool:
    return np.issubdtype(x.dtype, np.complexfloating)


def _nonzero_mask(x):
    """1 where ``x`` is not 0, else 0, in ``x``'s dtype (TF's xlogy/xdivy gradients)."""
    return _cast(not_equal(x, 0), x.dtype)


# --- erf and relatives --------------------------------------------------------------------

def _erf_impl(scipy_name: str, fallback: Callable[..., Any]) -> Callable[[], Any]:
    """SciPy's ufunc when SciPy is installed (faster, takes complex input), else the
    NumPy implementation (agrees to 1e-14)."""
    def impl():
        try:
            return getattr(scipy_special(), scipy_name)
        except ImportError:
            return fallback
    return impl


def _erf_numpy(x):
    return erf_numpy.erf(x)


def _erfc_numpy(x):
    return erf_numpy.erfc(x)


# (The NumPy fallbacks are defined here, so that generated code finds them through
# this module's primitives.)
erf = _define("erf", 1, lambda y, x: (exp(-(x * x)) * _TWO_OVER_SQRT_PI,),
              impl=_erf_impl("erf", _erf_numpy))
erfc = _define("erfc", 1, lambda y, x: (exp(-(x * x)) * -_TWO_OVER_SQRT_PI,),
               impl=_erf_impl("erfc", _erfc_numpy))
erfinv = _define("erfinv", 1, lambda y, x: (exp(y * y) * _SQRT_PI_OVER_2,))
erfcinv = _define("erfcinv", 1, lambda y, x: (exp(y * y) * -_SQRT_PI_OVER_2,))
ndtr = _define("ndtr", 1, lambda y, x: (exp(x * x * -0.5) * _ONE_OVER_SQRT_2PI,))
ndtri = _define("ndtri", 1, lambda y, x: (exp(y * y * 0.5) * _SQRT_2PI,))
# exp(-x^2/2 - log_ndtr(x)): finite far into the left tail, where ndtr(x) underflows.
log_ndtr = _define("log_ndtr", 1,
                   lambda y, x: (exp(x * x * -0.5 - y) * _ONE_OVER_SQRT_2PI,))

# --- gamma and relatives ------------------------------------------------------------------

digamma = _define("digamma", 1, lambda y, x: (polygamma(1, x),), scipy_name="psi")
psi = digamma
__all__.append("psi")
gammaln = _define("gammaln", 1, lambda y, x: (digamma(x),))
gamma = _define("gamma", 1, lambda y, x: (y * digamma(x),))
rgamma = _define("rgamma", 1, lambda y, x: (-y * digamma(x),))
gammasgn = _define("gammasgn", 1, lambda y, x: (zeros_like(x),),
                   doc="scipy.special.gammasgn: the sign of gamma(x); its gradient is 0.")
polygamma = _define("polygamma", 2, lambda y, n, x: (None, polygamma(n + 1, x)),
                    doc="scipy.special.polygamma(n, x): the n-th derivative of digamma; "
                        "n (an integer order) gets no gradient.")
beta = _define("beta", 2, lambda y, a, b: (y * (digamma(a) - digamma(a + b)),
                                           y * (digamma(b) - digamma(a + b))))
betaln = _define("betaln", 2, lambda y, a, b: (digamma(a) - digamma(a + b),
                                               digamma(b) - digamma(a + b)))


def _betainc_dx(a, b, x):
    # The integrand x^(a-1) (1-x)^(b-1) / B(a, b), in logs so that it does not overflow.
    return exp((a - 1.0) * log(x) + (b - 1.0) * log1p(-x) - betaln(a, b))


def _gammainc_dx(a, x):
    return exp((a - 1.0) * log(x) - x - gammaln(a))


_BETAINC_AB = NoRule("The gradient of betainc with respect to a and b")
_GAMMAINC_A = NoRule("The gradient of gammainc with respect to a")
_GAMMAINCC_A = NoRule("The gradient of gammaincc with respect to a")
_betainc = _define("betainc", 3,
                   lambda y, a, b, x: (_BETAINC_AB, _BETAINC_AB, _betainc_dx(a, b, x)))
_gammainc = _define("gammainc", 2, lambda y, a, x: (_GAMMAINC_A, _gammainc_dx(a, x)))
_gammaincc = _define("gammaincc", 2, lambda y, a, x: (_GAMMAINCC_A, -_gammainc_dx(a, x)))


def betainc(a: Any, b: Any, x: Any) -> Tensor:
    """The regularized incomplete beta function I_x(a, b); differentiable in ``x`` only
    (asking for the gradient with respect to ``a`` or ``b`` raises NotImplementedError)."""
    return _betainc(a, b, x)


def gammainc(a: Any, x: Any) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x); differentiable in ``x``
    only (asking for the gradient with respect to ``a`` raises NotImplementedError)."""
    return _gammainc(a, x)


def gammaincc(a: Any, x: Any) -> Tensor:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x);
    differentiable in ``x`` only."""
    return _gammaincc(a, x)


def multigammaln(a: Any, d: int) -> Tensor:
    """scipy.special.multigammaln(a, d): the log of the multivariate gamma function of
    dimension ``d`` (a Python int), a sum of ``gammaln``; differentiable in ``a``."""
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 1:
        raise ValueError(f"multigammaln's d must be a positive integer, got {d!r}.")
    a = operand(a) if not isinstance(a, _OPERAND_TYPES) else a
    total = gammaln(a)
    for j in range(1, int(d)):
        total = total + gammaln(a - 0.5 * j)
    return total + d * (d - 1) * 0.25 * math.log(math.pi)


__all__ += ["betainc", "gammainc", "gammaincc", "multigammaln"]

# --- logistic, entropy and x log y ---------------------------------------------------------

expit = _define("expit", 1, lambda y, x: (y * (1.0 - y),))
logit = _define("logit", 1, lambda y, x: (1.0 / (x * (1.0 - x)),))
entr = _define("entr", 1, lambda y, x: (-(log(x) + 1.0),))
rel_entr = _define("rel_entr", 2, lambda out, x, y: (log(x / y) + 1.0, -(x / y)))
kl_div = _define("kl_div", 2, lambda out, x, y: (log(x / y), 1.0 - x / y))
xlogy = _define("xlogy", 2, lambda out, x, y: (xlogy(_nonzero_mask(x), y), xdivy(x, y)))
xlog1py = _define("xlog1py", 2,
                  lambda out, x, y: (xlog1py(_nonzero_mask(x), y), xdivy(x, y + 1.0)))


def _xdivy_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.equal(x, 0), np.zeros_like(x / y), x / y)


xdivy = _define("xdivy", 2,
                lambda out, x, y: (xdivy(_nonzero_mask(x), y), xdivy(-x, y * y)),
                impl=lambda: _xdivy_impl,
                doc="TF's tf.math.xdivy: x / y, and 0 where x is 0 (NumPy only).")

# --- Bessel functions ----------------------------------------------------------------------

i0 = _define("i0", 1, lambda y, x: (i1(x),))
i1 = _define("i1", 1, lambda y, x: ((i0(x) + iv(2.0, x)) * 0.5,))
i0e = _define("i0e", 1, lambda y, x: (i1e(x) - sign(x) * y,))
i1e = _define("i1e", 1, lambda y, x: ((i0e(x) + ive(2.0, x)) * 0.5 - sign(x) * y,))
iv = _define("iv", 2, lambda y, v, x: (None, (iv(v - 1.0, x) + iv(v + 1.0, x)) * 0.5))
ive = _define("ive", 2, lambda y, v, x: (
    None, (ive(v - 1.0, x) + ive(v + 1.0, x)) * 0.5 - sign(x) * y))
j0 = _define("j0", 1, lambda y, x: (-j1(x),))
j1 = _define("j1", 1, lambda y, x: ((j0(x) - jv(2.0, x)) * 0.5,))
jv = _define("jv", 2, lambda y, v, x: (None, (jv(v - 1.0, x) - jv(v + 1.0, x)) * 0.5))
jn = jv
y0 = _define("y0", 1, lambda y, x: (-y1(x),))
y1 = _define("y1", 1, lambda y, x: ((y0(x) - yv(2.0, x)) * 0.5,))
yv = _define("yv", 2, lambda y, v, x: (None, (yv(v - 1.0, x) - yv(v + 1.0, x)) * 0.5))
yn = _define("yn", 2, lambda y, n, x: (None, (yn(n - 1, x) - yn(n + 1, x)) * 0.5))
k0 = _define("k0", 1, lambda y, x: (-k1(x),))
k1 = _define("k1", 1, lambda y, x: (-(k0(x) + kv(2.0, x)) * 0.5,))
k0e = _define("k0e", 1, lambda y, x: (y - k1e(x),))
k1e = _define("k1e", 1, lambda y, x: (y - (k0e(x) + kve(2.0, x)) * 0.5,))
kv = _define("kv", 2, lambda y, v, x: (None, -(kv(v - 1.0, x) + kv(v + 1.0, x)) * 0.5))
kve = _define("kve", 2, lambda y, v, x: (
    None, y - (kve(v - 1.0, x) + kve(v + 1.0, x)) * 0.5))
__all__.append("jn")

# --- zeta and the other functions of tf.math.special ---------------------------------------

zeta = _define("zeta", 2, lambda y, x, q: (None, -x * zeta(x + 1.0, q)),
               doc="The Hurwitz zeta function zeta(x, q) (scipy.special.zeta with q; "
                   "TF's tf.math.zeta); differentiable in q only.")
dawsn = _define("dawsn", 1, lambda y, x: (1.0 - 2.0 * x * y,))
expi = _define("expi", 1, lambda y, x: (exp(x) / x,))
spence = _define("spence", 1, lambda y, x: (log(x) / (1.0 - x),))


def _fresnel_impl(part: int) -> Callable[[], Callable[..., Any]]:
    def impl():
        fresnel = scipy_special().fresnel

        def one_part(x):
            return fresnel(x)[part]
        one_part.__name__ = one_part.__qualname__ = ("fresnel_sin", "fresnel_cos")[part]
        return one_part
    return impl


# scipy.special.fresnel returns (S, C); S' = sin(pi x^2 / 2), C' = cos(pi x^2 / 2).
fresnel_sin = _define("fresnel_sin", 1, lambda y, x: (sin(x * x * (math.pi / 2)),),
                      impl=_fresnel_impl(0), doc="TF's tf.math.special.fresnel_sin.")
fresnel_cos = _define("fresnel_cos", 1, lambda y, x: (cos(x * x * (math.pi / 2)),),
                      impl=_fresnel_impl(1), doc="TF's tf.math.special.fresnel_cos.")


# --- SciPy's ufuncs on tensors ------------------------------------------------------------

# scipy.special attribute -> the op its ufunc dispatches to (aliases such as jn, which is
# the jv ufunc, map through the ufunc object).
_SCIPY_UFUNCS: dict[str, Callable[..., Any]] = {
    "erf": erf, "erfc": erfc, "erfinv": erfinv, "erfcinv": erfcinv, "ndtr": ndtr,
    "ndtri": ndtri, "log_ndtr": log_ndtr, "psi": digamma, "gammaln": gammaln,
    "gamma": gamma, "rgamma": rgamma, "gammasgn": gammasgn, "beta": beta, "betaln": betaln,
    "betainc": betainc, "gammainc": gammainc, "gammaincc": gammaincc, "expit": expit,
    "logit": logit, "entr": entr, "rel_entr": rel_entr, "kl_div": kl_div, "xlogy": xlogy,
    "xlog1py": xlog1py, "i0": i0, "i1": i1, "i0e": i0e, "i1e": i1e, "iv": iv, "ive": ive,
    "j0": j0, "j1": j1, "jv": jv, "y0": y0, "y1": y1, "yv": yv, "yn": yn, "k0": k0,
    "k1": k1, "k0e": k0e, "k1e": k1e, "kv": kv, "kve": kve, "dawsn": dawsn, "expi": expi,
    "spence": spence,
}


def register_scipy_ufuncs() -> bool:
    """Map SciPy's special ufuncs to these ops, once SciPy is imported (it is, when one of
    its ufuncs reaches a tensor); False while it is not, so the caller asks again later."""
    special = sys.modules.get("scipy.special")
    if special is None:
        return False
    for attr, op in _SCIPY_UFUNCS.items():
        ufunc = getattr(special, attr, None)
        if isinstance(ufunc, np.ufunc):
            register_ufunc(ufunc, op)
    return True


register_lazy_ufuncs(register_scipy_ufuncs)
