"""The optimizer base class: Keras's ``apply_gradients`` / ``minimize`` loop machinery.

Subclasses only write ``update_step(gradient, variable, learning_rate)``, as in Keras 3
(keras/src/optimizers/base_optimizer.py). Updates are built from gradtape ops and land in
variables through ``Variable.assign*``, which replace the held array rather than writing
into it: a tape that recorded a variable's old value still sees that value.
"""

from __future__ import annotations

import inspect
import numbers
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..core.tensor import Tensor, constant
from ..core.variable import Variable
from ..ops import cast
from .dask_steps import computed_together, persist_lazy_variables
from .schedules import LearningRateSchedule


def _takes_step(fn: Callable[..., Any]) -> bool:
    """Whether a learning-rate callable wants the step (Keras also accepts zero-argument
    callables, which it calls with nothing)."""
    if isinstance(fn, LearningRateSchedule):
        return True
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    required = [p for p in params
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
                and p.default is p.empty]
    return bool(required)


class Optimizer:
    """Base class of gradtape's optimizers (``keras.optimizers.Optimizer``).

    Args:
        learning_rate: a float, a ``schedules.LearningRateSchedule``, or a callable. A
            callable taking one argument is called with the step (``iterations``, the
            number of updates applied so far); one taking none is called without.
        name: prefix of the optimizer's variable names.
    """

    def __init__(self, learning_rate: Any, name: str | None = None):
        self.name = name if name is not None else type(self).__name__
        # int64 like TF's Keras; a Variable so that a traced step reads it as an input.
        self._iterations = Variable(0, dtype=np.int64, trainable=False,
                                    name=f"{self.name}/iteration")
        self._variables: list[Variable] = [self._iterations]
        self._slots: dict[int, dict[str, Variable]] = {}
        # Checkpoint values for slots not created yet, by (variable id, slot name): run
        # by add_slot on the new slot (TF's deferred restoration of slot variables).
        self._slot_restores: dict[tuple[int, str], Callable[[Variable], None]] = {}
        self._learning_rate: Any = None
        self._lr_takes_step = False
        self._set_learning_rate(learning_rate)

    # --- learning rate ------------------------------------------------------------------
    def _set_learning_rate(self, learning_rate: Any) -> None:
        if callable(learning_rate):
            self._learning_rate = learning_rate
            self._lr_takes_step = _takes_step(learning_rate)
            return
        if isinstance(self._learning_rate, LearningRateSchedule):
            raise TypeError(
                "This optimizer was created with a `LearningRateSchedule` object as its "
                "`learning_rate` constructor argument, hence its learning rate is not "
                "settable. Create the optimizer with a float `learning_rate` instead."
            )
        if isinstance(learning_rate, Tensor):
            learning_rate = learning_rate.numpy()
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, numbers.Real):
            raise ValueError(
                "Argument `learning_rate` should be float, or an instance of "
                "LearningRateSchedule, or a callable (that takes in the current iteration "
                f"value and returns the corresponding learning rate value). Received "
                f"instead: learning_rate={learning_rate!r}"
            )
        if isinstance(self._learning_rate, Variable):
            self._learning_rate.assign(float(learning_rate))
            return
        # float32 like Keras (floatx): update_step casts it to each variable's dtype.
        self._learning_rate = Variable(float(learning_rate), dtype=np.float32,
                                       trainable=False, name=f"{self.name}/learning_rate")
        self._variables.append(self._learning_rate)

    @property
    def learning_rate(self) -> Tensor:
        """The learning rate the next update uses (a schedule evaluated at ``iterations``)."""
        lr = self._learning_rate
        if isinstance(lr, Variable):
            return lr
        value = lr(self._iterations) if self._lr_takes_step else lr()
        return value if isinstance(value, Tensor) else constant(np.float32(value))

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        self._set_learning_rate(value)

    @property
    def iterations(self) -> Variable:
        """How many updates were applied (an int64 variable, as in TF's Keras)."""
        return self._iterations

    @property
    def variables(self) -> list[Variable]:
        """The optimizer's own state: iterations, learning rate, then per-variable slots."""
        return list(self._variables)

    # --- per-variable state ---------------------------------------------------------------
    def build(self, var_list: Iterable[Variable]) -> None:
        """Create the slots of every variable now (they are otherwise made on first use)."""
        for v in var_list:
            self._build_variable(_check_variable(v))

    def _build_variable(self, variable: Variable) -> None:
        """Create ``variable``'s slots with ``add_slot``; subclasses override."""

    def add_slot(self, variable: Variable, slot_name: str, initial_value: float = 0.0
                 ) -> Variable:
        """A non-trainable variable shaped like ``variable`` holding optimizer state."""
        slots = self._slots.setdefault(variable._id, {})
        slot = slots.get(slot_name)
        if slot is None:
            base = variable.name.rsplit(":", 1)[0]
            slot = Variable(np.full(variable.shape, initial_value, variable.dtype),
                            trainable=False, name=f"{self.name}/{base}_{slot_name}")
            slots[slot_name] = slot
            self._variables.append(slot)
            if self._slot_restores:  # a checkpoint value waits for this slot
                restore = self._slot_restores.pop((variable._id, slot_name), None)
                if restore is not None:
                    restore(slot)
        return slot

    def get_slot(self, variable: Variable, slot_name: str) -> Variable:
        """The slot ``slot_name`` (e.g. ``"momentum"``) of ``variable``."""
        try:
            return self._slots[variable._id][slot_name]
        except KeyError:
            names = sorted(self._slots.get(variable._id, {}))
            raise KeyError(
                f"No slot {slot_name!r} for variable {variable.name!r}; it has {names}. "
                "Slots are created on the first update (or by build)."
            ) from None

    def _slot(self, variable: Variable, slot_name: str) -> Variable:
        slots = self._slots.get(variable._id)
        if slots is None:
            self._build_variable(variable)
            slots = self._slots[variable._id]
        return slots[slot_name]

    # --- checkpoints (gt.train.Checkpoint) ------------------------------------------------
    def _checkpoint_children(self) -> list[tuple[str, Variable]]:
        """The optimizer's own variables by checkpoint name (its slots are named by the
        variable they belong to, by the checkpoint)."""
        children = [("iterations", self._iterations)]
        if isinstance(self._learning_rate, Variable):
            children.append(("learning_rate", self._learning_rate))
        return children

    def _checkpoint_slots(self) -> list[tuple[int, str, Variable]]:
        """``(variable id, slot name, slot)`` for every slot made so far."""
        return [(variable_id, name, slot) for variable_id, slots in self._slots.items()
                for name, slot in slots.items()]

    def _defer_slot_restore(self, variable: Variable, slot_name: str,
                            restore: Callable[[Variable], None]) -> Any:
        """Run ``restore(slot)`` on ``variable``'s slot ``slot_name`` now if it exists,
        else when ``add_slot`` creates it. Returns the restore this one replaced."""
        slot = self._slots.get(variable._id, {}).get(slot_name)
        if slot is not None:
            restore(slot)
            return None
        replaced = self._slot_restores.get((variable._id, slot_name))
        self._slot_restores[(variable._id, slot_name)] = restore
        return replaced

    # --- updates ----------------------------------------------------------------------------
    def update_step(self, gradient: Tensor, variable: Variable, learning_rate: Tensor) -> None:
        """Update ``variable`` (and its slots) from ``gradient``; both of its dtype."""
        raise NotImplementedError(f"{type(self).__name__} must implement update_step.")

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, Variable]]) -> Variable:
        """Apply one update per ``(gradient, variable)`` pair and count one iteration.

        ``None`` gradients are skipped with a warning, as Keras does; if every gradient
        is ``None`` this raises ``ValueError``. Returns ``iterations``.
        """
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("No gradients provided for any variable: [].")
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(
                    "apply_gradients takes (gradient, variable) pairs, e.g. "
                    f"zip(grads, variables); got {pair!r}."
                )
        grads = [g for g, _ in pairs]
        variables = [v for _, v in pairs]
        self.apply(grads, variables)
        return self._iterations

    def apply(self, grads: Iterable[Any], trainable_variables: Iterable[Variable]) -> None:
        """Keras 3's ``apply``: ``grads[i]`` updates ``trainable_variables[i]``. Empty
        lists are a no-op (no iteration is counted), as in Keras 3."""
        grads, variables = list(grads), list(trainable_variables)
        if not grads and not variables:
            return
        if len(grads) != len(variables):
            raise ValueError(
                f"Got {len(grads)} gradients for {len(variables)} variables; pass one "
                "gradient (or None) per variable."
            )
        for v in variables:
            _check_variable(v)
        grads, variables = _filter_empty_gradients(grads, variables)
        grads = computed_together(grads, variables)
        lr = self.learning_rate
        lr_by_dtype: dict[np.dtype, Tensor] = {}
        for g, v in zip(grads, variables):
            g = _as_gradient(g, v)
            if v.dtype not in lr_by_dtype:
                lr_by_dtype[v.dtype] = cast(lr, v.dtype)
            self.update_step(g, v, lr_by_dtype[v.dtype])
        persist_lazy_variables(variables)
        self._iterations.assign_add(1)

    def minimize(self, loss: Any, var_list: Any, tape: Any = None) -> Variable:
        """Compute gradients of ``loss`` with a ``GradientTape`` and apply them.

        ``loss`` is a zero-argument callable (or a tensor computed under ``tape``);
        ``var_list`` a list of variables or a callable returning one. Returns
        ``iterations``.
        """
        from ..tape.gradient_tape import GradientTape

        if not callable(loss) and tape is None:
            raise ValueError(
                "`tape` is required when a `Tensor` loss is passed. Pass a zero-argument "
                "callable as `loss`, or the GradientTape that computed it as `tape`."
            )
        if callable(loss):
            tape = GradientTape() if tape is None else tape
            with tape:
                if not callable(var_list):
                    tape.watch(list(var_list))
                loss = loss()
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list))

    def __repr__(self) -> str:
        return f"<gt.optimizers.{type(self).__name__} name={self.name!r}>"


def _check_variable(v: Any) -> Variable:
    if not isinstance(v, Variable):
        raise TypeError(
            f"Optimizers update gt.Variable objects, got {type(v).__name__}: {v!r}. Hold "
            "trainable values in gt.Variable."
        )
    return v


def _filter_empty_gradients(grads: list[Any], variables: list[Variable]):
    kept = [(g, v) for g, v in zip(grads, variables) if g is not None]
    if not kept:
        names = [v.name for v in variables]
        raise ValueError(f"No gradients provided for any variable: {names}.")
    if len(kept) < len(grads):
        missing = [v.name for g, v in zip(grads, variables) if g is None]
        warnings.warn(
            f"Gradients do not exist for variables {missing} when minimizing the loss.",
            UserWarning,
            stacklevel=4,
        )
    return [g for g, _ in kept], [v for _, v in kept]


def _as_gradient(g: Any, variable: Variable) -> Tensor:
    """``g`` as a tensor of the variable's dtype and shape (Keras casts it too)."""
    if not isinstance(g, Tensor):
        g = constant(np.asarray(g), dtype=variable.dtype)
    elif g.dtype != variable.dtype:
        g = cast(g, variable.dtype)
    if tuple(g.shape) != tuple(variable.shape):
        raise ValueError(
            f"Gradient of shape {tuple(g.shape)} given for variable {variable.name!r} of "
            f"shape {tuple(variable.shape)}; they must match."
        )
    return g
