"""Why a ``@gt.function`` traced again: the words of its retracing warning.

Everything here runs only when a call traces (never on the per-call hot path): a trace
keeps a description of the arguments it was made for (``describe_arguments``), and a new
trace is compared with the one the previous call ran (``signature_change``); a trace whose
guards failed names the first guard that changed (``guard_change``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tensor import Tensor
from ..core.variable import Variable
from .trace import READERS, guard_holds

MAX_SHOWN = 60  # characters of a Python value or guarded value shown
MAX_CHANGES = 3  # changed arguments named per retrace


def describe_arguments(names: list[str], args: tuple, kwargs: dict) -> dict[str, str]:
    """Each argument leaf by its path (``x``, ``batch['images']``, ``pair[1]``,
    ``point.x``) with what the signature sees of it: a tensor's dtype and shape, a
    variable's identity, a Python value."""
    described: dict[str, str] = {}
    for i, value in enumerate(args):
        _describe(names[i] if i < len(names) else f"args[{i}]", value, described)
    for name in sorted(kwargs):
        _describe(name, kwargs[name], described)
    return described


def _describe(path: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, Variable):
        out[path] = f"variable {value.name!r} (id {value._id})"
    elif isinstance(value, (Tensor, np.ndarray, np.generic)):
        kind = "tensor" if isinstance(value, Tensor) else "array"
        out[path] = f"{np.dtype(value.dtype).name} {kind} of shape {tuple(value.shape)}"
    elif isinstance(value, dict):
        out[path] = f"dict with keys {_short(sorted(value, key=repr))}"
        for key in sorted(value, key=repr):
            _describe(f"{path}[{key!r}]", value[key], out)
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        out[path] = f"{type(value).__name__}"
        for field, item in zip(value._fields, value):
            _describe(f"{path}.{field}", item, out)
    elif isinstance(value, (list, tuple)):
        out[path] = f"{type(value).__name__} of length {len(value)}"
        for j, item in enumerate(value):
            _describe(f"{path}[{j}]", item, out)
    else:
        out[path] = f"Python {type(value).__name__} {_short(value)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN - 3] + "..."


def signature_change(old: dict[str, str] | None, new: dict[str, str],
                     captures_changed: bool) -> str:
    """What differs between the arguments the previous call's trace was made for and
    these: ``argument `x`: float32 tensor of shape (3,) -> ... (4,)``."""
    if old is None:
        return "a new signature"
    changes = []
    for path, now in new.items():
        before = old.get(path)
        if before is None:
            changes.append(f"argument `{path}` is new: {now}")
        elif before != now:
            changes.append(f"argument `{path}` changed: {before} -> {now}")
    changes += [f"argument `{path}` is gone (was {old[path]})"
                for path in old if path not in new]
    if not changes:
        if captures_changed:
            return ("a tensor or variable the function captures (through its closure or "
                    "a global) is another object than in the previous call")
        return "a new signature"
    more = len(changes) - MAX_CHANGES
    shown = "; ".join(changes[:MAX_CHANGES])
    return shown + (f"; and {more} more" if more > 0 else "")


def guard_change(fn: Any, outs: Any, failed: tuple[int, Any] | None = None) -> str:
    """Which value Python read while tracing ``fn`` came out differently in ``outs``
    (``None``: the trace could not run on the new values, or stopped where ``failed``,
    a guard's position and value, failed before a Python call)."""
    if outs is None and failed is not None:
        position, got = failed
        kind, expected = fn.guards[position][1:]
        seen = np.asarray(got) if kind == "array" else READERS[kind](got)
        return (f"{fn.guard_notes[position] or 'a read of a tensor value'}: it was "
                f"{_value(expected)} when traced, {_value(seen)} now (checked before a "
                "py_function call)")
    if outs is None:
        return ("the trace could not run on the new values: a value Python read while "
                "tracing (the count of a boolean mask) fixed shapes that no longer fit")
    for (index, kind, expected), note in zip(fn.guards, fn.guard_notes):
        got = outs[index]
        if not guard_holds(kind, expected, got):
            seen = np.asarray(got) if kind == "array" else READERS[kind](got)
            return (f"{note or 'a read of a tensor value'}: it was {_value(expected)} "
                    f"when traced, {_value(seen)} now")
    return "a value Python read while tracing (a guard) came out differently"


def _value(value: Any) -> str:
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=8, separator=", ").replace("\n", "")
        return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN - 3] + "..."
    return _short(value)


def retracing_message(count: int, name: str, reasons: list[str], limit: int) -> str:
    """TF's retracing warning, then what made each of these calls trace (in order,
    each cause once)."""
    causes = list(dict.fromkeys(reasons))
    listed = "".join(f"\n  - {cause}" for cause in causes)
    return (
        f"{count} out of the last {count} calls to <gt.function {name}> triggered "
        "tf.function retracing. Tracing is expensive and the excessive number of "
        "tracings could be due to (1) creating @gt.function repeatedly in a loop (define "
        "it once, outside), (2) passing tensors with different shapes, (3) passing "
        "Python objects instead of tensors (numbers that change: pass them as tensors), "
        "(4) Python reading a tensor's value while tracing (`if t > 0`, float(t), "
        "t.numpy()) with an outcome that changes, or (5) more signatures in turn than "
        f"the {limit} traces the function keeps (raise max_traces). What made these "
        f"calls retrace:{listed}"
    )
