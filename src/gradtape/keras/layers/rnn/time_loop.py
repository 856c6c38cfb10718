"""The time loop of every recurrent layer (Keras 3's ``backend.rnn``), on ``gt.foldl``
and ``gt.scan``: one call of ``step`` per time step, so [5/6]'s compiled loops take it
as a loop; ``unroll=True`` unrolls it in Python instead.

A masked step (``mask`` false) keeps the previous states and, in the outputs, the
previous output (zeros with ``zero_output_for_mask``), as Keras 3 does. With
``go_backwards`` the sequence runs from its end, and the outputs are in that order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .... import ops
from ....api.control_flow import foldl, scan
from ....core import nest
from ....core.tensor import Tensor

__all__ = ["time_loop"]

Step = Callable[[Tensor, Any], tuple[Tensor, Any]]


def _time_major(x: Tensor) -> Tensor:
    return ops.transpose(x, (1, 0) + tuple(range(2, x.ndim)))


def _masked_step(step: Step, zero_output_for_mask: bool) -> Callable[[Any, Any], Any]:
    """``step`` on ``(previous output, states)`` and ``(x_t, keep_t)``: where ``keep_t``
    is false, the previous states and output (or zeros) are kept."""

    def advance(carry: Any, elem: Any) -> Any:
        previous_output, states = carry
        x_t, keep = elem
        output, new_states = step(x_t, states)
        kept = [ops.where(keep, new, old)
                for new, old in zip(nest.flatten(new_states), nest.flatten(states))]
        kept_states = nest.pack_sequence_as(new_states, kept)
        fallback = ops.zeros_like(output) if zero_output_for_mask else previous_output
        return ops.where(keep, output, fallback), kept_states

    return advance


def _plain_step(step: Step) -> Callable[[Any, Any], Any]:
    def advance(carry: Any, x_t: Any) -> Any:
        return step(x_t, carry[1])

    return advance


def time_loop(step: Step, sequences: Tensor, states: Any, output_zeros: Tensor,
              mask: Tensor | None = None, go_backwards: bool = False, unroll: bool = False,
              return_sequences: bool = False,
              zero_output_for_mask: bool = False) -> tuple[Tensor, Tensor | None, Any]:
    """Runs ``output, states = step(x_t, states)`` over axis 1 of ``sequences``
    ``(batch, time, ...)``; ``output_zeros`` is the output before the first step (what a
    masked first step gives). Returns the last output, every output ``(batch, time,
    ...)`` (or None without ``return_sequences``) and the last states."""
    elems: Any = _time_major(sequences)
    if go_backwards:
        elems = ops.reverse(elems, [0])
    if mask is None:
        advance = _plain_step(step)
    else:
        keep = ops.expand_dims(_time_major(ops.cast(mask, "bool")), -1)  # (time, batch, 1)
        if go_backwards:
            keep = ops.reverse(keep, [0])
        elems, advance = (elems, keep), _masked_step(step, zero_output_for_mask)
    carry = (output_zeros, states)
    if unroll:
        return _unrolled(advance, elems, carry, return_sequences)
    if not return_sequences:
        last_output, last_states = foldl(advance, elems, initializer=carry)
        return last_output, None, last_states
    outputs, every_state = scan(advance, elems, initializer=carry)
    last_states = nest.map_structure(lambda s: s[-1], every_state)
    return outputs[-1], _time_major(outputs), last_states


def _unrolled(advance: Callable[[Any, Any], Any], elems: Any, carry: Any,
              return_sequences: bool) -> tuple[Tensor, Tensor | None, Any]:
    """``unroll=True``: the steps as straight-line code (Keras's Python loop)."""
    flat = nest.flatten(elems)
    outputs = []
    for t in range(int(flat[0].shape[0])):
        carry = advance(carry, nest.pack_sequence_as(elems, [e[t] for e in flat]))
        outputs.append(carry[0])
    sequence = ops.stack(outputs, axis=1) if return_sequences and outputs else None
    return carry[0], sequence, carry[1]
