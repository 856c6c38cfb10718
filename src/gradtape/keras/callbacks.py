"""``keras.callbacks``: Keras 3's ``Callback`` base and ``CallbackList``, ``History``,
``ProgbarLogger`` (``fit``'s progress bar), ``LambdaCallback``, ``TerminateOnNaN`` and
``CSVLogger``; the callbacks that watch a metric (``EarlyStopping``, ``ModelCheckpoint``,
``ReduceLROnPlateau``, ``LearningRateScheduler``) are in ``callbacks_monitor``.

``fit`` calls them in Keras 3's order: ``on_train_begin``; per epoch ``on_epoch_begin``,
``on_train_batch_begin(step)``/``on_train_batch_end(step, logs)`` (logs: the running
metrics), validation's ``on_test_*`` hooks, ``on_epoch_end(epoch, logs)`` (with the
``val_`` logs); then ``on_train_end``. ``History`` and ``ProgbarLogger`` are added after
the user's callbacks, as Keras adds them.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Callable, Iterable
from typing import Any

from .progbar import Progbar

__all__ = ["CSVLogger", "Callback", "CallbackList", "History", "LambdaCallback",
           "ProgbarLogger", "TerminateOnNaN"]

_HOOKS = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
          "on_test_begin", "on_test_end", "on_predict_begin", "on_predict_end",
          "on_train_batch_begin", "on_train_batch_end", "on_test_batch_begin",
          "on_test_batch_end", "on_predict_batch_begin", "on_predict_batch_end",
          "on_batch_begin", "on_batch_end")


class Callback:
    """Keras 3's ``keras.callbacks.Callback``: every hook does nothing; subclasses
    override the ones they need. ``self.model`` is the model being trained,
    ``self.params`` ``{"verbose", "epochs", "steps"}``."""

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}
        self._model: Any = None

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params

    def set_model(self, model: Any) -> None:
        self._model = model

    @property
    def model(self) -> Any:
        return self._model

    def on_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        """A backwards-compatibility alias for ``on_train_batch_begin``."""

    def on_batch_end(self, batch: int, logs: dict | None = None) -> None:
        """A backwards-compatibility alias for ``on_train_batch_end``."""

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        """At the start of an epoch (``fit`` only)."""

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        """At the end of an epoch; ``logs`` has the epoch's metrics and ``val_`` ones."""

    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        """Before a batch of ``evaluate`` (and of ``fit``'s validation)."""

    def on_test_batch_end(self, batch: int, logs: dict | None = None) -> None:
        """After a batch of ``evaluate``; ``logs`` are the running metrics."""

    def on_predict_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        """Before a batch of ``predict``."""

    def on_predict_batch_end(self, batch: int, logs: dict | None = None) -> None:
        """After a batch of ``predict``; ``logs`` is ``{"outputs": batch_outputs}``."""

    def on_train_begin(self, logs: dict | None = None) -> None:
        """At the start of ``fit``."""

    def on_train_end(self, logs: dict | None = None) -> None:
        """At the end of ``fit``; ``logs`` are the last epoch's."""

    def on_test_begin(self, logs: dict | None = None) -> None:
        """At the start of ``evaluate`` (and of each validation)."""

    def on_test_end(self, logs: dict | None = None) -> None:
        """At the end of ``evaluate``; ``logs`` are its results."""

    def on_predict_begin(self, logs: dict | None = None) -> None:
        """At the start of ``predict``."""

    def on_predict_end(self, logs: dict | None = None) -> None:
        """At the end of ``predict``."""


class CallbackList(Callback):
    """Keras 3's ``CallbackList(callbacks=None, add_history=False, add_progbar=False,
    model=None, **params)``: calls each hook on every callback in order."""

    def __init__(self, callbacks: Iterable[Callback] | None = None, add_history: bool = False,
                 add_progbar: bool = False, model: Any = None, **params: Any):
        super().__init__()
        self.callbacks = list(callbacks) if callbacks else []
        for callback in self.callbacks:
            if not isinstance(callback, Callback):
                raise TypeError(f"callbacks must be keras.callbacks.Callback objects; got "
                                f"{callback!r}. Subclass Callback or use LambdaCallback.")
        self._history = next((c for c in self.callbacks if isinstance(c, History)), None)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if add_progbar and not any(isinstance(c, ProgbarLogger) for c in self.callbacks):
            self.callbacks.append(ProgbarLogger())
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def append(self, callback: Callback) -> None:
        self.callbacks.append(callback)

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params
        for callback in self.callbacks:
            callback.set_params(params)

    def set_model(self, model: Any) -> None:
        self._model = model
        for callback in self.callbacks:
            callback.set_model(model)


def _broadcast(hook: str) -> Callable[..., None]:
    def call_all(self: CallbackList, *args: Any, logs: dict | None = None) -> None:
        for callback in self.callbacks:
            getattr(callback, hook)(*args, logs=logs)

    call_all.__name__ = hook
    return call_all


for _hook in _HOOKS:
    setattr(CallbackList, _hook, _broadcast(_hook))


def batch_hooks_may_change_model(callbacks: CallbackList, mode: str) -> bool:
    """Whether a callback's ``on_{mode}_batch_*`` hook is the user's code (a
    subclass's override, a ``LambdaCallback``'s function), which may change what the
    step reads between two steps. ``History``'s and the progress bar's only read."""
    hooks = [f"on_{mode}_batch_begin", f"on_{mode}_batch_end"]
    if mode == "train":
        hooks += ["on_batch_begin", "on_batch_end"]
    return any(_overrides(callback, hook) for callback in callbacks.callbacks
               if not isinstance(callback, (History, ProgbarLogger)) for hook in hooks)


def _overrides(callback: Callback, hook: str) -> bool:
    if isinstance(callback, CallbackList):
        return any(_overrides(inner, hook) for inner in callback.callbacks)
    method = getattr(callback, hook)
    return getattr(method, "__func__", None) is not getattr(Callback, hook)


class History(Callback):
    """Records each epoch's logs: ``history`` maps ``"loss"`` (each metric, each
    ``"val_..."``) to one value per epoch, ``epoch`` lists the epochs. ``fit`` adds one
    and returns it; it is ``model.history`` after each epoch."""

    def __init__(self) -> None:
        super().__init__()
        self.history: dict[str, list[Any]] = {}
        self.epoch: list[int] = []

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.epoch = []

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        object.__setattr__(self.model, "history", self)


class ProgbarLogger(Callback):
    """Prints ``fit``'s, ``evaluate``'s and ``predict``'s progress as Keras 3: an
    ``Epoch i/n`` header (when ``epochs > 1``), a live bar at ``verbose=1`` ("auto"), one
    line per epoch at ``verbose=2``. Validation inside ``fit`` prints nothing."""

    def __init__(self, count_mode: str = "steps", stateful_metrics: Any = None) -> None:
        # Keras 2's arguments (programs written for tf.keras before TF 2.16 pass them):
        # Keras 3 counts steps, and shows every metric as the running value it is given.
        del stateful_metrics
        if count_mode != "steps":
            raise ValueError(f"ProgbarLogger(count_mode={count_mode!r}): the bar counts "
                             "steps, as Keras 3's does; pass count_mode='steps' or "
                             "leave it out.")
        super().__init__()
        self.seen, self.target, self.verbose, self.epochs = 0, None, 1, 1
        self.progbar: Progbar | None = None
        self._called_in_fit = False

    def set_params(self, params: dict[str, Any]) -> None:
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._called_in_fit = True

    def on_test_begin(self, logs: dict | None = None) -> None:
        if not self._called_in_fit:
            self._reset()

    def on_predict_begin(self, logs: dict | None = None) -> None:
        self._reset()

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._reset()
        if self.verbose and self.epochs > 1:
            print(f"Epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._update(batch, logs)

    def on_test_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_predict_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._update(batch, None)  # the outputs are not shown

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self._finalize(logs)

    def on_test_end(self, logs: dict | None = None) -> None:
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_end(self, logs: dict | None = None) -> None:
        self._finalize(logs)

    def _reset(self) -> None:
        self.seen = 0
        self.progbar = Progbar(target=self.target, verbose=self.verbose, unit_name="step")

    def _update(self, batch: int, logs: dict | None) -> None:
        if self.progbar is None:
            self._reset()
        self.seen = batch + 1
        if self.verbose == 1:
            self.progbar.update(self.seen, list((logs or {}).items()), finalize=False)

    def _finalize(self, logs: dict | None) -> None:
        if self.progbar is None:
            self._reset()
        if self.target is None:
            self.target = self.progbar.target = self.seen
        self.progbar.update(self.target, list((logs or {}).items()), finalize=True)


class LambdaCallback(Callback):
    """Keras 3's ``LambdaCallback(on_epoch_begin=None, on_epoch_end=None,
    on_train_begin=None, on_train_end=None, on_train_batch_begin=None,
    on_train_batch_end=None, **kwargs)``: each given function is that hook
    (``(epoch, logs)``, ``(batch, logs)`` or ``(logs)``); ``kwargs`` may name any other
    hook."""

    def __init__(self, on_epoch_begin: Callable | None = None,
                 on_epoch_end: Callable | None = None, on_train_begin: Callable | None = None,
                 on_train_end: Callable | None = None,
                 on_train_batch_begin: Callable | None = None,
                 on_train_batch_end: Callable | None = None, **kwargs: Callable):
        super().__init__()
        given = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                 "on_train_begin": on_train_begin, "on_train_end": on_train_end,
                 "on_train_batch_begin": on_train_batch_begin,
                 "on_train_batch_end": on_train_batch_end, **kwargs}
        for hook, function in given.items():
            if hook not in _HOOKS:
                raise ValueError(f"LambdaCallback got {hook!r}, which is not a hook; "
                                 f"the hooks are {', '.join(_HOOKS)}.")
            if function is not None:
                setattr(self, hook, function)


class TerminateOnNaN(Callback):
    """Stops training when a batch's ``loss`` is NaN or infinite (Keras 3's message)."""

    def on_batch_end(self, batch: int, logs: dict | None = None) -> None:
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            object.__setattr__(self.model, "stop_training", True)


class CSVLogger(Callback):
    """Keras 3's ``CSVLogger(filename, separator=",", append=False)``: one row per epoch,
    ``epoch`` then the logs' keys sorted (``NA`` for a key missing when training was
    stopped)."""

    def __init__(self, filename: str, separator: str = ",", append: bool = False):
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self.keys: list[str] | None = None
        self._file: Any = None
        self._writer: Any = None
        self._write_header = True

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._write_header = True
        if self.append and os.path.exists(self.filename):
            with open(self.filename) as existing:
                self._write_header = not existing.readline()
        self._file = open(self.filename, "a" if self.append else "w", newline="")
        self.keys, self._writer = None, None

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = dict(logs or {})
        if self.keys is None:
            self.keys = sorted(logs)
        if getattr(self.model, "stop_training", False):
            logs = {key: logs.get(key, "NA") for key in self.keys}
        if self._writer is None:
            self._writer = csv.DictWriter(self._file, fieldnames=["epoch", *self.keys],
                                          delimiter=self.sep)
            if self._write_header:
                self._writer.writeheader()
        self._writer.writerow({"epoch": epoch, **{k: logs[k] for k in self.keys}})
        self._file.flush()

    def on_train_end(self, logs: dict | None = None) -> None:
        if self._file is not None:
            self._file.close()
            self._file, self._writer = None, None
