"""Primitives and the one dispatch point every op goes through.

A primitive is declared once: its NumPy implementation, how to compute its output
shape and dtype, and its derivative rules. The rules are written with the library's own
ops, so evaluating them on IR values *emits IR*: the backward of a program is another
program of the same primitives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir import builder
from ..ir.nodes import Aval, IRValue
from ..recording import state
from ..tensor import Tensor, _new_object, _next_id, wrap

# A VJP rule: (cotangent, output, *inputs, **params) -> one cotangent (or None) per input.
VJPRule = Callable[..., "tuple[Any, ...]"]


class Primitive:
    """One operation the tape records and the compiler understands."""

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        *,
        vjp: VJPRule | None = None,
        jvp: Callable[..., Any] | None = None,
        shape_rule: Callable[..., Any] | None = None,
        elementwise: bool = False,
        multiple_results: bool = False,
        differentiable: bool = True,
        cacheable: bool = True,
        eager: Callable[..., Any] | None = None,
    ):
        self.name = name
        self.impl = impl
        # What eager ops run, when it differs from impl: Python's operators give NumPy
        # scalars NumPy's fast scalar math (a ufunc call on two float64 scalars costs ten
        # times ``a * b``); arrays go to the same ufunc either way.
        self.eager = impl if eager is None else eager
        self.vjp = vjp
        self.jvp = jvp
        self.shape_rule = shape_rule
        # Elementwise primitives broadcast their inputs; the fusion pass merges them.
        self.elementwise = elementwise
        self.multiple_results = multiple_results
        # Non-differentiable primitives are never recorded: their outputs are constants.
        self.differentiable = differentiable and vjp is not None
        # False when params hold a Python callable (custom_gradient): never cached.
        self.cacheable = cacheable

    def __repr__(self) -> str:
        return f"Primitive({self.name})"

    def abstract_eval(self, inputs: tuple[IRValue, ...], params: dict) -> list[Aval]:
        """Output avals for IR inputs, without any real data."""
        if self.shape_rule is not None:
            out = self.shape_rule(*inputs, **params)
        else:
            out = _eval_on_dummies(self, inputs, params)
        return list(out) if self.multiple_results else [out]


def _dummy(value: IRValue, elementwise: bool) -> Any:
    from ..ir.nodes import Literal

    if isinstance(value, Literal):
        return value.value
    shape, dtype = value.aval
    if elementwise and shape:
        # Same rank keeps NumPy's promotion rules; size 1 keeps it cheap.
        return np.ones((1,) * len(shape), dtype)
    return np.ones(shape, dtype)


# (primitive, what the dtype depends on) -> result dtype of an elementwise primitive:
# autodiff asks this for every equation it emits, and running NumPy each time showed.
# A Python scalar enters the key by its type and the range class of its value (never the
# value: a learning rate that changes every step would add a key per step), and the
# memo is dropped whole when full (params can hold any value).
_elementwise_dtypes: dict = {}
MAX_ELEMENTWISE_DTYPES = 4096


def _dtype_key(v: IRValue) -> tuple:
    from ..ir.nodes import Literal

    if isinstance(v, Literal):  # a Python scalar's type and range, a NumPy scalar's dtype
        value = v.value
        cls = value.__class__
        return (cls, _value_class(value)) if cls in _SCALARS else (v.aval.dtype,)
    return (v.aval.dtype, not v.aval.shape)  # 0-d or not: NumPy 1 promotes by value


def _value_class(value: bool | int | float | complex) -> Any:
    """What of a Python scalar's value NumPy's result dtype can depend on: for an int,
    the integer types that hold it (its sign and bit length: NumPy 2 raises when one
    does not fit, NumPy 1 picks the smallest that holds it); for a float or complex,
    NumPy 1's smallest type that holds it (``np.min_scalar_type``, also NaN and inf).
    NumPy 2 (NEP 50) ignores the value otherwise. A few dozen classes in all."""
    cls = value.__class__
    if cls is bool:
        return value
    if cls is int:
        return (value < 0, min((value if value >= 0 else ~value).bit_length(), 65))
    return np.min_scalar_type(value)


def _eval_on_dummies(prim: Primitive, inputs, params):
    """Default shape rule: run the NumPy implementation on arrays of ones."""
    if prim.elementwise:
        shape = np.broadcast_shapes(*(v.aval.shape for v in inputs))
        try:
            key = (prim, tuple(_dtype_key(v) for v in inputs), tuple(params.items()))
            dtype = _elementwise_dtypes.get(key)
        except TypeError:  # an unhashable param: no caching
            key = dtype = None
        if dtype is None:
            dummies = [_dummy(v, True) for v in inputs]
            with np.errstate(all="ignore"):
                dtype = np.asarray(prim.impl(*dummies, **params)).dtype
            if key is not None:
                if len(_elementwise_dtypes) >= MAX_ELEMENTWISE_DTYPES:
                    _elementwise_dtypes.clear()
                _elementwise_dtypes[key] = dtype
        return Aval(shape, dtype)
    dummies = [_dummy(v, prim.elementwise) for v in inputs]
    with np.errstate(all="ignore"):
        out = prim.impl(*dummies, **params)
    if prim.multiple_results:
        return [Aval(tuple(np.shape(o)), np.asarray(o).dtype) for o in out]
    return Aval(tuple(np.shape(out)), np.asarray(out).dtype)


def operand(x: Any) -> Any:
    """``x`` as something with a shape: tensors and IR values as they are, anything else
    converted with TF's rules (``gt.sin(3.0)`` is float32, like ``tf.sin(3.0)``)."""
    if isinstance(x, (Tensor, IRValue)):
        return x
    if isinstance(x, (list, tuple)) and holds_tensor(x):
        from .shape import stack  # TF packs a list holding tensors: differentiable

        return stack(x)
    from ..tensor import constant

    return constant(x)


def unchanged(x: Any) -> Any:
    """What an op that leaves its input as it is returns (``reshape`` to the same shape,
    ``v[:]``, a sum over no axes): the input itself, except a Variable, whose snapshot
    must not follow later assigns. TF returns a read of it, and so does this."""
    if getattr(x, "_watch_on_read", False):
        return x.read_value()
    return x


def holds_tensor(items: list | tuple) -> bool:
    """Whether a (nested) list or tuple holds a tensor anywhere."""
    return any(isinstance(i, Tensor) or (isinstance(i, (list, tuple)) and holds_tensor(i))
               for i in items)


def bind(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Apply ``prim``: emit IR if an input is an IR value, else compute now and hand
    the op to whoever observes it.

    This is the hot path of every eager op: one pass over the arguments. Its fast branch
    is the usual case while recording: one tape observes (no tracer, no accumulator) an
    op with one result; the pass then also gathers the input ids the tape records, and
    the tape gets the op directly instead of through ``_hand_to_observers``."""
    tapes = state.recording
    run = prim.eager
    values = []
    if tapes and len(tapes) == 1 and prim.differentiable and not prim.multiple_results \
            and state.tracer is None and not state.accumulators:
        alone = tapes[0]
        in_ids = []
        reads = None
        for a in args:
            if isinstance(a, Tensor):
                values.append(a._value)
                in_ids.append(a._id)
                if a._watch_on_read:
                    reads = args
            elif isinstance(a, IRValue):
                return builder.emit(prim, args, params)
            else:
                values.append(a)
                in_ids.append(None)
                if a.__class__ not in _SCALARS:
                    run = prim.impl  # lists and other array-likes: only NumPy's rules
    else:
        alone = None
        for a in args:
            if isinstance(a, Tensor):
                values.append(a._value)
            elif isinstance(a, IRValue):
                return builder.emit(prim, args, params)
            else:
                values.append(a)
                if a.__class__ not in _SCALARS:
                    run = prim.impl
    out = run(*values, **params)
    if prim.multiple_results:
        result = tuple(map(wrap, out))
    else:  # wrap(out), inlined: a call costs about 5 % of an op's dispatch
        result = _new_object(Tensor)
        result._value = out
        result._id = _next_id()
    if alone is not None:
        alone._record_op(prim, in_ids, values, params, (result._id,), (out,), reads, None)
    # state.active, spelled out (the property costs more than the attribute reads); the
    # tapes did not change while NumPy ran.
    elif tapes or state.accumulators or state.tracer is not None:
        _hand_to_observers(prim, args, values, params, result, out)
    return result


def _hand_to_observers(prim, args, values, params, result, out) -> None:
    """Hand an op to everyone who observes it: the ``@gt.function`` tracer (every op),
    then for a differentiable op each recording tape (``GradientTape._record_op``; nested
    tapes share one record) and each forward accumulator."""
    tracer = state.tracer
    if tracer is not None:  # @gt.function traces every op, differentiable or not
        tracer.on_op(prim, args, values, params, result, out)
    if not prim.differentiable:
        return
    tapes = state.recording
    if tapes:
        in_ids = []
        reads = None
        for a in args:
            if isinstance(a, Tensor):
                in_ids.append(a._id)
                if a._watch_on_read:
                    reads = args
            else:
                in_ids.append(None)
        if prim.multiple_results:
            out_ids, out = tuple(r._id for r in result), tuple(out)
        else:
            out_ids, out = (result._id,), (out,)
        record = None
        for tape in tapes:
            record = tape._record_op(prim, in_ids, values, params, out_ids, out, reads,
                                     record)
    if state.accumulators:
        for acc in state.accumulators:
            acc._on_op(prim, args, params, result)


_SCALARS = frozenset((bool, int, float, complex))
