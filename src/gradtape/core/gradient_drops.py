"""Telling the user when NumPy converts a watched tensor, so its gradient is lost.

``np.mean([t, t + 2.0])``, ``np.r_[t, t]`` or ``np.append([t], [t])`` never reach
gradtape's NumPy dispatch (the list, not the tensor, is NumPy's argument): NumPy turns
each tensor into an array with ``Tensor.__array__`` and computes without the tape. When a
recording tape or an active forward accumulator watches that tensor, ``__array__`` calls
:func:`report_conversion`, which warns (or raises, per ``gt.config(on_gradient_drop=)``)
naming the user's line. gradtape's own code reads ``._value`` and never gets here.
While a ``@gt.function`` traces, the report goes to the tracer: each call of the trace
tells it when its tapes watch the tensor's inputs (``functions/drops.py``).
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any, NamedTuple

import numpy as np

from .config import options
from .state import _PACKAGE_DIR, _USER_CODE_FILES, state


class GradientDroppedWarning(UserWarning):
    """NumPy converted a watched tensor to an array: no gradient flows through the result."""


class GradientDroppedError(NotImplementedError):
    """Raised instead of :class:`GradientDroppedWarning` under
    ``gt.config(on_gradient_drop="raise")``. A ``NotImplementedError``, as TF raises when
    NumPy is handed a tensor it cannot convert."""


_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))

# The public ``gt`` namespace, where a SciPy function's differentiable route is looked
# up; installed by the package root, a layer above (core imports nothing above it).
_public_namespace: Any = None


def install_public_namespace(namespace: Any) -> None:
    """Called once by ``gradtape/__init__.py`` with the package itself."""
    global _public_namespace
    _public_namespace = namespace


def is_watched(tensor: Any) -> bool:
    """Whether a recording tape or an active accumulator would differentiate ``tensor``:
    it is tracked, or it is a trainable variable a tape watches on its first read."""
    return any(tape.sees(tensor) for tape in state.recording) or \
        any(acc.sees(tensor) for acc in state.accumulators)


class DropReport(NamedTuple):
    """What to tell the user about one conversion: the message, whether SciPy made it
    (a ``TypeError``), and the user's line. A ``@gt.function`` trace keeps its reports
    and tells them again on each call that converts a watched tensor (functions/call.py)."""

    message: str
    scipy: bool
    filename: str | None  # None: no frame outside gradtape and NumPy
    lineno: int
    module_globals: dict | None

    def raises(self) -> bool:
        """Whether telling it raises (under the current ``on_gradient_drop``)."""
        action = options.on_gradient_drop
        return action != "ignore" and (self.scipy or action == "raise")


def report_conversion(tensor: Any, numpy_function: str | None = None) -> None:
    """``tensor`` is leaving the tape as a NumPy array: warn, raise or stay silent.

    While a ``@gt.function`` traces, the tracer keeps the report: the function's call,
    which the outer tapes record, tells it when they watch the tensor's inputs. A tape
    opened inside the function that watches the tensor makes an error raise at once."""
    tracer = state.tracer
    watched = is_watched(tensor)  # while tracing: by the function's own tapes only
    if tracer is None and (not watched or options.on_gradient_drop == "ignore"):
        return
    report = drop_report(sys._getframe(1).f_back, numpy_function)  # above __array__
    if tracer is not None:
        tracer.on_conversion(tensor, report, watched)
        if not (watched and report.raises()):
            return
    tell(report)


def drop_report(caller: Any, numpy_function: str | None = None) -> DropReport:
    """The report of a conversion made by ``caller``'s code (NumPy's, SciPy's or the
    user's frame); ``numpy_function`` names the NumPy function that converted, when no
    Python frame of it is on the stack (one dispatched by ``__array_function__``)."""
    scipy_function = _scipy_function(caller)
    if scipy_function is not None:
        frame = _user_frame(caller)[0]
        return _report(_scipy_message(scipy_function), True, frame)
    frame, from_frames = _user_frame(caller)
    return _report(_message(frame, from_frames or numpy_function), False, frame)


def _report(message: str, scipy: bool, frame: Any) -> DropReport:
    if frame is None:
        return DropReport(message, scipy, None, 0, None)
    return DropReport(message, scipy, frame.f_code.co_filename, frame.f_lineno,
                      frame.f_globals)


def tell(report: DropReport) -> None:
    """Warn or raise per ``gt.config(on_gradient_drop=)``, naming the user's line."""
    action = options.on_gradient_drop
    if action == "ignore":
        return
    if report.scipy:
        raise TypeError(report.message)
    if action == "raise":
        raise GradientDroppedError(report.message)
    if report.filename is None:
        warnings.warn(report.message, GradientDroppedWarning, stacklevel=4)
        return
    # No module_globals: warnings would ask the module's loader for its source, and the
    # loader of ``python -c``'s __main__ raises ImportError.
    module_globals = report.module_globals or {}
    warnings.warn_explicit(
        report.message, GradientDroppedWarning, report.filename, report.lineno,
        module=module_globals.get("__name__"),
        registry=module_globals.setdefault("__warningregistry__", {}),
    )


def _scipy_function(frame: Any) -> str | None:
    """``scipy.stats.norm.pdf`` when a SciPy function called from user code converts the
    tensor (the outermost SciPy frame names it); None otherwise. Only on the slow path
    of a drop: SciPy converts with ``np.asarray``, so it never sees our protocols."""
    scipy = sys.modules.get("scipy")
    if scipy is None or getattr(scipy, "__file__", None) is None:
        return None
    scipy_dir = os.path.dirname(os.path.abspath(scipy.__file__))
    outermost = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(scipy_dir):
            outermost = frame
        elif not _is_library_code(filename):
            break
        frame = frame.f_back
    return None if outermost is None else _scipy_name(outermost)


def _scipy_name(frame: Any) -> str:
    """``scipy.<package>[.<distribution>].<function>`` for a frame in SciPy."""
    package = ".".join(frame.f_globals.get("__name__", "scipy").split(".")[:2])
    owner = frame.f_locals.get("self")
    owner = getattr(owner, "dist", owner)  # a frozen distribution: its distribution
    if owner is None:
        return f"{package}.{frame.f_code.co_name}"
    kind = getattr(owner, "name", None) or type(owner).__name__.removesuffix("_gen")
    return f"{package}.{kind}.{frame.f_code.co_name}"


def _scipy_message(function: str) -> str:
    route = f"gt.{function}"
    if _has_route(function):
        how = f"use {route}, which differentiates"
    else:
        how = ("gradtape has no differentiable version of it yet (see gt.scipy); call "
               ".numpy() on the tensor if no gradient should flow")
    return (f"{function} does not differentiate gradtape tensors (SciPy converts them to "
            f"NumPy arrays, which would drop the gradient); {how}.")


def _has_route(function: str) -> bool:
    """Whether ``gt.<function>`` exists (``gradtape.scipy`` loads its parts lazily)."""
    found: Any = _public_namespace
    if found is None:
        return False
    for part in function.split("."):
        found = getattr(found, part, None)
        if found is None:
            return False
    return True


def _is_library_code(filename: str) -> bool:
    if filename.startswith(_NUMPY_DIR):
        return True
    return filename.startswith(_PACKAGE_DIR) and \
        os.path.basename(filename) not in _USER_CODE_FILES


def _user_frame(frame: Any) -> tuple[Any, str | None]:
    """The first frame outside gradtape and NumPy, and the name of the outermost NumPy
    function called from it (``mean`` for ``np.mean([t])``; None for ``np.asarray(t)``,
    which has no Python frame)."""
    numpy_function = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if not _is_library_code(filename):
            return frame, numpy_function
        if filename.startswith(_NUMPY_DIR):
            numpy_function = _function_name(frame)
        frame = frame.f_back
    return None, numpy_function


def _function_name(frame: Any) -> str:
    """``np.mean`` for NumPy's ``mean``; ``RClass.__getitem__`` for ``np.r_[...]``."""
    name = frame.f_code.co_name
    if not name.startswith("__"):
        return f"np.{name}"
    owner = frame.f_locals.get("self")
    return name if owner is None else f"{type(owner).__name__}.{name}"


def _message(frame: Any, numpy_function: str | None) -> str:
    where = "" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}: "
    how = "np.asarray / np.array" if numpy_function is None else numpy_function
    return (
        f"{where}{how} converted a watched tensor to a NumPy array; its gradient is not "
        "recorded, so gradients through this value are lost. Use gradtape ops (gt.stack, "
        "gt.concat, gt.reduce_mean, ...) or pass tensors to NumPy functions one by one "
        "instead of in a list; call .numpy() explicitly if no gradient should flow. "
        "gt.config(on_gradient_drop='raise') makes this an error, 'ignore' silences it."
    )
