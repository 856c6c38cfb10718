"""The warning for a float32 variable promoted to float64 by an array operand (NumPy's
promotion: the op, and what follows it, compute in float64 where TF would raise).

Told once per code location, naming the user's line; a Python number never promotes (it
is weak). The tape's variable-read bookkeeping calls ``check`` for each float32 variable
an op reads, so the check costs nothing to ops that read no float32 variable; the ops
built from others that reshape their operands first call ``check_operands``.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np

from .state import location_from, state

__all__ = ["FLOAT32", "check", "check_operands"]

FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)
_told: set[tuple[str, int]] = set()
MAX_LOCATIONS = 4096  # a bound on the memory of told locations


def _is_float64_array(value: Any) -> bool:
    array = getattr(value, "_value", value)
    return isinstance(array, (np.ndarray, np.generic)) and array.dtype == _FLOAT64


def check(variable: Any, args: Any) -> None:
    """Warn if an operand beside the float32 ``variable`` is a float64 array or tensor."""
    if not any(a is not variable and _is_float64_array(a) for a in args):
        return
    location = location_from(sys._getframe(1))
    if location is None or location in _told:
        return
    if len(_told) >= MAX_LOCATIONS:
        _told.clear()
    _told.add(location)
    filename, lineno = location
    name = getattr(variable, "name", None) or "a variable"
    warnings.warn_explicit(
        f"The float32 variable {name!r} meets a float64 array here: NumPy promotes the "
        f"op to float64, so it and what follows it compute in float64 (TF raises "
        f"InvalidArgumentError). Cast the data to float32 (x.astype(np.float32) or "
        f"gt.cast(x, gt.float32)), or set gt.config(dtype_promotion=\"tf\") to follow "
        f"TF's rule.", UserWarning, filename, lineno)


def check_operands(args: Any) -> None:
    """``check`` for an op built from others (``stack``, ``tensordot``, ``outer``), which
    reshapes a variable before it meets the data, so the op that promotes never reads
    the variable: while a tape records, each float32 variable among the operands is
    checked against the others."""
    if not state.recording:
        return
    for a in args:
        if getattr(a, "_watch_on_read", False) and a._value.dtype is FLOAT32:
            check(a, args)
