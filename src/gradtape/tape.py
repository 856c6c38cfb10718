"""GradientTape: TensorFlow's tape API with TensorFlow's semantics.

Inside ``with GradientTape() as tape:``, every op on a watched tensor (or on a result
computed from one) is recorded. ``tape.gradient`` lowers the records to IR, builds the
backward program once per structure, and runs it.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import backward, nest
from .recording import state
from .tensor import Tensor, constant
from .variable import Variable

logger = logging.getLogger("gradtape")


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


def _unconnected_mode(value: Any) -> UnconnectedGradients:
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(
            f"Unknown value for unconnected_gradients: {value!r}. Use "
            "UnconnectedGradients.NONE ('none') or UnconnectedGradients.ZERO ('zero')."
        ) from None


def _is_float(dtype: np.dtype) -> bool:
    return np.issubdtype(dtype, np.inexact)


_warned_inside_persistent = False


class GradientTape:
    """Record operations for automatic differentiation (``tf.GradientTape``).

    Args:
        persistent: allow more than one ``gradient``/``jacobian`` call.
        watch_accessed_variables: watch every trainable ``Variable`` read while
            recording, without an explicit ``watch``.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._records: list[tuple] = []
        self._tracked: set[int] = set()  # ids watched, or computed from watched ids
        self._watched: dict[int, Tensor] = {}  # explicitly watched or accessed tensors
        self._recording = False
        self._used = False  # a non-persistent tape computed its one gradient

    # --- context ------------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        if self._recording:
            raise ValueError(
                "Tape is still recording. This can happen if you try to re-enter an "
                "already-active tape."
            )
        self._push()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._recording:
            self._pop()

    def _push(self) -> None:
        state.recording.append(self)
        self._recording = True

    def _pop(self) -> None:
        if not self._recording:
            raise ValueError("Tape is not recording.")
        state.recording.remove(self)
        self._recording = False

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Temporarily stop recording: ops inside are not differentiable by this tape."""
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._pop()
        try:
            yield
        finally:
            self._push()

    def reset(self) -> None:
        """Forget everything recorded and watched; keep recording (TF's ``reset``)."""
        self._pop()
        self._records = []
        self._tracked = set()
        self._watched = {}
        self._used = False
        self._push()

    # --- watching -----------------------------------------------------------------
    def watch(self, tensor: Any) -> None:
        """Track ``tensor`` (a Tensor, Variable, or nested structure of them)."""
        for t in nest.flatten(tensor):
            if not isinstance(t, Tensor):
                raise ValueError(
                    f"Passed in object {t!r} of type {type(t).__name__!r}, not a "
                    "gradtape Tensor or Variable. Convert it with gt.constant first."
                )
            if not _is_float(t.dtype):
                logger.warning(
                    "The dtype of the watched tensor must be floating (e.g. float32), "
                    "got %s", t.dtype.name,
                )
            self._watch_id(t._id, t)

    def _watch_id(self, tensor_id: int, tensor: Tensor | None = None) -> None:
        self._tracked.add(tensor_id)
        if tensor is not None:
            self._watched.setdefault(tensor_id, tensor)

    def watched_variables(self) -> tuple[Variable, ...]:
        """The variables this tape watches, in creation order."""
        found = [t for t in self._watched.values() if isinstance(t, Variable)]
        return tuple(sorted(found, key=lambda v: v._id))

    # --- gradients ------------------------------------------------------------------
    def _begin_gradient(self) -> None:
        if self._used:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of "
                "gradients (or jacobians). Create the tape with persistent=True to call "
                "gradient more than once."
            )
        if self._recording:
            if not self._persistent:
                self._pop()
            else:
                global _warned_inside_persistent
                if not _warned_inside_persistent:
                    _warned_inside_persistent = True
                    warnings.warn(
                        "Calling GradientTape.gradient on a persistent tape inside its "
                        "context is significantly less efficient than calling it outside "
                        "the context (it causes the gradient ops to be recorded on the "
                        "tape). Only do so to compute higher-order derivatives.",
                        RuntimeWarning,
                        stacklevel=3,
                    )

    def _end_gradient(self) -> None:
        if not self._persistent:
            self._used = True
            self._records = []

    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
    ) -> Any:
        """Gradient of ``target`` (summed over a structure of targets) with respect to
        ``sources``, returned in the structure of ``sources``."""
        self._begin_gradient()
        if target is None:
            raise TypeError(
                "Argument `target` should be a list or nested structure of Tensors or "
                "Variables to be differentiated, but received None."
            )
        mode = _unconnected_mode(unconnected_gradients)
        flat_targets = [_as_target(t) for t in nest.flatten(target)]
        flat_sources = nest.flatten(sources)
        for s in flat_sources:
            _check_source(s)
        flat_grads = _flat_output_gradients(output_gradients, flat_targets)
        grads = self._gradients(flat_targets, flat_sources, flat_grads, mode)
        self._end_gradient()
        return nest.pack_sequence_as(sources, grads)

    def _gradients(self, targets, sources, output_grads, mode) -> list[Any]:
        float_sources = []
        for s in sources:
            if _is_float(s.dtype):
                float_sources.append(s)
            else:
                logger.warning(
                    "The dtype of the source tensor must be floating (e.g. float32) when "
                    "calling GradientTape.gradient, got %s; its gradient is None.",
                    s.dtype.name,
                )
        raw = backward.gradients(self._records, float_sources, targets, output_grads)
        by_id = dict(zip((s._id for s in float_sources), raw))
        out = []
        for s in sources:
            g = by_id.get(s._id) if _is_float(s.dtype) else None
            if g is None:
                if mode is UnconnectedGradients.ZERO:
                    g = np.zeros(s.shape, s.dtype)
                else:
                    out.append(None)
                    continue
            out.append(_as_gradient(g, s))
        return out

    def inspect(self, target: Any, sources: Any, output_gradients: Any = None) -> Any:
        """What ``gradient(target, sources)`` compiles: an ``Inspection`` with
        ``.forward_ir``, ``.backward_ir``, ``.optimized_ir`` and ``.source``. It does not
        use up a non-persistent tape."""
        from .inspection import inspect_gradient

        return inspect_gradient(self, target, sources, output_gradients)

    # jacobian and batch_jacobian live in jacobians.py to keep this module small.
    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """Jacobian of ``target`` with respect to each source: shape
        ``target.shape + source.shape``."""
        from .jacobians import jacobian

        return jacobian(self, target, sources, unconnected_gradients,
                        parallel_iterations, experimental_use_pfor)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobian: ``target[i]`` with respect to ``source[i]``, shape
        ``[batch] + target.shape[1:] + source.shape[1:]``."""
        from .jacobians import batch_jacobian

        return batch_jacobian(self, target, source, unconnected_gradients,
                              parallel_iterations, experimental_use_pfor)


def _as_target(t: Any) -> Tensor:
    if isinstance(t, Tensor):
        return t
    # A constant target has no path to any source: every gradient is unconnected.
    return constant(t)


def _check_source(s: Any) -> None:
    if not isinstance(s, Tensor):
        raise ValueError(
            f"Sources must be gradtape Tensors or Variables, got {type(s).__name__}: {s!r}."
        )


def _flat_output_gradients(output_gradients, flat_targets) -> list[Any]:
    if output_gradients is None:
        return [None] * len(flat_targets)
    flat = nest.flatten(output_gradients)
    if len(flat) != len(flat_targets):
        raise ValueError(
            f"output_gradients has {len(flat)} entries but target has {len(flat_targets)}: "
            "give one output gradient (or None) per target."
        )
    out = []
    for g, t in zip(flat, flat_targets):
        if g is not None:
            value = g._value if isinstance(g, Tensor) else np.asarray(g)
            if tuple(np.shape(value)) != tuple(t.shape):
                raise ValueError(
                    f"An output gradient of shape {np.shape(value)} was given for a target of "
                    f"shape {t.shape}; they must match."
                )
            if not isinstance(g, Tensor):
                g = value.astype(t.dtype) if _is_float(value.dtype) is False else value
        out.append(g)
    return out


def _as_gradient(g: Any, source: Tensor) -> Tensor:
    """A raw result as a tensor of the source's dtype (TF: gradients take the source's dtype)."""
    if isinstance(g, Tensor):
        if g.dtype != source.dtype:
            from .ops import cast

            g = cast(g, source.dtype)
        return g
    g = np.asarray(g)
    if g.dtype != source.dtype:
        g = g.astype(source.dtype)
    if g.shape != source.shape:
        g = np.broadcast_to(g, source.shape).copy()
    return Tensor._wrap(g)
