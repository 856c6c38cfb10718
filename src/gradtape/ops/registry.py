"""The one dispatch point every op goes through.

``Primitive`` itself lives in ``ir/primitive.py`` (the IR knows what a primitive is
without knowing any op); it is re-exported here, where ops import it from.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.backends import _NUMPY_CLASSES, eager_impl, kind_of
from ..core.promotion_warning import check_operands as check_promoted_variables
from ..core.state import state
from ..core.tensor import Tensor, _new_object, _next_id, wrap
from ..ir import builder
from ..ir.nodes import IRValue
from ..ir.primitive import EVERY_INPUT as EVERY_INPUT
from ..ir.primitive import ArrayShorthand as ArrayShorthand
from ..ir.primitive import Primitive as Primitive
from ..ir.primitive import per_primitive as per_primitive


def operand(x: Any) -> Any:
    """``x`` as something with a shape: tensors and IR values as they are, anything else
    converted with TF's rules (``gt.sin(3.0)`` is float32, like ``tf.sin(3.0)``)."""
    if isinstance(x, (Tensor, IRValue)):
        return x
    if isinstance(x, (list, tuple)) and holds_tensor(x):
        from .stacking import stack  # TF packs a list holding tensors: differentiable

        return stack(x)
    from ..core.tensor import constant

    return constant(x)


def list_operands(values: Any) -> list:
    """The operands of one list input (``concat``'s, ``stack``'s, ``einsum``'s), each as
    :func:`operand` converts it. Under gt.config(dtype_promotion="tf") a NumPy array or
    number among tensors first takes the first tensor's dtype, as TF converts the values
    of one list input (``_list_rule``, installed by ops/promotion.py)."""
    if _list_rule is not None:
        values = _list_rule(values)
    check_promoted_variables(values)  # stack expands each before they meet
    return [operand(v) for v in values]


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
    is the usual case while recording: only tapes observe (no tracer, no accumulator) an
    op with one result; the pass then also gathers the input ids the tapes record, and
    the tapes get the op directly instead of through ``_hand_to_observers``: a lone tape
    by ``on_op_alone``, nested ones each by ``on_op_nested``, sharing one record."""
    if _dtype_rule is not None:  # gt.config(dtype_promotion="tf"); one global read if not
        _dtype_rule(prim, args)
    tapes = state.only_tapes  # None: an accumulator or the tracer observes too
    run = prim.eager
    values = []
    if tapes and prim.records_alone:
        in_ids = []
        reads = None
        raw_arrays = False
        for a in args:
            if isinstance(a, Tensor):
                v = a._value
                values.append(v)
                in_ids.append(a._id)
                kind = type(v)  # an array or a float64 scalar: no set lookup
                if kind is not _ndarray and kind is not _float64 and kind not in _NUMPY_CLASSES:
                    run = _OTHER_KIND  # another library's array: decided after the loop
                if a._watch_on_read:
                    reads = args
            elif isinstance(a, IRValue):
                return builder.emit(prim, args, params)
            else:
                values.append(a)
                in_ids.append(None)
                if a.__class__ not in _SCALARS:
                    raw_arrays = True  # the record keeps a copy (_recorded_values)
                    if run is not _OTHER_KIND:  # lists and other array-likes: NumPy's
                        # rules, or their library's
                        run = prim.impl if kind_of(a) is None else _OTHER_KIND
        if run is _OTHER_KIND:  # Dask, CuPy, ...: the op runs in the array's own library
            run = eager_impl(prim, values)
        out = run(*values, **params)
        # wrap(out), inlined: a call costs about 5 % of an op's dispatch; records_alone
        # means one result, and only the tapes observe the op.
        result = _new_object(Tensor)
        result._value = out
        result._id = _next_id()
        if len(tapes) == 1:
            tapes[0].on_op_alone(prim, in_ids, values, params, result, out, reads, raw_arrays)
        else:  # nested tapes (or a watcher beside them), outermost first
            shared = None
            for tape in tapes:
                shared = tape.on_op_nested(prim, args, in_ids, values, params, result, out,
                                           reads, raw_arrays, shared)
        return result
    for a in args:
        if isinstance(a, Tensor):
            v = a._value
            values.append(v)
            if type(v) not in _NUMPY_CLASSES:
                run = _OTHER_KIND
        elif isinstance(a, IRValue):
            return builder.emit(prim, args, params)
        else:
            values.append(a)
            if a.__class__ not in _SCALARS and run is not _OTHER_KIND:
                run = prim.impl if kind_of(a) is None else _OTHER_KIND
    if run is _OTHER_KIND:
        run = eager_impl(prim, values)
    out = run(*values, **params)
    if prim.multiple_results:
        result = tuple(map(wrap, out))
    else:
        result = _new_object(Tensor)
        result._value = out
        result._id = _next_id()
    # state.active, from the one attribute read above (the observers did not change
    # while NumPy ran): tapes, or an accumulator or the tracer.
    if tapes is None or tapes:
        _hand_to_observers(prim, args, values, params, result, out)
    return result


def _hand_to_observers(prim, args, values, params, result, out) -> None:
    """Hand an op to everyone who observes it (``core.state.Observer.on_op``): the
    ``@gt.function`` tracer (every op), then for a differentiable op each recording tape
    (nested tapes share one record) and each forward accumulator."""
    tracer = state.tracer
    if tracer is not None:  # @gt.function traces every op, differentiable or not
        tracer.on_op(prim, args, values, params, result, out, None)
    if not prim.differentiable:
        return
    shared = None
    for tape in state.recording:
        shared = tape.on_op(prim, args, values, params, result, out, shared)
    for acc in state.accumulators:
        acc.on_op(prim, args, values, params, result, out, None)


_SCALARS = frozenset((bool, int, float, complex))
# TF's dtype rule, ``(prim, args) -> None`` raising on a mismatch, while
# gt.config(dtype_promotion="tf") is on; ops/promotion.py installs it.
_dtype_rule: Any = None
_list_rule: Any = None
_ndarray, _float64 = np.ndarray, np.float64
_OTHER_KIND = object()  # marks an input of another array library while bind reads args
