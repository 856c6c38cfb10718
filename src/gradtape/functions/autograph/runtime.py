"""What converted code calls, as ``ag__.<name>``: each statement decides per call,
from its condition's value, whether it is a Python statement or a graph one (TF's
``ag__.if_stmt``, ``while_stmt``, ``for_stmt``).

A condition that is a tensor makes the statement ``gt.cond`` or ``gt.while_loop`` over
the variables it assigns (``get_state``/``set_state`` read and write them in the
user's function); anything else (a Python bool, a list, ``range(3)``) runs the Python
statement, so loops over Python values unroll while tracing, as in TF. ``gt.cond`` and
``gt.while_loop`` live above this package: the package root installs them (``install``).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...core import nest
from ...core.tensor import Tensor, convert_to_tensor
from ...ops.elementwise import cast, logical_and, logical_not, logical_or
from .checks import check_branch_outputs, check_iteration, check_loop_entry
from .undefined import Undefined, UndefinedReturnValue

__all__ = ["if_stmt", "while_stmt", "for_stmt", "if_exp", "and_", "or_", "not_",
           "for_range", "retval", "Undefined", "UndefinedReturnValue", "install"]

# Installed by the package root: {"cond": gt.cond, "while_loop": gt.while_loop,
# "range": gt.range}.
_api: dict[str, Callable[..., Any]] = {}

State = tuple
GetState = Callable[[], State]
SetState = Callable[[State], None]


def install(**functions: Callable[..., Any]) -> None:
    _api.update(functions)


def _is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor)


# --- if ----------------------------------------------------------------------------------

def if_stmt(cond: Any, body: Callable[[], None], orelse: Callable[[], None],
            get_state: GetState, set_state: SetState, names: Sequence[str]) -> None:
    """``if cond: body() else: orelse()``; a tensor ``cond`` makes it ``gt.cond`` whose
    outputs are the variables ``names`` the branches assign."""
    if not _is_tensor(cond):
        body() if cond else orelse()
        return
    before = get_state()
    seen: dict[str, State] = {}

    def branch(run: Callable[[], None], label: str) -> Callable[[], State]:
        def run_branch() -> State:
            set_state(before)
            run()
            after = get_state()
            check_branch_outputs(names, after, label)
            seen[label] = after
            if len(seen) == 2:  # both branches traced (a graph cond): they must agree
                check_branch_outputs(names, seen["main"], "main", seen["else"])
            return tuple(after)
        return run_branch

    results = _api["cond"](cond, branch(body, "main"), branch(orelse, "else"))
    set_state(tuple(results) if names else ())


def if_exp(cond: Any, if_true: Callable[[], Any], if_false: Callable[[], Any]) -> Any:
    """``a if cond else b``: ``gt.cond`` when ``cond`` is a tensor."""
    if not _is_tensor(cond):
        return if_true() if cond else if_false()
    return _api["cond"](cond, if_true, if_false)


# --- and, or, not ------------------------------------------------------------------------

def and_(a: Callable[[], Any], b: Callable[[], Any]) -> Any:
    """``a and b``: Python's (``b`` only if needed) unless ``a`` is a tensor, then
    ``logical_and`` (both sides computed)."""
    left = a()
    if _is_tensor(left):
        return logical_and(left, b())
    return left and b()


def or_(a: Callable[[], Any], b: Callable[[], Any]) -> Any:
    left = a()
    if _is_tensor(left):
        return logical_or(left, b())
    return left or b()


def not_(a: Any) -> Any:
    return logical_not(a) if _is_tensor(a) else not a


# --- while -------------------------------------------------------------------------------

def while_stmt(test: Callable[[], Any], body: Callable[[], None], get_state: GetState,
               set_state: SetState, names: Sequence[str]) -> None:
    """``while test(): body()``; once ``test()`` is a tensor the loop (what is left of
    it) is ``gt.while_loop`` over the variables ``names``."""
    cond = test()
    while not _is_tensor(cond):
        if not cond:
            return
        body()
        cond = test()
    _tensor_while(test, body, get_state, set_state, names)


def _tensor_while(test: Callable[[], Any], body: Callable[[], None], get_state: GetState,
                  set_state: SetState, names: Sequence[str],
                  extra: Sequence[Any] = ()) -> None:
    """``gt.while_loop`` whose loop variables are ``extra`` (the runtime's own, such as
    a for loop's index) and then the user's variables ``names``."""
    state = get_state()
    check_loop_entry(names, state)
    entry = tuple(_as_loop_value(v) for v in state)
    n_extra = len(extra)

    def cond_fn(*values: Any) -> Any:
        set_state(values[n_extra:])
        return test(*values[:n_extra])

    def body_fn(*values: Any) -> tuple:
        set_state(values[n_extra:])
        new_extra = body(*values[:n_extra])
        after = tuple(_as_loop_value(v) for v in get_state())
        check_iteration(names, entry, after)
        return (*(new_extra or ()), *after)

    loop_vars = [*extra, *entry]
    if not loop_vars:  # nothing carried: count iterations so the loop has a state
        loop_vars = [convert_to_tensor(np.int32(0))]
    final = _api["while_loop"](cond_fn, body_fn, loop_vars)
    final = final if isinstance(final, (list, tuple)) else (final,)
    set_state(tuple(final)[n_extra:n_extra + len(entry)])


def _as_loop_value(value: Any) -> Any:
    """A loop variable as the loop carries it: Python numbers and bools as tensors."""
    if isinstance(value, (bool, int, float, np.generic, np.ndarray)):
        return convert_to_tensor(value)
    return value


# --- for ---------------------------------------------------------------------------------

class RangeLoop:
    """``gt.range(start, limit, delta)`` (or ``range`` over tensors) as a for loop's
    iterable: the loop counts with a tensor index, so the trip count is a run-time
    value, and the range is never made."""

    def __init__(self, start: Any, limit: Any, delta: Any, dtype: Any):
        self.start, self.limit, self.delta, self.dtype = start, limit, delta, dtype

    def made(self) -> Any:
        return _api["range"](self.start, self.limit, self.delta, dtype=self.dtype)


def for_range(range_fn: Any, *args: Any, **kwargs: Any) -> Any:
    """The iterable of ``for i in range_fn(*args)``: a ``RangeLoop`` for ``gt.range`` and
    for the builtin ``range`` of a tensor, else what ``range_fn`` returns."""
    is_gt_range = range_fn is _api.get("range")
    if range_fn is builtins.range and not any(_is_tensor(a) for a in args):
        return range_fn(*args, **kwargs)
    if not (is_gt_range or range_fn is builtins.range) or not 1 <= len(args) <= 3:
        return range_fn(*args, **kwargs)
    start, limit, delta = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    if "limit" in kwargs or "delta" in kwargs or "start" in kwargs:
        return range_fn(*args, **kwargs)
    return RangeLoop(start, limit, delta, kwargs.get("dtype"))


def for_stmt(iterable: Any, extra_test: Callable[[], Any] | None,
             body: Callable[[Any], None], get_state: GetState, set_state: SetState,
             names: Sequence[str]) -> None:
    """``for x in iterable: body(x)`` while ``extra_test()`` holds (a lowered
    ``break``); over a tensor (its rows) or a tensor range it is ``gt.while_loop``."""
    if isinstance(iterable, RangeLoop):
        if not any(_is_tensor(v) for v in (iterable.start, iterable.limit, iterable.delta)):
            iterable = iterable.made()  # a range of Python numbers: a tensor to iterate
        else:
            _range_while(iterable, extra_test, body, get_state, set_state, names)
            return
    if _is_tensor(iterable):
        _tensor_for(iterable, extra_test, body, get_state, set_state, names)
        return
    for item in iterable:
        if extra_test is not None and not extra_test():
            break
        body(item)


def _tensor_for(iterable: Tensor, extra_test: Callable[[], Any] | None,
                body: Callable[[Any], None], get_state: GetState, set_state: SetState,
                names: Sequence[str]) -> None:
    if iterable.ndim == 0:
        raise TypeError("Cannot iterate over a scalar tensor: a for loop over a tensor "
                        "runs over its first axis.")
    length = int(iterable.shape[0])

    def test(i: Any) -> Any:
        going = i < length
        return going if extra_test is None else logical_and(going, extra_test())

    def step(i: Any) -> tuple:
        body(iterable[i])
        return (i + 1,)

    _tensor_while(test, step, get_state, set_state, names,
                  extra=(convert_to_tensor(np.int32(0)),))


def _range_while(loop: RangeLoop, extra_test: Callable[[], Any] | None,
                 body: Callable[[Any], None], get_state: GetState, set_state: SetState,
                 names: Sequence[str]) -> None:
    """``for i in gt.range(start, limit, delta)`` with tensor bounds: ``i`` counts from
    ``start`` while it is short of ``limit`` (past it, for a negative ``delta``)."""
    bounds = [convert_to_tensor(v) for v in (loop.start, loop.limit, loop.delta)]
    dtype = loop.dtype if loop.dtype is not None else \
        np.result_type(*(b.dtype for b in bounds))  # gt.range's dtype rule
    start, limit, delta = (cast(b, dtype) for b in bounds)

    def test(i: Any) -> Any:
        going = logical_or(logical_and(delta > 0, i < limit),
                           logical_and(delta < 0, i > limit))
        return going if extra_test is None else logical_and(going, extra_test())

    def step(i: Any) -> tuple:
        body(i)
        return (i + delta,)

    _tensor_while(test, step, get_state, set_state, names, extra=(start,))


# --- return ------------------------------------------------------------------------------

def retval(value: Any) -> Any:
    """What a converted function returns: ``None`` for a lowered ``return`` that never
    ran; a variable no path assigned raises (Python's ``UnboundLocalError``)."""
    if isinstance(value, UndefinedReturnValue):
        return None
    for leaf in nest.flatten(value):
        if isinstance(leaf, Undefined):
            leaf._raise()
    return value
