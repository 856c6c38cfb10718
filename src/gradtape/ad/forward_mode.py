"""ForwardAccumulator: forward-mode autodiff (Jacobian-vector products), TF's API.

While an accumulator is active, every differentiable op with an input that has a
tangent computes its output's tangent at once, with the primitive's JVP rule. The rule
runs on tensors through the normal dispatch, so the tangent computation is itself an
ordinary computation that can be differentiated:

- tapes and accumulators entered *outside* this one see it (backward-over-forward,
  forward-over-forward: ``outer.jvp(inner.jvp(y))``);
- tapes and accumulators entered *inside* this one don't (TF's strict nesting), so a
  tape inside an accumulator never holds on to tangents, and an accumulator outside a
  tape sees the tape's gradient computation (forward-over-backward Hessian-vector
  products).
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

import numpy as np

from ..core import nest
from ..core.dtypes import as_dtype
from ..core.state import state
from ..core.tensor import Tensor, convert_to_tensor, wrap
from ..core.unconnected import UnconnectedGradients, unconnected_mode
from ..ops import broadcast_to, cast

logger = logging.getLogger("gradtape")

__all__ = ["ForwardAccumulator"]


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind in "fc"  # np.issubdtype(dtype, np.inexact), on the hot path


def _pair_leaves(primals: Any, tangents: Any, names: tuple[str, str] = ("primals", "tangents"),
                 where: str = "") -> list[tuple[Any, Any]]:
    """(primal, tangent) pairs in ``nest.flatten`` order. A primal leaf takes its tangent
    whole, so ``[1., 0.]`` is the tangent of one vector primal, not a structure."""
    if isinstance(primals, dict):
        if not isinstance(tangents, dict) or set(primals) != set(tangents):
            raise ValueError(
                f"The {names[1]} don't have the same nested structure as the "
                f"{names[0]}{where}: {names[0]} have dict keys {sorted(primals)}, "
                f"{names[1]} are {tangents!r}."
            )
        pairs = []
        for k in sorted(primals):
            pairs += _pair_leaves(primals[k], tangents[k], names, f"{where}[{k!r}]")
        return pairs
    if isinstance(primals, (list, tuple)):
        if not isinstance(tangents, (list, tuple)) or len(tangents) != len(primals):
            raise ValueError(
                f"The {names[1]} don't have the same nested structure as the "
                f"{names[0]}{where}: {len(primals)} {names[0]}, {names[1]} are {tangents!r}. "
                f"Give one entry of {names[1]} per entry of {names[0]}, in the same structure."
            )
        pairs = []
        for i, (p, t) in enumerate(zip(primals, tangents)):
            pairs += _pair_leaves(p, t, names, f"{where}[{i}]")
        return pairs
    return [(primals, tangents)]


class ForwardAccumulator:
    """Compute Jacobian-vector products with forward-mode autodiff
    (``tf.autodiff.ForwardAccumulator``).

    ``primals`` (a tensor, variable or nested structure of them) are watched with the
    matching ``tangents`` from construction on. Inside ``with acc:``, each op computes
    the tangent of its result; ``acc.jvp(y)`` looks it up (no computation), inside or
    after the context. A tangent is dropped when its primal tensor is garbage
    collected, unless a tape recorded that tensor (a tape's gradient may still need it,
    for forward-over-backward).

    Raises:
        ValueError: a primal is given more than once; a tangent's shape differs from its
            primal's, or it is a tensor of another dtype; the structures differ.
    """

    def __init__(self, primals: Any, tangents: Any):
        self._tangents: dict[int, Tensor] = {}  # tensor id -> its tangent
        self._refs: dict[int, weakref.ref] = {}  # drops a tangent when its primal dies
        self._pinned: set[int] = set()  # ids a tape recorded: kept while acc lives
        self._self_ref = weakref.ref(self)
        self._recording = False
        self._outer_tapes: tuple = ()
        seen = set()
        for primal in nest.flatten(primals):
            key = primal._id if isinstance(primal, Tensor) else id(primal)
            if key in seen:
                raise ValueError(
                    f"Tensor {primal!r} was specified as a primal multiple times. This may "
                    "indicate an error. If it was intended, please sum the corresponding "
                    "tangents."
                )
            seen.add(key)
        self._watch(primals, tangents)

    # --- context ------------------------------------------------------------------
    def __enter__(self) -> ForwardAccumulator:
        if self._recording:
            raise ValueError("Accumulator is already recording.")
        # Tapes recording now are outside this accumulator: they see its JVP computation.
        self._outer_tapes = tuple(state.recording)
        state.accumulators = (*state.accumulators, self)
        self._recording = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._recording:
            state.accumulators = tuple(a for a in state.accumulators if a is not self)
            self._recording = False
            self._outer_tapes = ()

    # --- watching -------------------------------------------------------------------
    def _watch(self, primals: Any, tangents: Any) -> None:
        """Watch ``primals`` with ``tangents``; watching a tensor again adds the tangents."""
        for primal, tangent in _pair_leaves(primals, tangents):
            if not isinstance(primal, Tensor):
                raise ValueError(
                    f"ForwardAccumulator primals must be gradtape Tensors or Variables, got "
                    f"{type(primal).__name__}: {primal!r}. Convert it with gt.constant first."
                )
            if not _is_float(primal.dtype):
                logger.warning(
                    "The dtype of the watched primal must be floating (e.g. float32), got %s",
                    as_dtype(primal.dtype).name,
                )
            try:
                tangent = convert_to_tensor(tangent, dtype=primal.dtype)
            except ValueError as e:
                raise ValueError(f"The tangent for primal {primal!r} has the wrong dtype: {e}") \
                    from None
            if tuple(tangent.shape) != tuple(primal.shape):
                raise ValueError(
                    f"Tangent shape {tuple(tangent.shape)} does not match primal shape "
                    f"{tuple(primal.shape)}: each tangent must have its primal's shape."
                )
            existing = self._tangents.get(primal._id)
            self._remember(primal, tangent if existing is None else existing + tangent)

    def _remember(self, tensor: Tensor, tangent: Tensor) -> None:
        tensor_id = tensor._id
        self._tangents[tensor_id] = tangent
        if tensor_id not in self._refs:
            callback = _Forget(self._self_ref, tensor_id)
            self._refs[tensor_id] = weakref.ref(tensor, callback)

    # --- the observer protocol (core.state.Observer) ----------------------------------
    def sees(self, tensor: Tensor) -> bool:
        """Whether ``tensor`` carries a tangent in this accumulator."""
        return tensor._id in self._tangents

    def on_variable_read(self, variable: Any) -> None:
        """Nothing: an accumulator follows only the primals it was given (TF)."""

    def on_op(self, prim: Any, args: tuple, values: list, params: dict, result: Any,
              out: Any, shared: Any) -> Any:
        """How bind hands this accumulator each differentiable op: push the tangents
        through it (accumulators share nothing: ``shared`` goes back as it came)."""
        tangents = self._tangents
        ts = []
        connected = False
        for a in args:
            t = tangents.get(a._id) if isinstance(a, Tensor) else None
            if t is not None and _is_float(a.dtype):
                connected = True
            else:
                t = None  # integer tensors carry no tangent (TF: they are not trainable)
            ts.append(t)
        if not connected:
            return shared
        if prim.jvp is None:
            raise NotImplementedError(
                f"Forward-mode autodiff is not implemented for the primitive {prim.name!r}: "
                "it has a VJP rule but no JVP rule, so ForwardAccumulator / gt.jvp cannot "
                "push a tangent through it. Use a GradientTape (reverse mode) for this "
                "derivative, or give the primitive a jvp= rule."
            )
        outer_tapes = state.recording
        outer_accs = state.accumulators
        # Strict nesting: only tapes and accumulators outside this one see the JVP ops.
        state.recording = [t for t in outer_tapes if t in self._outer_tapes]
        state.accumulators = outer_accs[:outer_accs.index(self)]
        try:
            tangents_out = prim.jvp(tuple(ts), result, *args, **params)
            if prim.multiple_results:
                pairs = list(zip(result, tangents_out))
            else:
                pairs = [(result, tangents_out)]
            fixed = [(y, _fit_tangent(t, y)) for y, t in pairs]
        finally:
            state.recording = outer_tapes
            state.accumulators = outer_accs
        for y, t in fixed:
            if t is not None:
                self._remember(y, t)
        if outer_tapes and _recorded(result, outer_tapes):
            # A tape's backward may alias these ids later (forward-over-backward) after
            # the tensors themselves are gone: keep their tangents.
            for a, t in zip(args, ts):
                if t is not None:
                    self._pinned.add(a._id)
            for y, t in fixed:
                if t is not None:
                    self._pinned.add(y._id)
        return shared

    # --- results ----------------------------------------------------------------------

    def jvp(self, primals: Any,
            unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE
            ) -> Any:
        """The tangents computed for ``primals`` (a tensor or nested structure), in the
        same structure. Where none was computed: ``None``, or zeros with
        ``unconnected_gradients="zero"``. Performs no computation."""
        mode = unconnected_mode(unconnected_gradients)

        def fetch(t: Any) -> Any:
            if t is None:
                return None
            tangent = self._tangents.get(t._id) if isinstance(t, Tensor) else None
            if tangent is None and mode is UnconnectedGradients.ZERO:
                value = t._value if isinstance(t, Tensor) else convert_to_tensor(t)._value
                tangent = wrap(np.zeros_like(value))
            return tangent

        if isinstance(primals, (list, tuple, dict)):
            return nest.map_structure(fetch, primals)
        return fetch(primals)


class _Forget:
    """Weakref callback: a tensor died, so nothing can ask for its tangent any more."""

    __slots__ = ("acc_ref", "tensor_id")

    def __init__(self, acc_ref: weakref.ref, tensor_id: int):
        self.acc_ref = acc_ref
        self.tensor_id = tensor_id

    def __call__(self, _dead: Any) -> None:
        acc = self.acc_ref()
        if acc is not None and self.tensor_id not in acc._pinned:
            acc._tangents.pop(self.tensor_id, None)
            acc._refs.pop(self.tensor_id, None)


def _fit_tangent(t: Any, y: Tensor) -> Tensor | None:
    """A rule's tangent as a tensor of ``y``'s shape and dtype (``None`` stays zero).

    Rules may skip broadcasting (``add``'s tangent is the one input tangent as is)."""
    if t is None or not _is_float(y.dtype):
        return None
    if not isinstance(t, Tensor):
        t = convert_to_tensor(np.asarray(t, dtype=y.dtype))
    if t.dtype != y.dtype:
        t = cast(t, y.dtype)
    if tuple(t.shape) != tuple(y.shape):
        t = broadcast_to(t, y.shape)
    return t


def _recorded(result: Any, tapes: list) -> bool:
    """Whether any of ``tapes`` recorded the op that produced ``result``."""
    first = result[0] if isinstance(result, tuple) else result
    return any(tape.sees(first) for tape in tapes)
