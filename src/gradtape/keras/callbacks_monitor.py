"""The callbacks that watch a logged metric or set the learning rate, with Keras 3's
rules: ``EarlyStopping``, ``ModelCheckpoint`` (on gradtape's checkpoint format),
``ReduceLROnPlateau`` and ``LearningRateScheduler``."""

from __future__ import annotations

import numbers
import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .callbacks import Callback

__all__ = ["EarlyStopping", "LearningRateScheduler", "ModelCheckpoint", "ReduceLROnPlateau"]

# Keras 3 reads a metric's direction from the metric object (`_direction`); these are the
# names of the compiled metrics that go up.
_RISING = ("acc", "auc", "precision", "recall", "f1", "iou")


def _less(a: float, b: float) -> bool:
    return bool(np.less(a, b))


def _greater(a: float, b: float) -> bool:
    return bool(np.greater(a, b))


def _rises(model: Any, metric_name: str) -> bool | None:
    """Whether the metric ``metric_name`` of ``model`` improves upwards (None: unknown)."""
    if metric_name == "loss":
        return False
    for metric in getattr(model, "metrics", None) or []:
        if getattr(metric, "name", None) == metric_name:
            direction = getattr(metric, "_direction", None)
            if direction is not None:
                return direction == "up"
            break
    if any(word in metric_name for word in _RISING):
        return True
    if "loss" in metric_name or "error" in metric_name or metric_name in (
            "mse", "mae", "mape", "msle", "rmse"):
        return False
    return None


class MonitorCallback(Callback):
    """Keras 3's base of the callbacks that monitor ``monitor`` in ``mode`` ("auto":
    down for a loss or error, up for accuracy-like metrics)."""

    def __init__(self, monitor: str = "val_loss", mode: str = "auto",
                 baseline: float | None = None, min_delta: float = 0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"{type(self).__name__} mode '{mode}' is unknown, fallback to "
                          "auto mode.", stacklevel=3)
            mode = "auto"
        self.monitor, self.mode, self.best = monitor, mode, baseline
        self.min_delta = abs(min_delta)
        self.monitor_op: Callable[[float, float], bool] | None = None

    def _set_monitor_op(self) -> None:
        if self.mode == "auto":
            rises = _rises(self.model, self.monitor.removeprefix("val_"))
            if rises is None:
                raise ValueError(
                    f"{type(self).__name__} callback received monitor={self.monitor}, "
                    "but Keras isn't able to automatically determine whether that metric "
                    "should be maximized or minimized. Pass `mode='max'` in order to "
                    "monitor based on the highest metric value, or pass `mode='min'` in "
                    "order to use the lowest value.")
        else:
            rises = self.mode == "max"
        self.monitor_op = _greater if rises else _less
        if not rises:
            self.min_delta = -self.min_delta
        if self.best is None:
            self.best = -np.inf if rises else np.inf

    def _is_improvement(self, value: float, reference: float | None) -> bool:
        if reference is None:
            return True
        return self.monitor_op(value - self.min_delta, reference)


class EarlyStopping(MonitorCallback):
    """Keras 3's ``EarlyStopping(monitor="val_loss", min_delta=0, patience=0, verbose=0,
    mode="auto", baseline=None, restore_best_weights=False, start_from_epoch=0)``: sets
    ``model.stop_training`` once ``patience`` epochs passed without an improvement of
    more than ``min_delta`` (an improvement that does not beat ``baseline`` does not
    reset the wait)."""

    def __init__(self, monitor: str = "val_loss", min_delta: float = 0, patience: int = 0,
                 verbose: int = 0, mode: str = "auto", baseline: float | None = None,
                 restore_best_weights: bool = False, start_from_epoch: int = 0):
        super().__init__(monitor, mode, None, min_delta)
        self.patience, self.verbose, self.baseline = patience, verbose, baseline
        self.restore_best_weights, self.start_from_epoch = restore_best_weights, start_from_epoch
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best_weights: list[np.ndarray] | None = None

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best_weights = None

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.monitor_op is None:
            self._set_monitor_op()
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights, self.best_epoch = self.model.get_weights(), epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs: dict | None = None) -> None:
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print("Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)

    def get_monitor_value(self, logs: dict | None) -> Any:
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is "
                          f"not available. Available metrics are: {','.join(logs)}",
                          stacklevel=2)
        return value


class ModelCheckpoint(MonitorCallback):
    """Keras 3's ``ModelCheckpoint(filepath, monitor="val_loss", verbose=0,
    save_best_only=False, save_weights_only=False, mode="auto", save_freq="epoch",
    initial_value_threshold=None)``, writing gradtape's checkpoint format (``gt.train``'s
    files, atomically) at ``filepath`` formatted with ``epoch`` (from 1), ``batch`` and the
    logs (``"w-{epoch:02d}-{val_loss:.2f}"``). ``model.load_weights(path)`` reads it.
    With ``save_weights_only=False`` the optimizer's state is saved with the weights (the
    architecture is not: gradtape has no ``model.save``). Any suffix is accepted: Keras's
    ``.weights.h5`` and ``.keras`` names hold gradtape's files, not HDF5 or zip."""

    def __init__(self, filepath: str, monitor: str = "val_loss", verbose: int = 0,
                 save_best_only: bool = False, save_weights_only: bool = False,
                 mode: str = "auto", save_freq: Any = "epoch",
                 initial_value_threshold: float | None = None):
        super().__init__(monitor, mode, initial_value_threshold)
        if save_freq != "epoch" and (isinstance(save_freq, bool)
                                     or not isinstance(save_freq, int)):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are "
                             "'epoch' or integer values")
        self.filepath, self.verbose = os.fspath(filepath), verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self.save_freq = save_freq
        self._batches_since_saving = self._last_batch_seen = self._current_epoch = 0

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._current_epoch = epoch

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if self._should_save_on_batch(batch):
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.monitor_op is None:
            self._set_monitor_op()
        if self.save_freq == "epoch":
            self._save_model(epoch, None, logs)

    def _should_save_on_batch(self, batch: int) -> bool:
        if self.save_freq == "epoch":
            return False
        new_epoch = batch <= self._last_batch_seen
        self._batches_since_saving += batch + 1 if new_epoch else batch - self._last_batch_seen
        self._last_batch_seen = batch
        if self._batches_since_saving >= self.save_freq:
            self._batches_since_saving = 0
            return True
        return False

    def _should_save(self, epoch: int, logs: dict, filepath: str) -> bool:
        if not self.save_best_only:
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: saving model to {filepath}")
            return True
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.",
                          stacklevel=2)
            return True
        best = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(current, self.best):
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to "
                      f"{current:.5f}, saving model to {filepath}")
            self.best = current
            return True
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}")
        return False

    def _save_model(self, epoch: int, batch: int | None, logs: dict | None) -> None:
        logs = dict(logs or {})
        filepath = self._file_path(epoch, batch, logs)
        if os.path.isdir(filepath):
            raise OSError("Please specify a non-directory filepath for ModelCheckpoint. "
                          f"Filepath used is an existing directory: {filepath}")
        if not self._should_save(epoch, logs, filepath):
            return
        directory = os.path.dirname(filepath)
        if directory:
            os.makedirs(directory, exist_ok=True)
        self.model.save_weights(filepath, overwrite=True,
                                _with_optimizer=not self.save_weights_only)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {filepath}")

    def _file_path(self, epoch: int, batch: int | None, logs: dict) -> str:
        fields = dict(logs, epoch=epoch + 1)
        if batch is not None and "batch" not in logs:
            fields["batch"] = batch + 1
        try:
            return self.filepath.format(**fields)
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". '
                           f"Reason: {e}; the logs have {sorted(logs)} (and `epoch`"
                           f"{', `batch`' if batch is not None else ''}).") from None


def _learning_rate(model: Any) -> float:
    return float(np.asarray(model.optimizer.learning_rate))


class LearningRateScheduler(Callback):
    """Keras 3's ``LearningRateScheduler(schedule, verbose=0)``: at each epoch's start
    sets the optimizer's learning rate to ``schedule(epoch, lr)`` (or ``schedule(epoch)``);
    logs ``learning_rate`` at its end."""

    def __init__(self, schedule: Callable[..., Any], verbose: int = 0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        if not hasattr(self.model.optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        lr = _learning_rate(self.model)
        try:
            lr = self.schedule(epoch, lr)
        except TypeError:  # a schedule of the epoch alone (Keras's fallback)
            lr = self.schedule(epoch)
        if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
            raise ValueError(f"The output of the `schedule` function should be a float. "
                             f"Got: {lr}")
        self.model.optimizer.learning_rate = lr
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                  f"{lr}.")

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if logs is not None:
            logs["learning_rate"] = _learning_rate(self.model)


class ReduceLROnPlateau(MonitorCallback):
    """Keras 3's ``ReduceLROnPlateau(monitor="val_loss", factor=0.1, patience=10,
    verbose=0, mode="auto", min_delta=1e-4, cooldown=0, min_lr=0.0)``: multiplies the
    learning rate by ``factor`` (not below ``min_lr``) after ``patience`` epochs without
    an improvement of ``min_delta``, then waits ``cooldown`` epochs. Its "auto" mode is
    Keras's: up when ``"acc"`` is in the name, else down."""

    def __init__(self, monitor: str = "val_loss", factor: float = 0.1, patience: int = 10,
                 verbose: int = 0, mode: str = "auto", min_delta: float = 1e-4,
                 cooldown: int = 0, min_lr: float = 0.0, **kwargs: Any):
        super().__init__(monitor, mode, None, min_delta)
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0. "
                             f"Received factor={factor}")
        self.factor, self.patience, self.verbose = factor, patience, verbose
        self.cooldown, self.min_lr = cooldown, min_lr
        self._reset()

    def _reset(self) -> None:
        rises = self.mode == "max" or (self.mode == "auto" and "acc" in self.monitor)
        delta = abs(self.min_delta)
        if rises:
            self.monitor_op, self.best = (lambda a, b: _greater(a, b + delta)), -np.inf
        else:
            self.monitor_op, self.best = (lambda a, b: _less(a, b - delta)), np.inf
        self.cooldown_counter = self.wait = 0

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._reset()

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = logs if logs is not None else {}
        logs["learning_rate"] = _learning_rate(self.model)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric "
                          f"`{self.monitor}` which is not available. Available metrics "
                          f"are: {','.join(logs)}.", stacklevel=2)
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                self._reduce(epoch)

    def _reduce(self, epoch: int) -> None:
        old_lr = _learning_rate(self.model)
        if old_lr > np.float32(self.min_lr):
            new_lr = max(old_lr * self.factor, self.min_lr)
            self.model.optimizer.learning_rate = new_lr
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to "
                      f"{new_lr}.")
            self.cooldown_counter, self.wait = self.cooldown, 0
