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

from ..ad.forward_mode import ForwardAccumulator, _pair_leaves
from ..core import nest
from ..core.tensor import Tensor, convert_to_tensor, wrap
from ..core.unconnected import UnconnectedGradients
from ..tape.gradient_tape import GradientTape

__all__ = ["jvp", "vjp"]


def _fresh_input(x: Any) -> Tensor:
    """``x`` as a new tensor of its own: a function input no other argument shares."""
    if isinstance(x, Tensor):
        from ..ops import identity

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
        flat = [wrap(np.zeros_like(s._value)) if g is None else g
                for g, s in zip(flat, nest.flatten(self._inputs))]
        return tuple(nest.pack_sequence_as(self._inputs, flat))


def _as_cotangent(ct: Any, out: Tensor) -> Any:
    """A cotangent of ``out``'s dtype: tensors stay tensors (so outer tapes see them)."""
    if isinstance(ct, Tensor):
        if ct.dtype != out.dtype:
            from ..ops import cast

            ct = cast(ct, out.dtype)
        return ct
    return wrap(np.asarray(ct, dtype=out.dtype))


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


# --- gradient transforms: grad, value_and_grad, jacobian, hessian ------------------------
#
# JAX's semantics on top of tapes: the arguments named by ``argnums`` enter ``f`` as fresh
# tensors watched by a tape of their own, so the transforms compose (``grad(grad(f))``:
# the inner tape's backward runs while the outer tape records, which is how tapes give
# higher order) and work inside a user's tape. Gradients have the structure of their
# argument (lists, tuples, dicts, namedtuples) and unconnected inputs get zeros.

__all__ += ["grad", "value_and_grad", "jacobian", "hessian"]


def _normalize_argnums(argnums: Any, name: str) -> tuple[tuple[int, ...], bool]:
    """``argnums`` as a tuple of ints, and whether one int was given (one gradient, not
    a tuple of them)."""
    if isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool):
        return (int(argnums),), True
    if isinstance(argnums, (tuple, list)) and all(
            isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in argnums):
        return tuple(int(i) for i in argnums), False
    raise TypeError(
        f"argnums of {name} must be an int or a tuple of ints, got {argnums!r}."
    )


def _inputs(args: tuple, argnums: tuple[int, ...], name: str) -> tuple[list[Any], list[Any]]:
    """The call's positional arguments with the differentiated ones replaced by fresh
    tensors, and those differentiated arguments in ``argnums`` order."""
    n = len(args)
    if any(i >= n or i < -n for i in argnums):
        raise TypeError(
            f"differentiating with respect to argnums={argnums} requires at least "
            f"{max(i if i >= 0 else -i - 1 for i in argnums) + 1} positional arguments to "
            f"be passed by the caller, but got only {n} positional arguments."
        )
    args = list(args)
    fresh: dict[int, Any] = {}
    for i in argnums:
        i %= n
        if i not in fresh:
            fresh[i] = nest.map_structure(_fresh_input, args[i])
            for leaf in nest.flatten(fresh[i]):
                if not _is_float(leaf):
                    raise TypeError(
                        f"{name} requires real- or complex-valued inputs (input dtype that "
                        f"is a sub-dtype of np.inexact), but got {leaf.dtype.name}. Pass "
                        "floats (3.0, not 3) for the arguments in argnums, or move "
                        "integer arguments out of argnums."
                    )
            args[i] = fresh[i]
    return args, [fresh[i % n] for i in argnums]


def _scalar_output(out: Any, name: str) -> Tensor:
    if isinstance(out, (tuple, list, dict)):
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output was {out!r}. Use "
            "gt.jacobian for several outputs, or has_aux=True to return extra data."
        )
    out = out if isinstance(out, Tensor) else convert_to_tensor(out)
    if out.shape != ():
        raise TypeError(
            "Gradient only defined for scalar-output functions. Output had shape: "
            f"{out.shape}. Reduce it (e.g. gt.reduce_sum) or use gt.jacobian."
        )
    if not np.issubdtype(out.dtype, np.floating):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {out.dtype.name}."
        )
    return out


def _value_and_grad_call(f, argnums, has_aux, name, args, kwargs):
    nums, single = _normalize_argnums(argnums, name)
    args, diff = _inputs(args, nums, name)
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(nest.flatten(diff))
        out = f(*args, **kwargs)
    value, aux = _split_aux(out, has_aux, name)
    value = _scalar_output(value, name)
    grads = tape.gradient(value, diff, unconnected_gradients=UnconnectedGradients.ZERO)
    grads = grads[0] if single else tuple(grads)
    return value, aux, grads


def value_and_grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """``f`` and its gradient in one call: the returned function gives
    ``(f(*args), gradient)``, or ``((value, aux), gradient)`` with ``has_aux=True``.

    ``f`` must return a real scalar. ``argnums`` (an int or a tuple of ints) picks the
    positional arguments to differentiate; the gradient of each has that argument's
    structure, and a tuple ``argnums`` gives a tuple of gradients. Arguments may be
    tensors, variables, NumPy arrays or Python floats (float32, TF's rule); integer
    arguments in ``argnums`` raise ``TypeError``. Keyword arguments are passed through.
    """
    _normalize_argnums(argnums, "value_and_grad")

    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        value, aux, grads = _value_and_grad_call(f, argnums, has_aux, "value_and_grad",
                                                 args, kwargs)
        return ((value, aux), grads) if has_aux else (value, grads)

    _named(value_and_grad_f, "value_and_grad", f)
    return value_and_grad_f


def grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of ``f`` (a real scalar function) as a function of ``f``'s arguments.

    ``gt.grad(f)(x)`` has ``x``'s structure and dtype; ``argnums`` selects arguments (a
    tuple of ints gives a tuple of gradients); with ``has_aux=True``, ``f`` returns
    ``(value, aux)`` and the result is ``(gradient, aux)``. Transforms compose:
    ``gt.grad(gt.grad(f))`` is the second derivative. See :func:`value_and_grad`.
    """
    _normalize_argnums(argnums, "grad")

    def grad_f(*args: Any, **kwargs: Any) -> Any:
        _, aux, grads = _value_and_grad_call(f, argnums, has_aux, "grad", args, kwargs)
        return (grads, aux) if has_aux else grads

    _named(grad_f, "grad", f)
    return grad_f


def jacobian(f: Callable[..., Any], argnums: int | Sequence[int] = 0,
             has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``f`` (reverse mode, like ``jax.jacrev``).

    For an output leaf of shape ``out`` and an input leaf of shape ``in``, the block is
    ``out + in``. The result has the structure of ``f``'s output, each leaf replaced by
    the structure of the differentiated argument (a tuple over ``argnums`` when it is a
    tuple). With ``has_aux=True``, ``f`` returns ``(output, aux)`` and the result is
    ``(jacobian, aux)``.
    """
    nums, single = _normalize_argnums(argnums, "jacobian")

    def jacobian_f(*args: Any, **kwargs: Any) -> Any:
        call_args, diff = _inputs(args, nums, "jacobian")
        with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
            tape.watch(nest.flatten(diff))
            out = f(*call_args, **kwargs)
        out, aux = _split_aux(out, has_aux, "jacobian")
        blocks = []
        for leaf in nest.flatten(out):
            leaf = leaf if isinstance(leaf, Tensor) else convert_to_tensor(leaf)
            if not np.issubdtype(leaf.dtype, np.inexact):
                raise TypeError(
                    "jacobian requires real- or complex-valued outputs, but got "
                    f"{leaf.dtype.name}."
                )
            jac = tape.jacobian(leaf, diff, unconnected_gradients=UnconnectedGradients.ZERO)
            blocks.append(jac[0] if single else tuple(jac))
        result = nest.pack_sequence_as(out, blocks)
        return (result, aux) if has_aux else result

    _named(jacobian_f, "jacobian", f)
    return jacobian_f


def hessian(f: Callable[..., Any], argnums: int | Sequence[int] = 0,
            has_aux: bool = False) -> Callable[..., Any]:
    """The Hessian of ``f``: ``jacobian(jacobian(f))``, as ``jax.hessian``.

    For a scalar ``f`` of ``x`` with shape ``s`` the result has shape ``s + s``; with a
    tuple ``argnums`` it is a tuple of tuples of blocks, ``result[i][j]`` the second
    derivative with respect to arguments ``argnums[i]`` and ``argnums[j]``.
    """
    inner = jacobian(f, argnums, has_aux)
    hessian_f = jacobian(inner, argnums, has_aux)
    _named(hessian_f, "hessian", f)
    return hessian_f


def _named(fn: Callable[..., Any], transform: str, f: Callable[..., Any]) -> None:
    fn.__name__ = f"{transform}({getattr(f, '__name__', 'f')})"
    fn.__qualname__ = fn.__name__
    fn.__doc__ = getattr(f, "__doc__", None)
    fn.__wrapped__ = f
