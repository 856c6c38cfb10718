"""``model.compile`` / ``fit`` / ``evaluate`` / ``predict``: Python loops over batches
of NumPy arrays (or tensors, or a Dataset's), each step (a ``gt.GradientTape`` and the
compiled optimizer) run by ``model.train_function``, compiled with ``@gt.function``
unless ``run_eagerly`` (``step_functions.py``). As in Keras 3, the logs are what the
last ``train_step`` (or ``test_step``) returned; the default steps return the model's
metrics, running means over the samples since the epoch began (the loss tracker and the
compiled metrics)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .. import ops
from ..api import random
from ..core.state import state
from ..core.tensor import Tensor, convert_to_tensor
from ..tape.gradient_tape import GradientTape
from . import data_adapter
from . import losses as _losses
from . import metrics as _metrics
from . import optimizers as _optimizers
from .callbacks import CallbackList, History, batch_hooks_may_change_model
from .compile_loss import CompiledLoss, wants_compiled_loss
from .layers.base import unique_by_identity
from .saving import WeightsSaving
from .step_functions import StepFunctions, pythonify, warn_at_user

__all__ = ["History", "Trainer"]

_OPTIMIZERS = {"sgd": _optimizers.SGD, "adam": _optimizers.Adam,
               "rmsprop": _optimizers.RMSprop, "adagrad": _optimizers.Adagrad}
_LOSSES = {
    "mse": _losses.mean_squared_error, "mean_squared_error": _losses.mean_squared_error,
    "mae": _losses.mean_absolute_error, "mean_absolute_error": _losses.mean_absolute_error,
    "binary_crossentropy": _losses.binary_crossentropy,
    "categorical_crossentropy": _losses.categorical_crossentropy,
    "sparse_categorical_crossentropy": _losses.sparse_categorical_crossentropy,
    **_losses.MORE_BY_NAME,
}


def get_optimizer(identifier: Any) -> Any:
    if isinstance(identifier, str):
        cls = _OPTIMIZERS.get(identifier.lower())
        if cls is None:
            raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}; "
                             f"use one of {sorted(_OPTIMIZERS)} or an optimizer object.")
        return cls()
    return identifier


def get_loss(identifier: Any) -> Callable[..., Any] | None:
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _LOSSES:
        return _LOSSES[identifier]
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}; use one of "
                     f"{sorted(_LOSSES)}, a keras.losses object or a function.")


def _as_loss_object(loss: Any) -> _losses.Loss:
    """A compiled loss function (or name's function) as Keras wraps it: a ``Loss`` whose
    ``sum_over_batch_size`` reduction weights samples by Keras's rule."""
    if isinstance(loss, _losses.Loss):
        return loss
    return _losses.Loss(loss, name=getattr(loss, "__name__", type(loss).__name__))


def _as_batchable(data: Any) -> Any:
    """Arrays (NumPy) of the inputs, kept in their structure."""
    if data is None:
        return None
    if isinstance(data, (list, tuple)) and data and not np.isscalar(data[0]) and \
            not isinstance(data[0], (list, float, int)):
        return type(data)(_as_batchable(d) for d in data)
    if isinstance(data, dict):
        return {k: _as_batchable(v) for k, v in data.items()}
    if isinstance(data, Tensor):
        return data.numpy()
    return np.asarray(data)


def _num_samples(data: Any) -> int:
    if isinstance(data, (list, tuple)):
        return _num_samples(data[0])
    if isinstance(data, dict):
        return _num_samples(next(iter(data.values())))
    return len(data)


def _take(data: Any, index: Any) -> Any:
    if data is None:
        return None
    if isinstance(data, (list, tuple)):
        return type(data)(_take(d, index) for d in data)
    if isinstance(data, dict):
        return {k: _take(v, index) for k, v in data.items()}
    return convert_to_tensor(data[index])


def _batches(n: int, batch_size: int, order: np.ndarray | None) -> list[Any]:
    starts = range(0, n, batch_size)
    if order is None:
        return [slice(s, min(s + batch_size, n)) for s in starts]
    return [order[s:s + batch_size] for s in starts]


class Trainer(StepFunctions, WeightsSaving):
    """The training methods of ``keras.Model``."""

    def __init__(self) -> None:
        self._configure_steps(run_eagerly=False, jit_compile="auto", steps_per_execution=1)
        object.__setattr__(self, "optimizer", None)
        object.__setattr__(self, "loss", None)
        object.__setattr__(self, "_compiled_metrics", [])
        object.__setattr__(self, "_loss_tracker", None)
        object.__setattr__(self, "_metrics_in_loop", None)  # `metrics`, kept during fit
        object.__setattr__(self, "compiled", False)
        object.__setattr__(self, "stop_training", False)  # a callback's stop (fit)

    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, loss_weights: Any = None,
                metrics: list[Any] | None = None, weighted_metrics: Any = None,
                run_eagerly: bool = False, steps_per_execution: int = 1,
                jit_compile: Any = "auto", auto_scale_loss: bool = True) -> None:
        """Sets the optimizer (an object or ``"sgd"``, ``"adam"``, ``"rmsprop"``,
        ``"adagrad"``), the loss (a ``keras.losses`` object or function, or a name; for
        several outputs a list or dict of them, with ``loss_weights``) and the metrics
        (``"accuracy"``, ``"mae"``, ``"mse"`` or functions); and how the steps run
        (``run_eagerly``, ``jit_compile``, ``steps_per_execution``: Keras 3's meanings)."""
        del weighted_metrics, auto_scale_loss
        self._configure_steps(run_eagerly, jit_compile, steps_per_execution)
        object.__setattr__(self, "optimizer", get_optimizer(optimizer))
        outputs = getattr(self, "_outputs_struct", None)  # a functional model's
        if wants_compiled_loss(loss, loss_weights, outputs):
            loss = CompiledLoss(loss, loss_weights, getattr(self, "output_names", None),
                                get_loss, outputs)
        object.__setattr__(self, "loss", get_loss(loss))
        object.__setattr__(self, "_compiled_metrics",
                           [_metrics.compiled_metric(m, loss) for m in (metrics or [])])
        # float64 running sums: Keras's are float32, whose rounding only loses digits.
        object.__setattr__(self, "_loss_tracker", _metrics.Mean(name="loss", dtype="float64"))
        object.__setattr__(self, "compiled", True)

    def _require_compiled(self, what: str) -> None:
        if not self.compiled:
            raise RuntimeError(f"You must call `compile()` before calling `{what}()`.")

    # --- metrics ----------------------------------------------------------------------------
    @property
    def metrics(self) -> list[_metrics.Metric]:
        """Keras 3's order: the loss tracker and the compiled metrics (once compiled),
        then the metric objects assigned as attributes of the model and its layers."""
        found = [self._loss_tracker, *self._compiled_metrics,
                 *getattr(self.loss, "metrics", [])] if self.compiled else []
        for owner in [self, *self._flattened_sublayers()]:
            if owner is self or not isinstance(owner, Trainer):
                found.extend(_attribute_metrics(owner))
        return unique_by_identity(found)

    @property
    def metrics_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def reset_metrics(self) -> None:
        """Starts every metric of ``metrics`` over (``fit`` does at each epoch,
        ``evaluate`` at its start)."""
        for metric in self._metrics_in_loop or self.metrics:
            metric.reset_state()

    def get_metrics_result(self) -> dict[str, Any]:
        """``{metric.name: metric.result()}`` for the metrics of ``metrics``."""
        results: dict[str, Any] = {}
        for metric in self._metrics_in_loop or self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                results.update(result)
            else:
                results[metric.name] = result
        return pythonify(results)

    def compute_metrics(self, x: Any, y: Any, y_pred: Any,
                        sample_weight: Any = None) -> dict[str, Any]:
        """Updates the compiled metrics with the batch; returns ``get_metrics_result()``
        (what the default steps return)."""
        del x, sample_weight  # compiled `metrics` are not weighted, as in Keras
        for metric in self._compiled_metrics:
            metric.update_state(y, y_pred)
        return self.get_metrics_result()

    # --- steps ------------------------------------------------------------------------------
    def compute_loss(self, x: Any = None, y: Any = None, y_pred: Any = None,
                     sample_weight: Any = None, training: bool = True) -> Tensor:
        """The compiled loss (averaged over the batch) plus the sum of each of
        ``self.losses`` (weight and activity regularizers, ``add_loss``)."""
        del x, training
        terms = []
        if self.loss is not None:
            terms.append(_as_loss_object(self.loss)(y, y_pred, sample_weight=sample_weight))
        for extra in self.losses:
            if extra.dtype.kind != "f":
                extra = ops.cast(extra, "float32")
            terms.append(ops.reduce_sum(extra))
        if not terms:
            raise ValueError("No loss to compute. Provide a `loss` argument in "
                             "`compile()`, or add losses with `add_loss`.")
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def train_step(self, data: tuple) -> dict[str, Any]:
        """One update on one batch ``(x, y[, sample_weight])``, as Keras 3 passes it;
        returns ``compute_metrics(...)`` (override it to customize ``fit``). A model
        without trainable weights computes the loss and metrics and changes nothing, with
        Keras's warning."""
        x, y, sample_weight = _unpack(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
        self._loss_tracker.update_state(loss, sample_weight=_batch_size(x))
        variables = self.trainable_variables
        if variables:
            gradients = tape.gradient(loss, variables)
            self.optimizer.apply_gradients(zip(gradients, variables))
            _apply_constraints(variables)
        elif state.tracer is None:  # a compiled fit's first batch (eager) told already
            warn_at_user("The model does not have any trainable weights: the step "
                         "computed the loss and metrics and changed no weight.")
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data: tuple) -> dict[str, Any]:
        """Updates the loss tracker and the metrics with one batch ``(x, y[,
        sample_weight])`` in inference; returns ``compute_metrics(...)``."""
        x, y, sample_weight = _unpack(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight, training=False)
        self._loss_tracker.update_state(loss, sample_weight=_batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _metrics_result_or_logs(self, logs: dict[str, Any] | None) -> dict[str, Any]:
        """Keras 3: the metrics' results when the step returned exactly their names,
        else what the last step returned."""
        results = self.get_metrics_result()
        if logs is None or set(logs) == set(results):
            if logs is not None and self._loss_never_updated():
                warn_at_user(_UNTRACKED_LOSS)
            return results
        return logs

    def _loss_never_updated(self) -> bool:
        """Whether the compiled loss tracker saw no value this epoch: a custom
        ``train_step`` returning ``{"loss": loss}`` without updating it (TF's
        text-generation tutorial), whose epoch loss Keras 3 logs as the tracker's 0."""
        tracker = self._loss_tracker
        return tracker is not None and float(tracker.count.numpy()) == 0.0

    def _keeping_metrics(self, *epoch: Any) -> dict[str, Any]:
        """``_run_epoch(*epoch)`` with ``metrics`` looked up once (not at every step),
        as Keras caches it."""
        outer = self._metrics_in_loop
        object.__setattr__(self, "_metrics_in_loop", self.metrics)
        try:
            return self._run_epoch(*epoch)
        finally:
            object.__setattr__(self, "_metrics_in_loop", outer)

    def _run_epoch(self, step_function: Callable[[Iterator], Any], batches: Any,
                   callbacks: CallbackList, mode: str) -> dict[str, Any]:
        """Resets the metrics, runs ``step_function`` (``train_function``...) over the
        batches ``(x, y[, sample_weight])``, each execution between the callbacks'
        ``on_{mode}_batch_begin/end`` (until ``stop_training``); the epoch's logs."""
        self.reset_metrics()
        begin = getattr(callbacks, f"on_{mode}_batch_begin")
        end = getattr(callbacks, f"on_{mode}_batch_end")
        steps = getattr(self, "steps_per_execution", 1)
        recheck = _state_recheck(step_function, callbacks, mode)
        logs, iterator, step = None, data_adapter.Lookahead(batches), 0
        while iterator.has_next():
            begin(step)
            if recheck is not None:
                recheck()
            logs = step_function(iterator)
            end(step, logs=logs)
            step += steps
            if mode == "train" and self.stop_training:
                break
        return self._metrics_result_or_logs(logs)

    def fit(self, x: Any = None, y: Any = None, batch_size: int | None = None,
            epochs: int = 1, verbose: Any = "auto", callbacks: Any = None,
            validation_split: float = 0.0, validation_data: Any = None, shuffle: bool = True,
            class_weight: Any = None, sample_weight: Any = None, initial_epoch: int = 0,
            steps_per_epoch: Any = None, validation_steps: Any = None,
            validation_batch_size: Any = None, validation_freq: int = 1) -> History:
        """Trains for ``epochs`` passes over ``(x, y)`` in batches of ``batch_size``
        (32), shuffled each epoch with ``gt.random`` (seedable); or over a
        ``gt.data.Dataset`` of such batches (``batch_size`` None). Calls ``callbacks``
        and prints Keras's progress bar (``verbose``); returns the ``History``."""
        del class_weight
        self._require_compiled("fit")
        if data_adapter.is_dataset(x):
            data_adapter.check_dataset_arguments(x, y, sample_weight, batch_size,
                                                 validation_split)
            source = data_adapter.EpochBatches(lambda: iter(x), steps_per_epoch,
                                               data_adapter.dataset_steps(x))
        else:
            source, batch_size, validation_data = self._array_batches(
                x, y, sample_weight, batch_size, shuffle, steps_per_epoch,
                validation_split, validation_data)
        callbacks = _callback_list(callbacks, self, verbose, epochs, source.steps,
                                   history=True)
        object.__setattr__(self, "stop_training", False)
        callbacks.on_train_begin()
        logs = None
        for epoch in range(initial_epoch, epochs):
            callbacks.on_epoch_begin(epoch)
            logs = dict(self._keeping_metrics(self.make_train_function(), source.epoch(),
                                              callbacks, "train"))
            if validation_data is not None and _validates(epoch, validation_freq):
                logs.update(self._validation_logs(validation_data, validation_batch_size
                                                  or batch_size, validation_steps,
                                                  callbacks))
            callbacks.on_epoch_end(epoch, logs=logs)
            if self.stop_training or source.stopped:
                break
        callbacks.on_train_end(logs=logs)
        return callbacks._history

    def evaluate(self, x: Any = None, y: Any = None, batch_size: int | None = None,
                 verbose: Any = "auto", sample_weight: Any = None, steps: Any = None,
                 callbacks: Any = None, return_dict: bool = False) -> Any:
        """The loss (and metrics) over ``(x, y)``, in inference mode: a float, or
        ``[loss, metric, ...]`` with metrics, or a dict with ``return_dict``."""
        self._require_compiled("evaluate")
        if data_adapter.is_dataset(x):
            data_adapter.check_dataset_arguments(x, y, sample_weight, batch_size)
            batches = data_adapter.limited(iter(x), steps)
            count = steps or data_adapter.dataset_steps(x)
        else:
            x, y, sample_weight = (_as_batchable(x), _as_batchable(y),
                                   _as_batchable(sample_weight))
            indexes = _batches(_num_samples(x), batch_size or 32, None)
            count = len(indexes) if steps is None else min(steps, len(indexes))
            batches = data_adapter.limited(
                (_batch(x, y, sample_weight, index) for index in indexes), steps)
        callbacks = _callback_list(callbacks, self, verbose, 1, count)
        callbacks.on_test_begin()
        logs = self._keeping_metrics(self.make_test_function(), batches, callbacks, "test")
        callbacks.on_test_end(logs=logs)
        if return_dict:
            return logs
        return self._flatten_metrics_in_order(logs)

    def predict(self, x: Any, batch_size: int | None = None, verbose: Any = "auto",
                steps: Any = None, callbacks: Any = None) -> np.ndarray:
        """The model's outputs on ``x`` (inference mode, by batches; a Dataset's
        batches' ``x``) as a NumPy array (a list or dict of them for several outputs)."""
        if data_adapter.is_dataset(x):
            data_adapter.check_dataset_arguments(x, None, None, batch_size)
            inputs = (data_adapter.first_input(b) for b in data_adapter.limited(iter(x),
                                                                                 steps))
            count = steps or data_adapter.dataset_steps(x)
        else:
            x = _as_batchable(x)
            indexes = _batches(_num_samples(x), batch_size or 32, None)
            count = len(indexes) if steps is None else min(steps, len(indexes))
            inputs = data_adapter.limited((_take(x, index) for index in indexes), steps)
        callbacks = _callback_list(callbacks, self, verbose, 1, count)
        callbacks.on_predict_begin()
        predict_function, outputs = self.make_predict_function(), []
        batches = data_adapter.OneBatchPerCall(inputs)
        recheck = _state_recheck(predict_function, callbacks, "predict")
        while batches.next_call():
            callbacks.on_predict_batch_begin(len(outputs))
            if recheck is not None:
                recheck()
            outputs.append(predict_function(batches))
            callbacks.on_predict_batch_end(len(outputs) - 1, logs={"outputs": outputs[-1]})
        callbacks.on_predict_end()
        return _concatenated(outputs)

    def train_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None,
                       return_dict: bool = False) -> Any:
        """One ``train_step`` on the batch; what it returned. As in Keras 3 the metrics
        are not reset: the default step's values are means since the last
        ``reset_metrics()`` (or ``fit``/``evaluate``)."""
        self._require_compiled("train_on_batch")
        logs = _step_logs(self.make_train_function(), _batch(_as_batchable(x), _as_batchable(y),
                                                  _as_batchable(sample_weight), slice(None)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def test_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None,
                      return_dict: bool = False) -> Any:
        """One ``test_step`` on the batch; what it returned (metrics not reset, as
        ``train_on_batch``)."""
        self._require_compiled("test_on_batch")
        logs = _step_logs(self.make_test_function(), _batch(_as_batchable(x), _as_batchable(y),
                                                 _as_batchable(sample_weight), slice(None)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def _array_batches(self, x: Any, y: Any, sample_weight: Any, batch_size: Any,
                       shuffle: bool, steps_per_epoch: Any, validation_split: float,
                       validation_data: Any) -> tuple:
        """Arrays as ``fit`` reads them: batches per epoch (reshuffled each pass), the
        batch size, and the validation data (split off the end with
        ``validation_split``)."""
        x, y, sample_weight = (_as_batchable(x), _as_batchable(y),
                               _as_batchable(sample_weight))
        if validation_split and validation_data is None:
            x, y, sample_weight, validation_data = _split(x, y, sample_weight,
                                                          validation_split)
        n, batch_size = _num_samples(x), batch_size or 32

        def new_pass() -> Iterator[tuple]:
            for index in _batches(n, batch_size, _shuffled(n) if shuffle else None):
                yield _batch(x, y, sample_weight, index)

        source = data_adapter.EpochBatches(new_pass, steps_per_epoch,
                                           data_adapter.array_steps(n, batch_size))
        return source, batch_size, validation_data

    def _validation_logs(self, validation_data: Any, batch_size: Any, steps: Any,
                         callbacks: CallbackList) -> dict[str, Any]:
        """``evaluate`` on the validation data, with ``fit``'s callbacks (Keras 3)."""
        if data_adapter.is_dataset(validation_data):
            val = self.evaluate(validation_data, verbose=0, steps=steps, callbacks=callbacks,
                                return_dict=True)
        else:
            val = self.evaluate(*validation_data, batch_size=batch_size, verbose=0,
                                steps=steps, callbacks=callbacks, return_dict=True)
        return {f"val_{k}": v for k, v in val.items()}

    def _flatten_metrics_in_order(self, logs: dict[str, Any]) -> Any:
        """Keras 3: the values of ``metrics``' names in their order, then the other keys
        sorted; one value alone is returned bare."""
        names = self.metrics_names
        values = [logs[name] for name in names if name in logs]
        values += [logs[key] for key in sorted(logs) if key not in names]
        return values[0] if len(values) == 1 else values

    def predict_on_batch(self, x: Any) -> np.ndarray:
        outputs = self.make_predict_function()(iter((_take(_as_batchable(x), slice(None)),)))
        return np.asarray(outputs.numpy())


def _concatenated(outputs: list[Any]) -> Any:
    """The batches' outputs joined, in the outputs' structure (a list, a dict)."""
    first = outputs[0]
    if isinstance(first, (list, tuple)):
        return [_concatenated([o[i] for o in outputs]) for i in range(len(first))]
    if isinstance(first, dict):
        return {k: _concatenated([o[k] for o in outputs]) for k in first}
    return np.concatenate([np.asarray(o.numpy()) for o in outputs], axis=0)


def _batch(x: Any, y: Any, sample_weight: Any, index: Any) -> Any:
    """The batch ``index`` of each array, as ``train_step`` takes it: packed as Keras's
    ``pack_x_y_sample_weight``, so ``fit(x)`` alone hands the step ``x`` itself (a list
    of inputs as a 1-tuple), as keras-io's VAE expects."""
    if y is None and sample_weight is None:
        inputs = _take(x, index)
        return (inputs,) if isinstance(inputs, (list, tuple)) else inputs
    if sample_weight is None:
        return _take(x, index), _take(y, index)
    return _take(x, index), _take(y, index), _take(sample_weight, index)


def _unpack(data: Any) -> tuple[Any, Any, Any]:
    """Keras's ``unpack_x_y_sample_weight``."""
    if not isinstance(data, tuple):
        return data, None, None
    return (tuple(data) + (None, None))[:3]


_UNTRACKED_LOSS = (
    "The step returned {'loss': ...} but never updated the compiled loss tracker, so the "
    "epoch's logs (History, callbacks) show its 0.0, as Keras 3's do. Update a metric in "
    "train_step (self.compute_loss(...) with the default tracker, or a "
    "keras.metrics.Mean you return in `metrics`), or return the value under another key.")


def _step_logs(step_function: Callable[[Iterator], Any], data: tuple) -> dict[str, Any]:
    """What ``step_function`` (``train_function`` or ``test_function``) returned for
    the one batch ``data``."""
    return step_function(iter((data,)))


def _batch_size(x: Any) -> int:
    """The first dimension of the batch's first input (the loss tracker's weight)."""
    while isinstance(x, (list, tuple, dict)):
        x = next(iter(x.values())) if isinstance(x, dict) else x[0]
    return int(np.shape(x)[0]) if np.ndim(x) else 1


def _attribute_metrics(layer: Any) -> Iterator[_metrics.Metric]:
    """The metric objects assigned as attributes of ``layer`` (in lists and dicts too)."""
    for value in layer._attribute_leaves():
        if isinstance(value, _metrics.Metric):
            yield value


def _apply_constraints(variables: list[Any]) -> None:
    for v in variables:
        constraint = getattr(v, "_constraint", None)
        if constraint is not None:
            v.assign(constraint(v))


def _shuffled(n: int) -> np.ndarray:
    """A permutation of ``range(n)`` drawn from gt.random (so ``set_seed`` repeats it)."""
    return random.shuffle(np.arange(n)).numpy()


def _split(x: Any, y: Any, sample_weight: Any, fraction: float) -> tuple:
    """Keras's ``validation_split``: the last ``fraction`` of the samples, unshuffled."""
    n = _num_samples(x)
    cut = int(n * (1.0 - fraction))
    train, val = slice(0, cut), slice(cut, n)

    def part(data: Any, index: slice) -> Any:
        if data is None:
            return None
        if isinstance(data, (list, tuple)):
            return type(data)(part(d, index) for d in data)
        if isinstance(data, dict):
            return {k: part(v, index) for k, v in data.items()}
        return data[index]

    return part(x, train), part(y, train), part(sample_weight, train), \
        (part(x, val), part(y, val))


def _callback_list(callbacks: Any, model: Any, verbose: Any, epochs: int, steps: int,
                   history: bool = False) -> CallbackList:
    """``callbacks`` as Keras 3's ``CallbackList`` (with a ``History`` for ``fit`` and
    the progress bar unless ``verbose`` is 0); a ``CallbackList`` is used as it is."""
    if isinstance(callbacks, CallbackList):
        return callbacks
    return CallbackList(callbacks, add_history=history, add_progbar=verbose != 0,
                        model=model, verbose=verbose, epochs=epochs, steps=steps)


def _state_recheck(step_function: Any, callbacks: CallbackList,
                   mode: str) -> Callable[[], None] | None:
    """What to call before each step when a callback's batch hook may change the model's
    Python state between steps (a step function reads it once per iterator, an epoch):
    the runner's ``recheck_state``; else ``None``."""
    if not batch_hooks_may_change_model(callbacks, mode):
        return None
    return getattr(step_function, "recheck_state", None)


def _validates(epoch: int, validation_freq: Any) -> bool:
    """Keras's ``validation_freq``: every n-th epoch, or the epochs (from 1) listed."""
    if isinstance(validation_freq, int):
        return (epoch + 1) % validation_freq == 0
    return epoch + 1 in validation_freq
