"""Function transforms: derivatives of Python functions, JAX-style.

Each transform is a thin layer over the tape API (``GradientTape``, ``ForwardAccumulator``),
so it nests with tapes and accumulators in any order and shares their compile cache.

- Forward mode: ``jvp``.
- Reverse mode: ``vjp`` (and the gradient-style transforms built on it).

Arguments are converted with TF's rules (a Python float becomes float32; NumPy arrays
keep their dtype). Each argument enters the function as a fresh tensor (an identity op of
the one given), so passing the same tensor twice gives two independent inputs, as in
JAX, while tapes and accumulators outside still see the connection to the original.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import nest
from .forward import ForwardAccumulator, _pair_leaves
from .tape import GradientTape
from .tensor import Tensor, convert_to_tensor

__all__ = ["jvp", "vjp"]


def _fresh_input(x: Any) -> Tensor:
    """``x`` as a new tensor of its own: a function input no other argument shares."""
    if isinstance(x, Tensor):
        from .ops import identity

        return identity(x)
    return convert_to_tensor(x)


def _is_float(t: Any) -> bool:
    return isinstance(t, Tensor) and np.issubdtype(t.dtype, np.inexact)


def _split_aux(out: Any, has_aux: bool, name: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            f"{name} with has_aux=True needs the function to return a pair "
            f"(output, auxiliary data), got {type(out).__name__}."
        )
    return out[0], out[1]


# --- forward mode -----------------------------------------------------------------------

def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """Evaluate ``f(*primals)`` and its Jacobian-vector product along ``tangents``.

    ``primals`` and ``tangents`` are tuples (or lists) with one entry per argument of
    ``f``, each entry a tensor, array-like or nested structure of them; a tangent has
    its primal's shape. Returns ``(outputs, output_tangents)`` with the tangents in the
    structure of the outputs, zeros where an output does not depend on the primals
    (``(outputs, output_tangents, aux)`` with ``has_aux=True``).
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "primal and tangent arguments to gt.jvp must be tuples or lists with one entry "
            f"per argument of the function; found {type(primals).__name__} and "
            f"{type(tangents).__name__}. Write gt.jvp(f, (x,), (v,)) for one argument."
        )
    if len(primals) != len(tangents):
        raise ValueError(
            f"gt.jvp got {len(primals)} primals but {len(tangents)} tangents: give one "
            "tangent per primal."
        )
    args = tuple(nest.map_structure(_fresh_input, p) for p in primals)
    with ForwardAccumulator(args, tuple(tangents)) as acc:
        out = f(*args)
    out, aux = _split_aux(out, has_aux, "gt.jvp")
    out_tangents = acc.jvp(out, unconnected_gradients="zero")
    return (out, out_tangents, aux) if has_aux else (out, out_tangents)


# --- reverse mode -----------------------------------------------------------------------

class _VJPFunction:
    """The reusable ``vjp_fn`` returned by :func:`vjp`: a persistent tape kept behind it,
    so every call reuses the backward built (and cached) by the first."""

    def __init__(self, tape: GradientTape, outputs: Any, inputs: tuple):
        self._tape = tape
        self._outputs = outputs
        self._inputs = inputs

    def __call__(self, cotangents: Any) -> tuple[Any, ...]:
        """Cotangents of the inputs (one entry per argument of the function, in its
        structure) for ``cotangents`` in the structure of the outputs. A ``None``
        cotangent counts as zero."""
        targets, seeds = [], []
        for out, ct in _pair_leaves(self._outputs, cotangents, ("outputs", "cotangents")):
            if ct is None or not _is_float(out):
                continue
            targets.append(out)
            seeds.append(_as_cotangent(ct, out))
        sources = [s for s in nest.flatten(self._inputs) if _is_float(s)]
        if targets and sources:
            grads = self._tape.gradient(targets, sources, output_gradients=seeds,
                                        unconnected_gradients="zero")
        else:
            grads = []
        by_id = {s._id: g for s, g in zip(sources, grads)}
        flat = [by_id.get(s._id) if _is_float(s) else None for s in nest.flatten(self._inputs)]
        flat = [Tensor._wrap(np.zeros_like(s._value)) if g is None else g
                for g, s in zip(flat, nest.flatten(self._inputs))]
        return tuple(nest.pack_sequence_as(self._inputs, flat))


def _as_cotangent(ct: Any, out: Tensor) -> Any:
    """A cotangent of ``out``'s dtype: tensors stay tensors (so outer tapes see them)."""
    if isinstance(ct, Tensor):
        if ct.dtype != out.dtype:
            from .ops import cast

            ct = cast(ct, out.dtype)
        return ct
    return Tensor._wrap(np.asarray(ct, dtype=out.dtype))


def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """Evaluate ``f(*primals)`` and return ``(outputs, vjp_fn)``.

    ``vjp_fn(cotangents)`` takes cotangents in the structure of ``outputs`` and returns
    a tuple with the cotangent of each primal (zeros where unconnected). It can be
    called any number of times: the backward is built and cached on the first call
    (``(outputs, vjp_fn, aux)`` with ``has_aux=True``). Called under a tape or
    accumulator, it is differentiated like any other computation (higher order).
    """
    args = tuple(nest.map_structure(_fresh_input, p) for p in primals)
    with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch([a for a in nest.flatten(args) if _is_float(a)])
        out = f(*args)
    out, aux = _split_aux(out, has_aux, "gt.vjp")
    vjp_fn = _VJPFunction(tape, out, args)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)
