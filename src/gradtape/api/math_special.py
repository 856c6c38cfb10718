"""TF's names for the special functions: ``gt.math.erf``, ``gt.math.lgamma``... and
``gt.math.special.bessel_j0``..., over ``ops.special``'s primitives.

They follow TF: floating-point inputs only (``InvalidArgumentError`` for integers, as TF
raises for an op without an integer kernel), and a Python number beside a tensor takes
the tensor's dtype. ``erf``, ``erfc`` and ``xdivy`` need only NumPy; every other name
raises ``ImportError`` without SciPy (``pip install -e '.[scipy]'``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.namespaces import namespace as public_namespace
from ..core.tensor import Tensor
from ..ops import reduce as _reduce
from ..ops import special as _special
from ..ops.registry import operand

__all__ = ["MATH_MEMBERS", "special_namespace", "lbeta"]


def _floating(args: tuple, what: str) -> list[Any]:
    """``args`` as tensors of one floating dtype, TF's way: Python numbers beside a
    tensor take its dtype; integers or mixed dtypes raise InvalidArgumentError."""
    dtype = next((a.dtype for a in args if isinstance(a, Tensor)), None)
    tensors = [a if isinstance(a, Tensor) or dtype is None
               else operand(np.asarray(a, dtype=dtype)) for a in args]
    tensors = [operand(t) for t in tensors]
    for t in tensors:
        if not np.issubdtype(t.dtype, np.floating):
            raise InvalidArgumentError(
                f"{what} needs floating-point input (float16, float32 or float64), got "
                f"{t.dtype.name}; cast it first (gt.cast(x, gt.float32)).")
    if len({t.dtype for t in tensors}) > 1:
        raise InvalidArgumentError(
            f"{what} needs its inputs in one dtype, got "
            f"{', '.join(t.dtype.name for t in tensors)}; cast them to one.")
    return tensors


def _tf_name(tf_name: str, op: Any, arity: int) -> Any:
    def tf_op(*args: Any, name: str | None = None) -> Tensor:
        del name
        if len(args) != arity:
            raise TypeError(f"{tf_name} takes {arity} tensor argument(s), got {len(args)}.")
        return op(*_floating(args, tf_name))

    tf_op.__name__ = tf_op.__qualname__ = tf_name
    tf_op.__doc__ = f"TF's ``tf.math.{tf_name}``: {op.__doc__}"
    return tf_op


def lbeta(x: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.math.lbeta``: ``log |Beta(x)|`` over the last axis,
    ``sum(lgamma(x)) - lgamma(sum(x))``."""
    del name
    (x,) = _floating((x,), "lbeta")
    if not x.shape:
        raise InvalidArgumentError("lbeta reduces the last axis: x must have rank >= 1.")
    return _reduce.reduce_sum(_special.gammaln(x), -1) - _special.gammaln(
        _reduce.reduce_sum(x, -1))


_UNARY = {
    "erf": _special.erf, "erfc": _special.erfc, "erfinv": _special.erfinv,
    "erfcinv": _special.erfcinv, "lgamma": _special.gammaln, "digamma": _special.digamma,
    "ndtri": _special.ndtri, "ndtr": _special.ndtr, "log_ndtr": _special.log_ndtr,
    "bessel_i0": _special.i0, "bessel_i0e": _special.i0e, "bessel_i1": _special.i1,
    "bessel_i1e": _special.i1e,
}
_BINARY = {
    "polygamma": _special.polygamma, "igamma": _special.gammainc,
    "igammac": _special.gammaincc, "xlogy": _special.xlogy, "xlog1py": _special.xlog1py,
    "xdivy": _special.xdivy, "zeta": _special.zeta,
}
_SPECIAL_UNARY = {
    "bessel_i0": _special.i0, "bessel_i0e": _special.i0e, "bessel_i1": _special.i1,
    "bessel_i1e": _special.i1e, "bessel_j0": _special.j0, "bessel_j1": _special.j1,
    "bessel_k0": _special.k0, "bessel_k0e": _special.k0e, "bessel_k1": _special.k1,
    "bessel_k1e": _special.k1e, "bessel_y0": _special.y0, "bessel_y1": _special.y1,
    "dawsn": _special.dawsn, "expint": _special.expi, "fresnel_cos": _special.fresnel_cos,
    "fresnel_sin": _special.fresnel_sin, "spence": _special.spence,
}

# gt.math's special names (merged into gt.math by math_ns).
MATH_MEMBERS: dict[str, Any] = {
    **{n: _tf_name(n, op, 1) for n, op in _UNARY.items()},
    **{n: _tf_name(n, op, 2) for n, op in _BINARY.items()},
    "betainc": _tf_name("betainc", _special.betainc, 3),
    "lbeta": lbeta,
}
_SPECIAL_MEMBERS = {n: MATH_MEMBERS.get(n) or _tf_name(n, op, 1)
                    for n, op in _SPECIAL_UNARY.items()}

special_namespace = public_namespace(
    "gradtape.math.special", "TF's tf.math.special names over gradtape's special functions.",
    _SPECIAL_MEMBERS)
