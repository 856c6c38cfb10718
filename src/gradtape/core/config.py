"""Process-wide compiler options: ``gt.config(compile=False)``, or as a context manager.

    gt.config(compile=False)            # from now on, gradients run the interpreter
    with gt.config(dump_dir="gen"):     # only inside the block
        ...

Options:
    compile        run generated code (True) or the reference interpreter (False).
    compile_after  compile a structure on its n-th gradient; earlier calls interpret it.
                   Compiling costs a few milliseconds, interpreting a call only the NumPy
                   calls plus Python dispatch, so a structure seen once is not compiled.
    cache_size     how many backward functions the LRU compile cache keeps.
    dump_dir       a directory to write every compiled backward to, as an importable
                   ``.py`` file (default: the ``GRADTAPE_DUMP_DIR`` environment variable).
                   Setting it compiles on the first call, so every structure is written.
    on_gradient_drop  what happens when NumPy converts a tensor a recording tape (or an
                   active forward accumulator) watches, so its gradient is lost:
                   "warn" (a ``gt.GradientDroppedWarning``, the default), "raise" (a
                   ``gt.GradientDroppedError``) or "ignore".
    max_traces     how many traces each ``@gt.function`` keeps (least recently used
                   goes first), unless it was given its own ``max_traces``.
    dtype_promotion  "numpy" (the default: float32 with float64 is float64, NumPy's
                   promotion) or "tf": two tensors of different dtypes given to one op
                   raise TF's ``InvalidArgumentError`` and a NumPy array beside a tensor
                   takes the tensor's dtype, as in TF (``ops/promotion.py``).
    hold_freed_memory  opt in to keeping freed array memory in the process heap (glibc
                   only; see ``core/memory.py``): ``True`` raises glibc's thresholds for the
                   whole process; ``False`` afterwards sets them back to glibc's initial
                   values and trims the heap. Default: on if ``GRADTAPE_HOLD_MEMORY=1``.
    pool_buffers   a ``@gt.function`` compiled while on (the default) keeps the buffers of
                   its large intermediates between calls, one set per call running at
                   once (``codegen/buffer_pool.py``); ``False`` empties every pool and
                   compiles functions without one from then on.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from . import devices, memory

_DEFAULTS: dict[str, Any] = {
    "compile": True,
    "compile_after": 2,
    "cache_size": 512,
    "dump_dir": None,
    "on_gradient_drop": "warn",
    "max_traces": 128,
    "hold_freed_memory": False,
    "dtype_promotion": "numpy",
    "pool_buffers": True,
}

_GRADIENT_DROP_ACTIONS = ("warn", "raise", "ignore")


class Options:
    """Current option values, read on every gradient call (plain attribute reads)."""

    # functions_eagerly: ``tf.config.run_functions_eagerly``, set by its function only.
    __slots__ = (*_DEFAULTS, "functions_eagerly")

    def __init__(self) -> None:
        for name, value in _DEFAULTS.items():
            setattr(self, name, value)
        self.functions_eagerly = False
        self.dump_dir = os.environ.get("GRADTAPE_DUMP_DIR") or None
        self.hold_freed_memory = memory.requested_by_environment()

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _DEFAULTS}


options = Options()
_lock = threading.Lock()

# option name -> what to call with its new value when ``gt.config`` sets it: the modules
# that own a resource register here (the compile cache's size, the allocator setting),
# so this module imports none of them.
on_change: dict[str, list[Callable[[Any], None]]] = {
    "hold_freed_memory": [memory.hold_freed_memory],
}


# option name -> its check, for options whose owner (a module above core) knows the values.
validators: dict[str, Callable[[Any], Any]] = {}


def _check(name: str, value: Any) -> Any:
    if name in validators:
        return validators[name](value)
    if name not in _DEFAULTS:
        raise TypeError(
            f"gt.config got an unknown option {name!r}; known options: {', '.join(_DEFAULTS)}."
        )
    if name in ("compile", "hold_freed_memory", "pool_buffers"):
        return bool(value)
    if name in ("compile_after", "cache_size", "max_traces"):
        if isinstance(value, bool) or not isinstance(value, int) or value < (
            0 if name == "cache_size" else 1
        ):
            raise ValueError(f"gt.config: {name} must be a non-negative int (>= 1 for "
                             f"compile_after and max_traces), got {value!r}.")
        return value
    if name == "dump_dir":
        return None if value is None else os.fspath(value)
    if name == "on_gradient_drop":
        if value not in _GRADIENT_DROP_ACTIONS:
            raise ValueError(f"gt.config: on_gradient_drop must be one of "
                             f"{', '.join(map(repr, _GRADIENT_DROP_ACTIONS))}, got {value!r}.")
        return value
    return value


def run_functions_eagerly(run_eagerly: bool) -> None:
    """``tf.config.run_functions_eagerly``: with ``True``, every ``@gt.function`` runs
    its Python function on each call (no trace, no compiled code) until set back."""
    options.functions_eagerly = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    """``tf.config.functions_run_eagerly``: what ``run_functions_eagerly`` last set."""
    return options.functions_eagerly


class config:
    """Set compiler options now; used in a ``with`` statement, restore them on exit.

    ``gt.config()`` with no arguments changes nothing; its attributes show the current
    values (``gt.config().compile``). TF's ``tf.config`` functions hang off it:
    ``gt.config.run_functions_eagerly(True)``, ``gt.config.list_physical_devices("GPU")``.
    """

    # TF's tf.config functions (the class is the namespace; its calls set options).
    run_functions_eagerly = staticmethod(run_functions_eagerly)
    functions_run_eagerly = staticmethod(functions_run_eagerly)
    list_physical_devices = staticmethod(devices.list_physical_devices)
    list_logical_devices = staticmethod(devices.list_logical_devices)
    PhysicalDevice = devices.PhysicalDevice
    LogicalDevice = devices.LogicalDevice

    def __init__(self, **changes: Any) -> None:
        checked = {name: _check(name, value) for name, value in changes.items()}
        with _lock:
            self._previous = {name: getattr(options, name) for name in checked}
            for name, value in checked.items():
                setattr(options, name, value)
        for name, value in checked.items():
            for listener in on_change.get(name, ()):
                listener(value)

    def __getattr__(self, name: str) -> Any:
        if name in _DEFAULTS:
            return getattr(options, name)
        raise AttributeError(name)

    def __enter__(self) -> config:
        return self

    def __exit__(self, *exc: Any) -> None:
        config(**self._previous)

    def __repr__(self) -> str:
        values = ", ".join(f"{k}={v!r}" for k, v in options.as_dict().items())
        return f"gt.config({values})"
