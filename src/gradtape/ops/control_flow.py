"""Primitives with sub-programs: ``loop``, ``switch`` and ``recompute``.

``loop(n, *carry, *invariants, *xs; cond, body, n_carry, n_inv, reverse, length)``
runs ``carry = body(carry, invariants, x slices)[:n_carry]`` while ``cond(carry,
invariants)`` holds (``cond`` is ``None``: always) and the iteration number is below
``n`` (``n < 0``: no bound). Iteration ``k`` reads row ``k`` of every ``xs`` (row
``n - 1 - k`` with ``reverse``); the body's outputs after the carry are stacked, one row
per iteration (``reverse``: written from the end, so row ``i`` belongs to xs row ``i``).
Outputs: the final carry, the trip count (int64), the stacks. A stack's leading
dimension is the trip count, known only at run time: its aval says ``length``, the count
of the trace it was made in, and nothing but loops reads a stack.

``switch(index, *operands; branches)`` runs ``branches[index](*operands)``; an index out
of range runs the last branch (``tf.switch_case``'s default). A bool index picks
``branches[1]`` when true (``tf.cond``: ``(false_fn, true_fn)``).

``recompute(*operands; block, name)`` runs ``block(*operands)``: a
``gt.recompute_grad`` block traced inside ``@gt.function``. Its records and residuals
are its operands only (``residuals=("in0:",)``), and its VJP is another ``recompute``,
of the block run again and then differentiated: one call the passes optimize inside but
never see through, so no pass merges the recomputed forward with the forward.

All three run their sub-programs with the interpreter here; the code generator writes them as
a Python ``while`` and ``if`` (``codegen/control_flow.py``). Their derivatives need
reverse mode of the sub-programs, so ``ad/control_flow.py`` installs them (and
``ad/control_flow_batching.py`` the loop's batching rule). A loop's or a
branch's body may draw random numbers: neither is pure (CSE keeps both copies), and no
pass moves work out of a body.

Imports: ``core``, ``ir``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ir.interpreter import run
from ..ir.nodes import Aval, Program
from ..ir.primitive import Primitive, per_primitive
from .batch_rules import batch_by_loop

__all__: list[str] = []

COUNT_DTYPE = np.dtype(np.int64)


def _installed_later(*args: Any, **params: Any) -> Any:
    raise NotImplementedError("gradtape.ad.control_flow installs this rule on import.")


def stack_rows(rows: list, row_aval: tuple, reverse: bool = False) -> np.ndarray:
    """One stack from a loop's per-iteration rows (an empty loop: zero rows);
    ``row_aval`` is a row's ``(shape, dtype)``."""
    if not rows:
        shape, dtype = row_aval
        return np.empty((0,) + tuple(shape), dtype)
    if reverse:
        rows.reverse()
    return np.stack(rows)


def row_buffer(capacity: Any, row_aval: tuple, extra: int = 0) -> np.ndarray:
    """An empty stack for ``capacity`` rows of ``row_aval`` (``(shape, dtype)``), and
    ``extra`` more (a carry's stack holds its first value too): a loop whose trip count
    is known when it starts writes its rows into one of these."""
    shape, dtype = row_aval
    return np.empty((max(int(capacity), 0) + extra,) + tuple(shape), dtype)


def grow_rows(buffer: np.ndarray) -> np.ndarray:
    """``buffer`` with twice the rows (at least 16): a loop that runs while a condition
    holds grows its stacks as it goes."""
    grown = np.empty((max(2 * len(buffer), 16),) + buffer.shape[1:], buffer.dtype)
    grown[:len(buffer)] = buffer
    return grown


def rows_read(sequence: Any, start: int, stop: int) -> Any:
    """``sequence[start:stop]``, the rows a loop read one per iteration (generated code
    slices them after the loop instead): a row past the end raises NumPy's error."""
    if stop > len(sequence) or start < 0:
        raise IndexError(f"index {stop - 1 if stop > len(sequence) else start} is out of "
                         f"bounds for axis 0 with size {len(sequence)}")
    return sequence[start:stop]


def count_rows(count: int, dtype: Any) -> np.ndarray:
    """The stack of a counter that starts at 0 and adds 1 per iteration."""
    return np.arange(count, dtype=dtype)


def _loop_impl(n: Any, *operands: Any, cond: Program | None, body: Program, n_carry: int,
               n_inv: int, reverse: bool, length: int) -> tuple:
    del length
    n = int(n)
    carry = list(operands[:n_carry])
    invariants = list(operands[n_carry:n_carry + n_inv])
    xs = operands[n_carry + n_inv:]
    rows: list[list] = [[] for _ in body.outputs[n_carry:]]
    k = 0
    while (n < 0 or k < n) and (cond is None or bool(run(cond, carry + invariants)[0])):
        row = n - 1 - k if reverse else k
        outs = run(body, carry + invariants + [x[row] for x in xs])
        carry = outs[:n_carry]
        for stack, value in zip(rows, outs[n_carry:]):
            stack.append(value)
        k += 1
    stacks = [stack_rows(r, v.aval, reverse) for r, v in zip(rows, body.outputs[n_carry:])]
    return tuple(carry) + (np.asarray(k, COUNT_DTYPE),) + tuple(stacks)


def loop_avals(operands: Sequence[Any], body: Program, n_carry: int, length: int) -> list[Aval]:
    """The outputs' avals: the carry's, the trip count's, the stacks'."""
    carry = [Aval(tuple(v.aval.shape), v.aval.dtype) for v in operands[1:1 + n_carry]]
    stacks = [Aval((length,) + tuple(v.aval.shape), v.aval.dtype)
              for v in body.outputs[n_carry:]]
    return carry + [Aval((), COUNT_DTYPE)] + stacks


def _loop_shape(*operands: Any, cond: Program | None, body: Program, n_carry: int,
                n_inv: int, reverse: bool, length: int) -> list[Aval]:
    return loop_avals(operands, body, n_carry, length)


def _one_loop_per_element(prim: Primitive) -> Any:
    """Batched (a jacobian's rows): one run per element, since each may take another
    branch."""
    def rule(size: int, args: list, batched: list, **params: Any) -> Any:
        return batch_by_loop(prim, size, args, batched, **params)
    return rule


# ``ad/control_flow_batching.py`` installs the loop's batching rule (one batched loop:
# it batches the sub-programs, which needs ``ad/``); until then, one loop per element.
_loop_batching: list = []


def install_loop_batching(rule: Any) -> None:
    _loop_batching[:] = [rule]


def _batch_loop(size: int, args: list, batched: list, **params: Any) -> Any:
    if _loop_batching:
        return _loop_batching[0](size, args, batched, **params)
    return batch_by_loop(loop_p, size, args, batched, **params)


loop_p = Primitive(
    "loop", _loop_impl, vjp=_installed_later, shape_rule=_loop_shape,
    batch=_batch_loop,
    multiple_results=True, pure=False, kind_neutral=True,
)


def _switch_impl(index: Any, *operands: Any, branches: tuple[Program, ...]) -> tuple:
    i = int(index)
    chosen = branches[i] if 0 <= i < len(branches) else branches[-1]
    return tuple(run(chosen, list(operands)))


def _switch_shape(index: Any, *operands: Any, branches: tuple[Program, ...]) -> list[Aval]:
    return [Aval(tuple(v.aval.shape), v.aval.dtype) for v in branches[0].outputs]


switch_p = Primitive(
    "switch", _switch_impl, vjp=_installed_later, shape_rule=_switch_shape,
    batch=per_primitive(_one_loop_per_element),
    multiple_results=True, pure=False, kind_neutral=True,
)


def subprograms(params: dict) -> list[Program]:
    """The sub-programs an equation's params hold (a loop's cond and body, the
    branches of a switch); none for other primitives."""
    found = []
    for value in params.values():
        if isinstance(value, Program):
            found.append(value)
        elif isinstance(value, tuple) and value and isinstance(value[0], Program):
            found.extend(value)
    return found


def _recompute_impl(*operands: Any, block: Program, name: str) -> tuple:
    return tuple(run(block, list(operands)))


def _recompute_shape(*operands: Any, block: Program, name: str) -> list[Aval]:
    return [Aval(tuple(v.aval.shape), v.aval.dtype) for v in block.outputs]


# Impure like the others: a block of the user's, never merged with an equal-looking one.
recompute_p = Primitive(
    "recompute", _recompute_impl, vjp=_installed_later, shape_rule=_recompute_shape,
    batch=per_primitive(_one_loop_per_element),
    multiple_results=True, pure=False, kind_neutral=True, residuals=("in0:",),
)


CONTROL_FLOW = frozenset((loop_p, switch_p, recompute_p))
