"""The step functions ``fit``, ``evaluate`` and ``predict`` run, as Keras 3 makes them:
``make_train_function()`` (and ``make_test_function``, ``make_predict_function``) wraps
one call of the model's ``train_step`` (its override, if the user wrote one) in
``@gt.function`` unless ``compile(run_eagerly=True)``, and keeps it in
``model.train_function``: a callable taking an iterator of batches, which runs up to
``steps_per_execution`` steps and returns the last step's logs (``None`` once the
iterator is used up).

A trace reads the model's Python state once, so the compiled step is keyed on it (the
``StateKey``): which variables are trainable, the layers' and the optimizer's plain
Python attributes (``trainable``, a ``rate``, a custom step's counters), the optimizer
and loss objects. The key is read when an epoch starts (a new iterator) and after a call
that traced; a change traces again, so no step runs on a stale value. A step that
changes that state itself on every trace (``self.steps_seen += 1``) cannot be compiled
(its compiled calls would skip the change): it runs eagerly from then on, with one
warning naming the attribute, as does a step ``@gt.function`` cannot trace.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..core.state import state, user_frame
from ..core.tensor import Tensor
from ..functions.api import function

__all__ = ["StepFunctions", "pythonify", "step_logs", "warn_at_user"]

_PLAIN = frozenset((bool, int, float, str))
# Runs in a row that changed the model's Python state before the step runs eagerly (the
# first run may set `built` and shapes once; a counter changes it every time).
_MUTATING_RUNS_TO_GIVE_UP = 2


class StepFunctions:
    """``compile``'s ``run_eagerly``/``jit_compile``/``steps_per_execution`` and the
    ``make_*_function`` methods of ``keras.Model`` (mixed into its ``Trainer``)."""

    def _configure_steps(self, run_eagerly: bool, jit_compile: Any,
                         steps_per_execution: int) -> None:
        """What ``compile`` sets; it drops the step functions made before, as Keras."""
        if not isinstance(steps_per_execution, int) or isinstance(steps_per_execution,
                                                                  bool) \
                or steps_per_execution < 1:
            raise ValueError(f"`steps_per_execution` must be a positive integer, got "
                             f"{steps_per_execution!r}.")
        if jit_compile not in (True, False, "auto"):
            raise ValueError(f"`jit_compile` must be True, False or \"auto\", got "
                             f"{jit_compile!r}.")
        if jit_compile is True and run_eagerly:
            warnings.warn("If `run_eagerly` is True, then `jit_compile` cannot also be "
                          "True. Disabling `jit_compile`.", UserWarning, stacklevel=3)
            jit_compile = False
        object.__setattr__(self, "_run_eagerly", bool(run_eagerly))
        object.__setattr__(self, "_jit_compile", jit_compile)
        object.__setattr__(self, "steps_per_execution", steps_per_execution)
        for name in ("train_function", "test_function", "predict_function"):
            object.__setattr__(self, name, None)

    @property
    def run_eagerly(self) -> bool:
        """Whether ``fit``/``evaluate``/``predict`` run their step as Python (``True``)
        or compiled with ``@gt.function`` (the default, as Keras 3's ``tf.function``)."""
        return getattr(self, "_run_eagerly", False)

    @run_eagerly.setter
    def run_eagerly(self, value: bool) -> None:
        object.__setattr__(self, "_run_eagerly", bool(value))
        for name in ("train_function", "test_function", "predict_function"):
            object.__setattr__(self, name, None)

    @property
    def jit_compile(self) -> bool:
        """Keras 3's flag (XLA); ``"auto"`` resolves to ``False``, as Keras 3 on TF
        with no GPU. It changes nothing: gradtape's one compiler is ``@gt.function``'s,
        which ``run_eagerly=False`` uses either way."""
        value = getattr(self, "_jit_compile", "auto")
        return False if value == "auto" else bool(value)

    @jit_compile.setter
    def jit_compile(self, value: Any) -> None:
        object.__setattr__(self, "_jit_compile", value)

    def predict_step(self, data: Any) -> Any:
        """The model's outputs on the batch's ``x`` in inference (override it to
        customize ``predict``)."""
        x = data[0] if type(data) is tuple else data
        return self(x, training=False)

    def make_train_function(self, force: bool = False) -> Callable[[Iterator], Any]:
        """``model.train_function``: runs ``train_step`` on the iterator's next
        ``steps_per_execution`` batches; made once (again with ``force``)."""
        return self._step_function("train_function", "train_step", force)

    def make_test_function(self, force: bool = False) -> Callable[[Iterator], Any]:
        """``model.test_function``: ``test_step`` on the next batches."""
        return self._step_function("test_function", "test_step", force)

    def make_predict_function(self, force: bool = False) -> Callable[[Iterator], Any]:
        """``model.predict_function``: ``predict_step`` on the next batches (its
        outputs, not logs)."""
        return self._step_function("predict_function", "predict_step", force)

    def _step_function(self, attribute: str, step: str, force: bool) -> Any:
        made = getattr(self, attribute, None)
        if made is None or force:
            made = StepRunner(self, step, compiled=not self.run_eagerly,
                              steps=getattr(self, "steps_per_execution", 1),
                              logs=step != "predict_step")
            object.__setattr__(self, attribute, made)
        return made


class StepRunner:
    """One of a model's step functions: ``runner(iterator)`` runs the step on up to
    ``steps`` batches and returns what the last returned (checked logs for ``fit`` and
    ``evaluate``), or ``None`` if the iterator had no batch left."""

    def __init__(self, model: Any, step: str, compiled: bool, steps: int, logs: bool):
        self.model, self.step, self.steps, self.logs = model, step, steps, logs
        self.__name__ = step
        self.compiled = None
        if compiled:
            def one_step(data: Any, _state: int) -> Any:
                # Looked up as it traces: the user's override of the step is what runs.
                outputs = getattr(model, step)(data)
                if isinstance(outputs, Mapping) and not isinstance(outputs, dict):
                    outputs = dict(outputs)  # a trace returns dicts, not other mappings
                return outputs

            self.compiled = function(one_step, name=step)
        # A batch runs eagerly when the state key is new (the first batch, a change of
        # `trainable`...): that builds the model, the optimizer's slots and the metrics
        # (Keras 3's symbolic build before fit), so a trace never creates a variable
        # (it would trace twice, a Python side effect showing twice, or fail).
        self._ran_key: Any = None
        self._iterator: Any = None
        self._key: int | None = None  # the number of the state now (see _read_key)
        self._states: dict[tuple, int] = {}
        self._numbers = 0
        self._trainable_now: tuple = ()
        self._mutating_runs = 0

    def __call__(self, iterator: Iterator[Any]) -> Any:
        if iterator is not self._iterator:  # a new epoch: read the Python state again
            self._iterator = iterator
            if not self._read_key_trainable():
                # Nothing to train: the first batch runs eagerly, so that each fit (and
                # train_on_batch) warns it, as an eager step does (not just the trace).
                self._ran_key = None
        result = None
        for _ in range(self.steps):
            data = next(iterator, _END)
            if data is _END:
                break
            result = self.run_one(data)
        return result

    def recheck_state(self) -> None:
        """Something outside the step (a callback's batch hook) may have changed the
        model's Python state: the next step reads the key again."""
        self._key = None

    def run_one(self, data: Any) -> Any:
        """The step on one batch (compiled, unless it must run eagerly)."""
        compiled = self.compiled
        if compiled is None:
            outputs = getattr(self.model, self.step)(data)
        else:
            key = self._read_key() if self._key is None else self._key
            if key != self._ran_key:
                outputs = getattr(self.model, self.step)(data)
                self._check_state(key)
            else:
                traces = compiled._tracing_count
                outputs = compiled(data, key)
                if compiled._tracing_count != traces:
                    self._check_state(key)
                if compiled._eager_reason is not None:
                    self._give_up(compiled._eager_reason)
        return step_logs(self.step, outputs) if self.logs else outputs

    def _read_key_trainable(self) -> bool:
        """Reads the key; whether the model has trainable variables."""
        self._read_key()
        return bool(self._trainable_now)

    def _read_key(self) -> int:
        """The state's number: the compiled step takes it as a Python argument (its
        signature), a small int rather than the long tuple walked at every call."""
        state, states = state_key(self.model), self._states
        self._trainable_now = state[1]
        number = states.get(state)
        if number is None:
            if len(states) >= _STATES_KEPT:  # bounded; numbers are never reused
                states.clear()
            number = states[state] = self._numbers
            self._numbers += 1
        self._key = number
        return number

    def _check_state(self, key: int) -> None:
        """The step's Python ran (eagerly or tracing): if it changed the state the key
        holds, the next call reads the new state; a step that does so every time runs
        eagerly (compiled, it would change it only when traced)."""
        after = self._ran_key = self._read_key()
        if after == key:
            self._mutating_runs = 0
            return
        self._mutating_runs += 1
        if self._mutating_runs >= _MUTATING_RUNS_TO_GIVE_UP:
            by_number = {number: state for state, number in self._states.items()}
            changed = ", ".join(changed_attributes(by_number.get(key, ((),)),
                                                   by_number[after])) or "its Python state"
            self._give_up(
                f"`{self.step}` changes {changed} each time it runs; compiled, it "
                f"would change only when traced. Keep such state in a variable "
                f"(`self.count.assign_add(1)`) to compile the step")

    def _give_up(self, why: str) -> None:
        self.compiled = None
        warn_at_user(f"{type(self.model).__name__}.{self.step} runs eagerly (as with "
                     f"`compile(run_eagerly=True)`) from now on: {why}")


_END = object()
_STATES_KEPT = 256


def warn_at_user(message: str) -> None:
    """A ``UserWarning`` at the user's line that called into gradtape (``fit``...),
    however deep the step (eager, or tracing) that warns."""
    frame = user_frame(sys._getframe(1))
    if frame is None:
        warnings.warn(message, UserWarning, stacklevel=2)
        return
    # The user's module's registry, as `warnings.warn` keeps it: shown once per line.
    warnings.warn_explicit(message, UserWarning, frame.f_code.co_filename,
                           frame.f_lineno, module=frame.f_globals.get("__name__"),
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))


def state_key(model: Any) -> tuple:
    """What a step's trace read from Python that can change between calls: the plain
    attributes of the model, its layers, its optimizer and their user-defined classes
    (by owner and name), which variables are trainable, the optimizer and loss objects."""
    owners: list[Any] = [model, *model._flattened_sublayers()]
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None:
        owners.append(optimizer)
    # The user's classes too (a counter kept as a class attribute).
    owners += [cls for owner in owners[:] for cls in type(owner).__mro__
               if not cls.__module__.startswith(("gradtape.", "builtins"))]
    plain = tuple((index, name, value) for index, owner in enumerate(owners)
                  for name, value in vars(owner).items() if value.__class__ in _PLAIN)
    trainable = tuple(map(id, model.trainable_variables))
    return plain, trainable, id(optimizer), id(getattr(model, "loss", None))


def changed_attributes(before: tuple, after: tuple) -> list[str]:
    """The attributes (``self.name``) whose values differ between two keys."""
    old = {(i, name): value for i, name, value in before[0]}
    new = {(i, name): value for i, name, value in after[0]}
    return sorted({f"`self.{name}`" for (i, name) in old.keys() | new.keys()
                   if old.get((i, name)) != new.get((i, name))})


def step_logs(step: str, logs: Any) -> dict[str, Any]:
    """What ``step`` (``train_step`` or ``test_step``) returned, as logs. Keras 3 reads
    them with ``.items()`` and crashes on anything else (``None``, a list, a bare
    tensor) with an ``AttributeError``; this says what to return instead."""
    if not isinstance(logs, Mapping):
        raise TypeError(
            f"`{step}` returned {_described(logs)}; it must return a dict of metric "
            f"values, such as `{{\"loss\": loss}}` or `self.compute_metrics(x, y, "
            f"y_pred, sample_weight)` (fit and evaluate log them by name).")
    return pythonify(logs)


def _described(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, Tensor):
        return f"a bare tensor ({value.dtype.name}, shape {tuple(value.shape)})"
    return f"a {type(value).__name__}"


def pythonify(logs: Mapping[str, Any]) -> dict[str, Any]:
    """Keras 3's logs: sorted by key, nested dicts merged, values as Python floats
    (those that convert). While a step traces they stay tensors (a float would be a
    value read the trace guards on), as Keras's stay symbolic in a ``tf.function``."""
    result: dict[str, Any] = {}
    tracing = state.tracer is not None
    for key, value in sorted(logs.items()):
        if isinstance(value, dict):
            result.update(pythonify(value))
            continue
        if not tracing:
            try:
                value = float(value)
            except (TypeError, ValueError):
                pass
        result[key] = value
    return result
