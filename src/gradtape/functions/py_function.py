"""``gt.py_function`` and ``gt.numpy_function``: TF's ops that run Python code.

Eagerly ``py_function`` is a plain call of ``func`` on tensors, so the tapes record
``func``'s own ops and gradients flow (as in TF). ``numpy_function`` hands ``func`` NumPy
arrays: its results are constants (TF's too: it has no gradient).

Inside ``@gt.function`` each call is one equation of the trace (``py_function_p``,
``numpy_function_p``) whose implementation calls ``func``, so ``func`` runs on every call
of the compiled function, never only once at trace time. Its param is a :class:`PyCall`:
the tensor function to run and the shapes of its results (found by the run at trace
time). The outputs are kept as extra outputs of the trace: never dead code.

``func`` runs once per call of the ``@gt.function``, whatever the tracing does: a call
keeps the results of the calls it made (``one_run_per_call``), and when it runs another
trace (guards failed before a Python call: ``checkpoints.py``), traces anew, or runs the
trace it just made, each call already made gives its results back in order.

Derivatives of a ``py_function`` equation are ``py_function`` equations too, whose
functions run ``func`` again under a ``GradientTape`` (VJP) or a ``ForwardAccumulator``
(JVP): TF's gradient of ``py_function`` is the gradient of ``func``'s eager ops. So any
order works; the price is that ``func`` runs again for each derivative.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..core.dtypes import as_dtype
from ..core.errors import InvalidArgumentError
from ..core.state import state
from ..core.tensor import Tensor, constant, convert_to_tensor, wrap
from ..ir.nodes import Aval
from ..ops.registry import Primitive, bind
from .subtrace import stop_before_python_call

__all__ = ["py_function", "numpy_function"]

TensorFunction = Callable[[list], list]  # tensors in, tensors out (eagerly)


@contextmanager
def _unobserved():
    """Run ``func`` as plain eager code: no tape, accumulator or tracer sees it (the
    equation that calls it is what they see)."""
    saved = state.recording, state.accumulators, state.tracer
    state.recording, state.accumulators, state.tracer = [], [], None
    log = _log.entries, _log.cursor  # a gt.function that func calls has calls of its own
    _log.entries = None
    try:
        yield
    finally:
        state.recording, state.accumulators, state.tracer = saved
        _log.entries, _log.cursor = log


class _CallLog(threading.local):
    """The Python calls one ``@gt.function`` call has made so far, in order:
    ``(name, inputs, results)``; ``None`` outside such a call."""

    entries: list[tuple[str, list, tuple]] | None = None
    cursor = 0  # the next entry the current try of a trace replays


_log = _CallLog()


@contextmanager
def one_run_per_call() -> Iterator[None]:
    """Around one ``@gt.function`` call that may run several traces (one whose guards
    fail before a Python call, the trace it traces anew, that trace's run): each call
    of ``func`` happens once; the later tries get its results back (``start_try``)."""
    if _log.entries is not None:  # already in this call (a retrace inside it)
        yield
        return
    _log.entries, _log.cursor = [], 0
    try:
        yield
    finally:
        _log.entries, _log.cursor = None, 0


def start_try() -> None:
    """A new try of the call (a trace run, a trace): replay from the first call."""
    _log.cursor = 0


class PyCall:
    """The param of one ``py_function``/``numpy_function`` equation: ``fn`` maps input
    tensors to output tensors; ``out_avals`` are its results' shapes and dtypes (None
    until the run at trace time finds them). ``replayed``: a call of the user's
    ``func`` (not a derivative's), made once per ``@gt.function`` call."""

    def __init__(self, name: str, fn: TensorFunction, out_avals: list[Aval] | None = None,
                 replayed: bool = False):
        self.__name__ = name  # the IR printer shows params by name
        self.fn = fn
        self.out_avals = out_avals
        self.replayed = replayed

    def __repr__(self) -> str:
        return f"<{self.__name__}>"

    def apply(self, arrays: Sequence[Any]) -> tuple:
        """Run ``fn`` on arrays: the implementation of the equation. Within a
        ``@gt.function`` call, a call this call already made gives its results back."""
        log = _log.entries if self.replayed else None
        if log is not None:
            position = _log.cursor
            _log.cursor += 1
            if position < len(log):
                name, inputs, outs = log[position]
                if name == self.__name__ and _same_arrays(inputs, arrays):
                    self._check(outs)
                    return outs
                del log[position:]  # another path from here: its calls are new
        # Copies: generated code may reuse the buffers of arrays it made.
        tensors = [wrap(np.array(a, copy=True)) for a in arrays]
        with _unobserved():
            outs = tuple(np.array(t._value, copy=True) for t in self.fn(tensors))
        self._check(outs)
        if log is not None:
            log.append((self.__name__, [np.array(a, copy=True) for a in arrays], outs))
        return outs

    def _check(self, outs: tuple) -> None:
        if self.out_avals is None:  # the run at trace time finds them
            self.out_avals = [Aval(o.shape, o.dtype) for o in outs]
            return
        for k, (o, aval) in enumerate(zip(outs, self.out_avals)):
            if o.shape != aval.shape or o.dtype != aval.dtype:
                raise InvalidArgumentError(
                    f"{self.__name__}: result {k} has shape {o.shape} and dtype "
                    f"{o.dtype.name} on this call, but had shape {aval.shape} and dtype "
                    f"{aval.dtype.name} when the @gt.function traced it. Inside "
                    "@gt.function a py_function's results keep the shapes they had when "
                    "traced: return results of fixed shapes, or call it outside.")


def _same_arrays(first: Sequence[Any], second: Sequence[Any]) -> bool:
    return len(first) == len(second) and all(
        np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
        and np.array_equal(a, b, equal_nan=np.asarray(a).dtype.kind in "fc")
        for a, b in zip(first, second))


def _apply(*arrays: Any, call: PyCall) -> tuple:
    state.effects_run += 1  # the user's Python runs: never again for a failed run
    return call.apply(arrays)


def _out_avals(*inputs: Any, call: PyCall) -> list[Aval]:
    return list(call.out_avals)


# --- derivatives: more py_function equations -----------------------------------------------

def _aval_of(x: Any) -> Aval:
    if isinstance(x, Tensor):
        return Aval(tuple(x.shape), x.dtype)
    return x.aval


def _is_float(dtype: np.dtype) -> bool:
    return np.issubdtype(dtype, np.inexact)


def _py_vjp(gs: tuple, ys: tuple, *xs: Any, call: PyCall) -> tuple:
    from ..ops import zeros_like

    wrt = [i for i, x in enumerate(xs) if _is_float(_aval_of(x).dtype)]
    outs = [k for k, aval in enumerate(call.out_avals) if _is_float(aval.dtype)]
    if not wrt or not outs:
        return (None,) * len(xs)
    cotangents = [zeros_like(ys[k]) if gs[k] is None else gs[k] for k in outs]
    name = f"{call.__name__} vjp"
    vjp_call = PyCall(name, _vjp_function(call.fn, len(xs), wrt, outs),
                      [_aval_of(xs[i]) for i in wrt])
    grads = bind(py_function_p, *xs, *cotangents, call=vjp_call)
    result: list[Any] = [None] * len(xs)
    for i, g in zip(wrt, grads):
        result[i] = g
    return tuple(result)


def _vjp_function(fn: TensorFunction, n_in: int, wrt: list[int], outs: list[int]
                  ) -> TensorFunction:
    """(inputs, cotangents of the float results) -> the gradients of the float inputs:
    ``fn`` run again under a tape."""
    from ..tape.gradient_tape import GradientTape

    def vjp(tensors: list) -> list:
        xs, cotangents = tensors[:n_in], tensors[n_in:]
        with GradientTape() as tape:
            tape.watch([xs[i] for i in wrt])
            ys = fn(xs)
        return tape.gradient([ys[k] for k in outs], [xs[i] for i in wrt],
                             output_gradients=cotangents, unconnected_gradients="zero")

    return vjp


def _py_jvp(ts: tuple, ys: tuple, *xs: Any, call: PyCall) -> tuple:
    wrt = [i for i, (x, t) in enumerate(zip(xs, ts))
           if t is not None and _is_float(_aval_of(x).dtype)]
    outs = [k for k, aval in enumerate(call.out_avals) if _is_float(aval.dtype)]
    if not wrt or not outs:
        return (None,) * len(call.out_avals)
    name = f"{call.__name__} jvp"
    jvp_call = PyCall(name, _jvp_function(call.fn, len(xs), wrt, outs),
                      [call.out_avals[k] for k in outs])
    tangents = bind(py_function_p, *xs, *[ts[i] for i in wrt], call=jvp_call)
    result: list[Any] = [None] * len(call.out_avals)
    for k, t in zip(outs, tangents):
        result[k] = t
    return tuple(result)


def _jvp_function(fn: TensorFunction, n_in: int, wrt: list[int], outs: list[int]
                  ) -> TensorFunction:
    """(inputs, tangents of the float inputs) -> the tangents of the float results:
    ``fn`` run again under a forward accumulator."""
    from ..ad.forward_mode import ForwardAccumulator

    def jvp(tensors: list) -> list:
        xs, tangents = list(tensors[:n_in]), tensors[n_in:]
        with ForwardAccumulator([xs[i] for i in wrt], list(tangents)) as acc:
            ys = fn(xs)
        return [acc.jvp(ys[k], unconnected_gradients="zero") for k in outs]

    return jvp


def _py_batch(size: int, args: Sequence[Any], batched: Sequence[bool], *, call: PyCall,
              prim: Primitive) -> tuple:
    """One call of ``fn`` per batch element, the results stacked (``func`` is Python)."""
    from ..ops import stack

    fn = call.fn

    def looped(tensors: list) -> list:
        per_element = [fn([t[k] if b else t for t, b in zip(tensors, batched)])
                       for k in range(size)]
        return [stack(list(results)) for results in zip(*per_element)]

    avals = [Aval((size,) + tuple(a.shape), a.dtype) for a in call.out_avals]
    return bind(prim, *args, call=PyCall(f"{call.__name__} batched", looped, avals))


py_function_p = Primitive(
    "py_function", _apply, vjp=_py_vjp, jvp=_py_jvp, shape_rule=_out_avals,
    kind_neutral=True,
    batch=lambda size, args, batched, *, call: _py_batch(size, args, batched, call=call,
                                                          prim=py_function_p),
    multiple_results=True, pure=False,
)

# No VJP: never recorded by a tape, its results are constants (TF's numpy_function).
numpy_function_p = Primitive(
    "numpy_function", _apply, shape_rule=_out_avals,
    kind_neutral=True,
    batch=lambda size, args, batched, *, call: _py_batch(size, args, batched, call=call,
                                                          prim=numpy_function_p),
    multiple_results=True, pure=False,
)


# --- the user's function: inputs, results, dtypes -------------------------------------------

def _dtypes(Tout: Any) -> tuple[list[np.dtype], bool]:  # TF's name
    """The result dtypes, and whether ``Tout`` was one dtype (one result, not a list)."""
    if isinstance(Tout, (list, tuple)):
        return [as_dtype(t).dtype for t in Tout], False
    return [as_dtype(Tout).dtype], True


def _results(returned: Any, dtypes: list[np.dtype], name: str) -> list:
    """What ``func`` returned as one value per dtype of ``Tout``."""
    if isinstance(returned, (list, tuple)):
        values = list(returned)
    elif returned is None:
        values = []
    else:
        values = [returned]
    if len(values) != len(dtypes):
        raise InvalidArgumentError(
            f"{name}: func returned {len(values)} value(s) but Tout lists {len(dtypes)} "
            "dtype(s): return one value per dtype of Tout (None or [] when Tout is []).")
    return values


def _as_result(value: Any, dtype: np.dtype, name: str) -> Tensor:
    """A result of ``func`` as a tensor of its ``Tout`` dtype: Python and NumPy values are
    converted to it, tensors must have it (TF's ``convert_to_tensor(value, dtype)``)."""
    if isinstance(value, Tensor):
        value = convert_to_tensor(value)
        if value.dtype != dtype:
            raise InvalidArgumentError(
                f"{name}: func returned a tensor of dtype {value.dtype.name} where Tout says "
                f"{dtype.name}: cast it in func (gt.cast) or change Tout.")
        return value
    return constant(np.asarray(value), dtype=dtype)


def _converting(func: Callable[..., Any], dtypes: list[np.dtype], name: str,
                on_arrays: bool) -> TensorFunction:
    """``func`` as a tensor function: its arguments tensors (arrays if ``on_arrays``),
    its results converted to ``dtypes``. With no results, one token (an equation needs
    an output to be kept)."""

    def run(tensors: list) -> list:
        args = [np.array(t._value, copy=True) for t in tensors] if on_arrays else tensors
        values = _results(func(*args), dtypes, name)
        results = [_as_result(v, d, name) for v, d in zip(values, dtypes)]
        return results or [constant(np.bool_(True))]

    return run


def _inputs(inp: Any) -> list[Tensor]:
    items = inp if isinstance(inp, (list, tuple)) else [inp]
    return [convert_to_tensor(x) for x in items]


def _call(prim: Primitive, func: Callable[..., Any], inp: Any, Tout: Any,
          name: str, on_arrays: bool) -> Any:
    if not callable(func):
        raise TypeError(f"{name}: func must be callable, got {type(func).__name__}.")
    dtypes, single = _dtypes(Tout)
    tensors = _inputs(inp)
    fn = _converting(func, dtypes, name, on_arrays)
    tracer = state.tracer
    if tracer is None:
        if on_arrays:  # numpy_function: no tape sees func, its results are constants
            with _unobserved():
                results = fn(tensors)
        else:
            results = fn(tensors)
    else:
        stop_before_python_call()  # a loop body or branch: Python's control flow runs
        results = list(bind(prim, *tensors, call=PyCall(name, fn, replayed=True)))
        tracer.keep([tracer.value_of(results[0])])  # run on every call, used or not
    results = results[:len(dtypes)]  # without the token of a function with no results
    return results[0] if single else results


def _decorator_or_none(script_op: Callable[..., Any], op_name: str, func: Any, inp: Any,
                       Tout: Any, **kwargs: Any) -> Callable[..., Any] | None:
    """TF's argument check: with ``func=None`` (``@gt.numpy_function(Tout=...)``), a
    decorator whose function calls ``script_op`` on its positional arguments; ``None``
    when called directly with ``func`` and ``inp``."""
    if Tout is None:
        raise TypeError(f"Missing required argument: 'Tout'\n  If using {op_name} as a "
                        f"decorator, set `Tout`\n  **by name** above the function:\n  "
                        f"`@{op_name}(Tout=tout)`")
    if func is None:
        if inp is not None:
            raise TypeError(f"Don't set the `inp` argument when using {op_name} as a "
                            "decorator (`func=None`).")

        def decorator(fun: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(fun)
            def wrapper(*args: Any) -> Any:
                return script_op(fun, inp=args, Tout=Tout, **kwargs)

            return wrapper

        return decorator
    if inp is None:
        raise TypeError(f"Missing argument `inp`:\n  You must set the `inp` argument (the "
                        f"list of arguments to the\n  function), unless you use `{op_name}` "
                        "as a decorator(`func=None`).")
    return None


def py_function(func: Callable[..., Any] | None = None, inp: Any = None,
                Tout: Any = None, name: str | None = None) -> Any:
    """Call ``func`` on the tensors ``inp`` (``tf.py_function``); its results are
    converted to ``Tout`` (a dtype: one tensor; a list of dtypes: a list). Gradients flow
    through the ops ``func`` runs. Inside ``@gt.function`` it runs on every call. With
    ``func`` left out, ``@gt.py_function(Tout=...)`` decorates a function, as in TF."""
    decorator = _decorator_or_none(py_function, "tf.py_function", func, inp, Tout, name=name)
    if decorator is not None:
        return decorator
    label = f"py_function {name or getattr(func, '__name__', 'func')}"
    return _call(py_function_p, func, inp, Tout, label, on_arrays=False)


def numpy_function(func: Callable[..., Any] | None = None, inp: Any = None,
                   Tout: Any = None, stateful: bool = True,
                   name: str | None = None) -> Any:
    """Call ``func`` on the NumPy values of ``inp`` (``tf.numpy_function``); its results
    become tensors of ``Tout``. No gradient flows through it (as in TF): its results
    are constants. Inside ``@gt.function`` it runs on every call. With ``func`` left out,
    ``@gt.numpy_function(Tout=...)`` decorates a function, as in TF."""
    decorator = _decorator_or_none(numpy_function, "tf.numpy_function", func, inp, Tout,
                                   stateful=stateful, name=name)
    if decorator is not None:
        return decorator
    del stateful  # it always runs on every call
    label = f"numpy_function {name or getattr(func, '__name__', 'func')}"
    return _call(numpy_function_p, func, inp, Tout, label, on_arrays=True)
