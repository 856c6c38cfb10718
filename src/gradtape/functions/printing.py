"""``gt.print``: TF's ``tf.print``. Eagerly it prints at once; inside ``@gt.function`` it
prints on every call.

While a function traces, ``gt.print`` prints nothing: the tracer records the tensors to
print as extra outputs of the trace (like guards) and the text around them, and every
call of the trace prints them after it ran (``ConcreteFunction.finish``). Being outputs,
they are never removed as dead code, and no op is recorded, so gradients are unchanged.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Any, TextIO

import numpy as np

from ..core.state import state
from ..core.tensor import Tensor
from ..ir.nodes import Aval
from ..ops.registry import Primitive, bind
from .subtrace import in_scope, note_loop_print

__all__ = ["tf_print", "format_value", "PrintRecord", "FlushRecord", "print_p",
           "discard_waiting_lines", "hold_lines"]


class _Stderr:
    """The default ``output_stream``: ``sys.stderr`` when printing (not at import)."""

    def __repr__(self) -> str:
        return "sys.stderr"


_STDERR: Any = _Stderr()


def tf_print(*inputs: Any, output_stream: TextIO | Any = _STDERR, sep: str = " ",
             end: str = "\n", summarize: int | None = 3, name: str | None = None) -> None:
    """Print ``inputs`` as ``tf.print`` does: tensors as their values (``[1 2 3]``;
    only the first and last ``summarize`` entries of each dimension, ``None`` meaning 3
    and ``-1`` all), other values with ``str``, joined by ``sep`` and followed by ``end``,
    to ``output_stream`` (``sys.stderr`` by default, or any object with ``write``).
    Inside ``@gt.function`` it prints on every call, after the call ran.
    """
    del name  # accepted for TF compatibility
    if not isinstance(sep, str) or not isinstance(end, str):
        raise TypeError(f"gt.print: sep and end must be strings, got {sep!r} and {end!r}.")
    if output_stream is not _STDERR and not callable(getattr(output_stream, "write", None)):
        raise ValueError(f"gt.print: output_stream must be sys.stdout, sys.stderr or an "
                         f"object with a write method, got {output_stream!r}.")
    summarize = _check_summarize(summarize)
    record = PrintRecord(output_stream, sep, end, summarize)
    tracer = state.tracer
    if in_scope(tracer):  # a loop body or branch: an op that prints when it runs
        _print_op(record, inputs)
        return
    for value in inputs:
        if tracer is not None and isinstance(value, Tensor):
            record.add_value(tracer.printed_value(value))
        else:
            record.add_text(_text(value, summarize))
    if tracer is not None:
        tracer.prints.append(record)
    else:
        record.emit([])


def _check_summarize(summarize: Any) -> int:
    if summarize is None:
        return 3
    if isinstance(summarize, bool) or not isinstance(summarize, int) or summarize < -1:
        raise ValueError(f"gt.print: summarize must be a non-negative int, -1 (everything) "
                         f"or None, got {summarize!r}.")
    return summarize


class PrintRecord:
    """One ``gt.print`` call: text pieces and, in a trace, program values to format
    (``parts`` holds ``("text", str)`` or ``("value", var)``; ``indices`` the trace
    output holding each value, filled in when the trace is finished)."""

    def __init__(self, stream: Any, sep: str, end: str, summarize: int):
        self.stream, self.sep, self.end, self.summarize = stream, sep, end, summarize
        self.parts: list[tuple[str, Any]] = []
        self.indices: list[int] = []
        self.at_once = False  # a print op's line printed as it runs (see _print_op)

    def add_text(self, text: str) -> None:
        self.parts.append(("text", text))

    def add_value(self, value: Any) -> None:
        if isinstance(value, str):  # a value fixed at trace time, already formatted
            self.add_text(value)
        else:
            self.parts.append(("value", value))

    def values(self) -> list[Any]:
        return [v for kind, v in self.parts if kind == "value"]

    def emit(self, outs: Sequence[Any]) -> None:
        """Write the line, with the values at ``self.indices`` in ``outs``."""
        found = iter(self.indices)
        pieces = [v if kind == "text" else format_value(outs[next(found)], self.summarize)
                  for kind, v in self.parts]
        stream = sys.stderr if self.stream is _STDERR else self.stream
        stream.write(self.sep.join(pieces) + self.end)


# --- gt.print inside a loop body or a branch: the print op -----------------------------
#
# There the values differ per iteration, so the print is an op of the sub-program that
# formats its line when it runs, and prints it then, unless a gt.print outside control
# flow came before it: those print after the call, so the line waits in a per-thread
# list until a ``FlushRecord`` (in the trace's prints, at the loop's place among the
# other gt.print calls) writes it. Either way everything prints in program order.

_waiting = threading.local()


def _waiting_lines() -> list:
    lines = getattr(_waiting, "lines", None)
    if lines is None:
        lines = _waiting.lines = []
    return lines


def _print_impl(*values: Any, record: PrintRecord) -> np.ndarray:
    if state.tracer is None:  # the trace's own run of the loop prints nothing
        state.effects_run += 1
        if record.at_once and not getattr(_waiting, "held", False):
            record.emit(values)
        else:
            _waiting_lines().append((record, values))
    return np.asarray(True)


def _print_batch(size: int, args: list, batched: list, *, record: PrintRecord) -> Any:
    from ..ops.shape import broadcast_to

    # Under a jacobian's batch the line shows the batched values, once (as TF's vmap).
    return broadcast_to(bind(print_p, *args, record=record), (size,))


print_p = Primitive(
    "print", _print_impl, shape_rule=lambda *values, record: Aval((), np.dtype(bool)),
    batch=_print_batch, pure=False, effect=True, kind_neutral=True,
)


def _print_op(record: PrintRecord, inputs: Sequence[Any]) -> None:
    # With no gt.print before it outside control flow (those print after the call), the
    # line prints as the op runs, as TF's does; else it waits for them.
    record.at_once = not any(isinstance(r, PrintRecord) for r in state.tracer.prints)
    values = []
    for value in inputs:
        if isinstance(value, Tensor):
            record.indices.append(len(values))
            record.parts.append(("value", None))
            values.append(value)
        else:
            record.add_text(_text(value, record.summarize))
    bind(print_p, *values, record=record)
    note_loop_print()


def hold_lines(held: bool) -> None:
    """While ``held``, every print op's line waits for the call's ``FlushRecord``: a
    run that may not be the call (a trace whose guards are checked after it ran) prints
    nothing until it is."""
    _waiting.held = held


def discard_waiting_lines() -> None:
    """A call that failed: the lines its print ops left waiting go, as its prints
    outside control flow (they print after a call that ran) do; the next call would
    print them first."""
    _waiting_lines().clear()


class FlushRecord:
    """In a trace's prints where a loop or branch with prints ran: writes the lines its
    print ops left during this call, in the order they ran."""

    def values(self) -> list[Any]:
        return []

    def emit(self, outs: Sequence[Any]) -> None:
        del outs
        lines = _waiting_lines()
        for record, values in lines:
            record.emit(values)
        lines.clear()


def _text(value: Any, summarize: int) -> str:
    if isinstance(value, Tensor):
        return format_value(value._value, summarize)
    if isinstance(value, (np.ndarray, np.generic)):
        return format_value(value, summarize)
    return str(value)


# --- TF's formatting of a tensor value ------------------------------------------------------

def format_value(value: Any, summarize: int = 3) -> str:
    """A tensor value as ``tf.print`` shows it: ``[[1 2]\\n [3 4]]``, no dtype; long
    dimensions as their first and last ``summarize`` entries around ``...``."""
    array = np.asarray(value)
    if array.ndim == 0:
        return _element(array[()])
    return _format_array(array, summarize, 1)


def _format_array(array: np.ndarray, summarize: int, depth: int) -> str:
    n = array.shape[0]
    cut = summarize >= 0 and n > 2 * summarize
    shown = list(range(summarize)) + [-1] + list(range(n - summarize, n)) if cut \
        else list(range(n))
    if array.ndim == 1:
        items = ["..." if i < 0 else _element(array[i]) for i in shown]
        return "[" + " ".join(items) + "]"
    rows = ["..." if i < 0 else _format_array(array[i], summarize, depth + 1) for i in shown]
    newline = "\n" * (array.ndim - 1) + " " * depth
    return "[" + newline.join(rows) + "]"


def _element(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"  # TF prints bools as numbers
    if isinstance(x, (np.complexfloating, complex)):
        return f"({_element(x.real)},{_element(x.imag)})"
    if isinstance(x, (np.floating, float)):
        return _shortest(x)
    return str(x)


def _shortest(x: Any) -> str:
    """TF's FloatToBuffer/DoubleToBuffer: 6 (15) significant digits if they round-trip,
    else 9 (17)."""
    wide = isinstance(x, (np.float64, float))
    short, long_ = ("%.15g", "%.17g") if wide else ("%.6g", "%.9g")
    kind = np.float64 if wide else np.float32
    text = short % float(x)
    if not np.isfinite(x) or kind(float(text)) == kind(x):
        return text
    return long_ % float(x)
