"""Which values are uniform fills: every element the same known scalar.

Backward programs are full of them: the implicit ``ones`` seed reshaped and broadcast
to a target's shape, ``zeros_like`` cotangents of unused outputs, literals. The
simplification passes ask this analysis "is this value all ``c``?" and rewrite around
the answer. A fill's scalar is kept as a NumPy scalar of the value's dtype, so it
promotes exactly like the array it stands for (NEP 50: NumPy scalars are not weak);
only a Python scalar literal stays a Python scalar (weakly typed, like NumPy treats it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..ir.nodes import Eqn, IRValue, Literal, Var
from ..ops import elementwise as _ew
from ..ops import reduce as _reduce
from ..ops import shape as _shape

# Shape ops that move elements around without changing them: a fill stays the same fill.
_REARRANGING = frozenset({
    _shape.reshape_p, _shape.transpose_p, _shape.broadcast_to_p, _shape.identity_p,
})
# Sums of a fill: n * c, when every partial sum is exact (so any summation order agrees).
_SUMMING = frozenset({_reduce.sum_p, _shape.unbroadcast_p})
_CREATING = {_ew.zeros_like_p: 0, _ew.ones_like_p: 1}


def literal_scalar(lit: Literal) -> Any:
    """The scalar a literal holds, or ``None`` if it holds an array of several values."""
    value = lit.value
    if isinstance(value, np.ndarray):
        return value[()] if value.ndim == 0 else None
    return value


def is_zero(c: Any) -> bool:
    return c is not None and bool(c == 0)


def is_one(c: Any) -> bool:
    return c is not None and bool(c == 1)


def as_dtype(c: Any, dtype: np.dtype) -> Any:
    """``c`` as a NumPy scalar of ``dtype``, or ``None`` if that would change its value."""
    with np.errstate(all="ignore"):
        converted = np.asarray(c).astype(dtype)[()]
        same = bool(converted == c) or (bool(np.isnan(converted)) and bool(np.isnan(c)))
    return converted if same else None


class Fills:
    """Fill values of the vars seen so far; feed it every equation kept, in order."""

    def __init__(self) -> None:
        self._known: dict[Var, Any] = {}
        self._last: tuple[Eqn | None, Any] = (None, None)  # infer's latest answer

    def value(self, v: IRValue | None) -> Any:
        """The scalar every element of ``v`` equals, or ``None`` if unknown."""
        if isinstance(v, Literal):
            return literal_scalar(v)
        return self._known.get(v)

    def any_known(self, values: Iterable[IRValue]) -> bool:
        """Whether ``value`` knows the fill of one of ``values`` (one call per equation:
        the rewriter asks it of every equation it visits)."""
        known = self._known
        for v in values:
            if isinstance(v, Literal):
                if literal_scalar(v) is not None:
                    return True
            elif v in known:  # only known fills are kept
                return True
        return False

    def observe(self, eqn: Eqn) -> None:
        c = self.infer(eqn)
        if c is not None:
            self._known[eqn.outs[0]] = c

    def infer(self, eqn: Eqn) -> Any:
        """The fill value of ``eqn``'s output, computed from what is known of its inputs."""
        last, c = self._last
        if last is not eqn:
            c = self._infer(eqn)
            self._last = (eqn, c)
        return c

    def _infer(self, eqn: Eqn) -> Any:
        prim = eqn.prim
        if prim.multiple_results:
            return None
        out = eqn.outs[0]
        if prim in _CREATING:
            return out.dtype.type(_CREATING[prim])
        inputs = eqn.inputs
        if not inputs:
            return None
        value = self.value
        if prim in _SUMMING:
            return _sum_of_fill(value(inputs[0]), inputs[0], out)
        values = []
        for v in inputs:
            c = value(v)
            if c is None:
                return None
            values.append(c)
        if prim in _REARRANGING:
            return as_dtype(values[0], out.dtype)
        if prim.elementwise:
            return _apply(eqn, values)
        return None


def _sum_of_fill(c: Any, x: IRValue, out: Var) -> Any:
    """``c`` summed over the elements of ``x`` that make one element of ``out``, if that
    is exact: ``|c|``'s integer mantissa times the count fits the output's precision."""
    if c is None:
        return None
    dtype = out.dtype
    if is_zero(c):
        return dtype.type(0)
    in_size = int(np.prod(x.shape, dtype=np.int64))
    out_size = int(np.prod(out.shape, dtype=np.int64))
    if isinstance(x, Literal) or out_size == 0:
        return None
    n = in_size // out_size
    if dtype.kind == "f" and dtype.itemsize <= 8:
        c = float(c)
        if not np.isfinite(c):
            return None
        mantissa, _ = c.as_integer_ratio()
        if abs(mantissa) * n >= 2 ** (np.finfo(dtype).nmant + 1):
            return None
        with np.errstate(all="ignore"):
            total = dtype.type(c * n)  # c * n is exact in Python's double here
        return total if np.isfinite(total) else None
    if dtype.kind in "iu" and np.asarray(c).dtype.kind in "biu":
        total = int(c) * n
        info = np.iinfo(dtype)
        return dtype.type(total) if info.min <= total <= info.max else None
    return None


def _apply(eqn: Eqn, values: list) -> Any:
    """An elementwise primitive on scalars: the value of every element of its output."""
    out = eqn.outs[0]
    try:
        with np.errstate(all="ignore"):
            result = np.asarray(eqn.prim.impl(*values, **eqn.params))
    except Exception:  # a rule that cannot run on scalars: not a fill we can know
        return None
    if result.shape != () or result.dtype != out.dtype:
        return None
    return result[()]
