"""``custom_gradient``, with TensorFlow's semantics (``stop_gradient`` is an op:
``ops/shape.py``).

A ``@custom_gradient`` function runs as it is written (tapes record its ops, as in TF,
so a ``grad_fn`` that closes over its intermediates can be differentiated again). Its
results are then re-issued by one record of the ``custom_gradient`` primitive, whose
inputs are the function's positional arguments and the variables it read: a gradient
reaching the results goes through that record only, i.e. through ``grad_fn``.

The VJP rule of that primitive emits one ``custom_gradient_vjp`` equation. Run on
arrays it calls ``grad_fn`` on fresh tensors; run on tensors while an outer tape
records (nested tapes), it calls ``grad_fn`` on those tensors directly, so the outer tape
records ``grad_fn``'s own ops, which is how TF gives higher-order derivatives here.
Both primitives carry the Python function in their params: they are never cached or
compiled.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core import nest
from ..core.state import state
from ..core.tensor import Tensor, constant, wrap
from ..core.variable import Variable
from ..ir.nodes import Aval
from ..ops.registry import Primitive, bind

__all__ = ["custom_gradient"]


# --- custom_gradient -----------------------------------------------------------------

class _VariableWatcher:
    """Sits on the tape stack while a custom-gradient function runs, to see which
    trainable variables it reads (TF's ``VariableWatcher``). Records nothing: of the
    observer protocol (``core.state.Observer``) it uses only the variable reads."""

    def __init__(self) -> None:
        self.variables: dict[int, Variable] = {}

    def on_op(self, prim: Any, args: tuple, values: list, params: dict, result: Any,
              out: Any, shared: Any) -> Any:
        for a in args:
            if isinstance(a, Variable):
                self.on_variable_read(a)
        return shared

    def on_op_alone(self, prim: Any, in_ids: list, values: list, params: dict,
                    result: Any, out: Any, reads: Any, raw_arrays: bool) -> None:
        if reads is not None:
            for a in reads:
                if isinstance(a, Variable):
                    self.on_variable_read(a)

    def on_op_nested(self, prim: Any, args: tuple, in_ids: list, values: list,
                     params: dict, result: Any, out: Any, reads: Any, raw_arrays: bool,
                     shared: Any) -> Any:
        self.on_op_alone(prim, in_ids, values, params, result, out, reads, raw_arrays)
        return shared

    def sees(self, tensor: Any) -> bool:
        """A trainable variable: the function's gradient reaches it (TF watches it)."""
        return isinstance(tensor, Variable) and tensor.trainable

    def on_variable_read(self, variable: Variable) -> None:
        if variable.trainable:
            self.variables.setdefault(variable._id, variable)


class _CustomCall:
    """One call of a custom-gradient function: what its VJP needs at run time.

    ``reads_inputs``: how many of the first inputs ``grad_fn`` is given as values
    instead of holding them itself: the VJP equation reads them as operands, so the
    backward lets go of them after their last use (``recompute_grad``'s block
    arguments; 0 for a ``custom_gradient``). Such a ``grad_fn`` is gradtape's own,
    called as ``grad_fn(upstream, inputs=[...], variables=...)`` with the upstream
    gradients in a list it may empty (then nothing else holds them)."""

    def __init__(self, name: str, grad_fn: Callable[..., Any], n_args: int,
                 variables: list[Variable], in_avals: list[Aval], out_avals: list[Aval],
                 outputs: tuple, reads_inputs: int = 0) -> None:
        self.__name__ = name  # the IR printer shows params by name
        self.grad_fn = grad_fn
        self.n_args = n_args
        self.variables = variables
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.outputs = outputs
        self.reads_inputs = reads_inputs

    def __repr__(self) -> str:
        return f"<custom_gradient {self.__name__}>"

    def gradients(self, operands: Sequence[Any], consume: bool = False
                  ) -> tuple[Tensor, ...]:
        """Call ``grad_fn`` with one upstream gradient per result (the first operands;
        then the ``reads_inputs`` inputs); one gradient per input (arguments, then
        variables), checked as TF checks them. ``consume``: ``operands`` is a list
        nothing else holds, emptied once read."""
        n = len(self.out_avals)
        upstream = [_as_tensor(u, aval) for u, aval in zip(operands[:n], self.out_avals)]
        variables = list(self.variables) if self.variables else None
        if self.reads_inputs:
            inputs = [x if isinstance(x, Tensor) else wrap(x) for x in operands[n:]]
            if consume:
                operands.clear()  # type: ignore[attr-defined]
            # grad_fn's now: it lets go of the upstream gradients as it goes.
            result = self.grad_fn(upstream, inputs=inputs, variables=variables)
            del inputs, upstream
        elif variables:
            result = self.grad_fn(*upstream, variables=variables)
        else:
            result = self.grad_fn(*upstream)
        if variables:
            if not isinstance(result, (list, tuple)) or len(result) != 2:
                raise TypeError(
                    f"The grad_fn of custom-gradient function {self.__name__!r} must return "
                    "(input_gradients, variable_gradients) because the function reads "
                    f"variables ({_names(self.variables)}); it returned {result!r}."
                )
            input_grads, variable_grads = result
            variable_grads = list(nest.flatten(variable_grads))
            if len(variable_grads) != len(self.variables):
                raise ValueError(
                    "Must return gradient for each variable from @custom_gradient grad_fn: "
                    f"{self.__name__!r} reads {len(self.variables)} variables "
                    f"({_names(self.variables)}) but its grad_fn returned "
                    f"{len(variable_grads)} variable gradients."
                )
        else:
            input_grads, variable_grads = result, []
        flat = nest.flatten(input_grads)
        if len(flat) != self.n_args:
            raise ValueError(
                f"custom_gradient function expected to return {self.n_args} gradients, but "
                f"returned {len(flat)} instead: the grad_fn of {self.__name__!r} must return "
                "one gradient (or None) per positional argument of the function."
            )
        grads = list(flat) + variable_grads
        return tuple(_fit_gradient(g, aval, k, self.__name__)
                     for k, (g, aval) in enumerate(zip(grads, self.in_avals)))


def _names(variables: list[Variable]) -> str:
    return ", ".join(v.name for v in variables)


def _as_tensor(value: Any, aval: Aval) -> Tensor:
    """An upstream gradient as a tensor of its result's shape (seeds may be scalars)."""
    if not isinstance(value, Tensor):
        value = np.asarray(value, dtype=aval.dtype)
        return wrap(np.broadcast_to(value, aval.shape).copy()
                            if value.shape != aval.shape else value)
    if tuple(value.shape) != aval.shape:
        from ..ops import broadcast_to

        value = broadcast_to(value, aval.shape)
    return value


def _fit_gradient(g: Any, aval: Aval, k: int, name: str) -> Tensor:
    """A gradient from grad_fn as a tensor of its input's shape and dtype (None -> 0)."""
    if g is None:
        return wrap(np.zeros(aval.shape, aval.dtype))
    if not isinstance(g, Tensor):
        g = constant(np.asarray(g, dtype=aval.dtype))
    if tuple(g.shape) != aval.shape:
        raise ValueError(
            f"The grad_fn of custom-gradient function {name!r} returned a gradient of shape "
            f"{tuple(g.shape)} for input {k}, which has shape {aval.shape}: return a "
            "gradient of the input's shape."
        )
    if g.dtype != aval.dtype and np.issubdtype(aval.dtype, np.inexact):
        from ..ops import cast

        g = cast(g, aval.dtype)
    return g


def _forward_impl(*inputs: Any, call: _CustomCall) -> tuple:
    # The function already ran: the record re-issues its results under new ids. It is
    # bound once (never cached or compiled), so the call lets go of the results: the
    # tape's params would hold a block's output to the end of the backward otherwise.
    outputs = call.outputs
    if outputs is None:
        raise RuntimeError(f"custom_gradient {call.__name__!r} re-issued its results twice")
    call.outputs = None
    return outputs


def _forward_vjp(g: tuple, y: tuple, *inputs: Any, call: _CustomCall) -> tuple:
    return bind(custom_gradient_vjp_p, *g, *inputs[:call.reads_inputs], call=call)


def _forward_jvp(ts: tuple, y: tuple, *inputs: Any, call: _CustomCall) -> tuple:
    """Forward mode through grad_fn, as TF does: grad_fn(u) is linear in u (u -> J^T u),
    so the JVP ``J t`` is the gradient of ``<grad_fn(u), t>`` with respect to ``u``."""
    from .gradient_tape import GradientTape

    if any(not isinstance(x, Tensor) for x in inputs):
        raise NotImplementedError(
            "A custom_gradient function's JVP runs grad_fn on tensors; it cannot be "
            "traced into a program."
        )
    upstream = [wrap(np.zeros(a.shape, a.dtype)) for a in call.out_avals]
    with GradientTape() as tape:
        tape.watch(upstream)
        grads = call.gradients(upstream + list(inputs[:call.reads_inputs]))
    pairs = [(g, t) for g, t in zip(grads, ts) if t is not None]
    if not pairs:
        return tuple(None for _ in call.out_avals)
    return tuple(tape.gradient([g for g, _ in pairs], upstream,
                               output_gradients=[t for _, t in pairs]))


custom_gradient_p = Primitive(
    "custom_gradient", _forward_impl, vjp=_forward_vjp, jvp=_forward_jvp,
    kind_neutral=True,
    shape_rule=lambda *inputs, call: list(call.out_avals),
    multiple_results=True, cacheable=False,
)


def _vjp_impl(*operands: Any, call: _CustomCall) -> tuple:
    return tuple(g._value for g in call.gradients(operands))


def _vjp_consuming(operands: list, call: _CustomCall) -> tuple:
    return tuple(g._value for g in call.gradients(operands, consume=True))


def _vjp_of_vjp(*args: Any, **params: Any) -> tuple:
    raise NotImplementedError(
        "The gradient of a custom_gradient's grad_fn can only be taken by running "
        "grad_fn under an outer GradientTape (nested tapes), as in TensorFlow."
    )


custom_gradient_vjp_p = Primitive(
    "custom_gradient_vjp", _vjp_impl, vjp=_vjp_of_vjp,
    kind_neutral=True,
    shape_rule=lambda *upstream, call: list(call.in_avals),
    multiple_results=True, cacheable=False,
    # The interpreter calls this instead of binding when it runs a backward on tensors,
    # so the tapes that are recording see grad_fn's own operations.
    run_on_tensors=lambda *operands, call: call.gradients(operands),
    run_consuming=_vjp_consuming,
)


def _as_input(value: Any, name: str) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, complex, np.ndarray, np.generic, list, tuple)):
        return constant(value)
    raise TypeError(
        f"Positional arguments of custom-gradient function {name!r} must be tensors or "
        f"array-likes (grad_fn returns one gradient per positional argument), got "
        f"{type(value).__name__}. Pass other values as keyword arguments."
    )


def _accepts_variables(grad_fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):  # a builtin: let the call decide
        return True
    return any(p.name == "variables" or p.kind is inspect.Parameter.VAR_KEYWORD
               for p in params)


def _call_custom(f: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    name = getattr(f, "__name__", "custom_gradient")
    watcher = _VariableWatcher()
    state.recording.append(watcher)
    try:
        returned = f(*args, **kwargs)
    finally:
        state.recording.remove(watcher)
    if not isinstance(returned, tuple) or len(returned) != 2 or not callable(returned[1]):
        raise TypeError(
            f"A @custom_gradient function must return (result, grad_fn); {name!r} returned "
            f"{type(returned).__name__}."
        )
    result, grad_fn = returned
    flat_args = nest.flatten(args)
    inputs = [_as_input(a, name) for a in flat_args]
    # Variables read inside the function that were not passed in get gradients too.
    passed = [id(x) for x in flat_args + nest.flatten(kwargs)]
    variables = [v for v in watcher.variables.values() if id(v) not in passed]
    if variables and not _accepts_variables(grad_fn):
        raise TypeError(
            "@custom_gradient grad_fn must accept keyword argument 'variables', since "
            f"function {name!r} uses variables: {_names(variables)}. Define it as "
            "grad_fn(*upstream, variables=None) returning (input_grads, variable_grads)."
        )
    return reissue(name, grad_fn, inputs, variables, result)


def reissue(name: str, grad_fn: Callable[..., Any], inputs: list[Tensor],
            variables: list[Variable], result: Any, reads_inputs: int = 0) -> Any:
    """``result`` re-issued by one ``custom_gradient`` record of ``inputs`` and
    ``variables``, whose gradient is ``grad_fn``'s (``recompute_grad`` uses it too,
    with ``reads_inputs``: ``_CustomCall``)."""
    flat_result = [r if isinstance(r, Tensor) else constant(r) for r in nest.flatten(result)]
    call = _CustomCall(
        name, grad_fn, len(inputs), variables,
        in_avals=[Aval(tuple(t.shape), t.dtype) for t in inputs + variables],
        out_avals=[Aval(tuple(r.shape), r.dtype) for r in flat_result],
        outputs=tuple(r._value for r in flat_result), reads_inputs=reads_inputs,
    )
    outs = bind(custom_gradient_p, *inputs, *variables, call=call)
    return nest.pack_sequence_as(result, list(outs))


class _CustomGradientFunction:
    """The decorated function; binds like a method when used on one."""

    def __init__(self, f: Callable[..., Any]):
        self._f = f
        functools.update_wrapper(self, f)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _call_custom(self._f, args, kwargs)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return _CustomGradientFunction(self._f.__get__(instance, owner))


def custom_gradient(f: Callable[..., Any] | None = None) -> Any:
    """Decorator giving a function its own gradient (``tf.custom_gradient``).

    ``f(*args, **kwargs)`` returns ``(y, grad_fn)``: ``y`` a tensor or a list/tuple of
    tensors, and ``grad_fn(*upstream)`` one gradient (or ``None``) per positional
    argument of ``f``, given one upstream gradient per tensor of ``y``. If ``f`` reads
    trainable variables it was not passed, ``grad_fn`` is called with
    ``variables=[...]`` too and returns ``(input_grads, variable_grads)``.

    Under nested tapes the outer tape records ``grad_fn``'s own operations, so
    higher-order derivatives follow ``grad_fn``.
    """
    if f is None:
        return custom_gradient
    return _CustomGradientFunction(f)
