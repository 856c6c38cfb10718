"""``compile(loss=...)`` for a model with several outputs, as Keras 3's
``CompileLoss``: one loss per output (a list in the outputs' order, or a dict by output
name), one loss for every output, ``None`` for an output without a loss, and
``loss_weights`` (a list or dict) scaling each. The total is the weighted sum; each
output's unweighted loss is tracked as ``"<output name>_loss"`` when there are several."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.tensor import Tensor
from . import losses as _losses
from . import metrics as _metrics

__all__ = ["CompiledLoss", "wants_compiled_loss"]


def wants_compiled_loss(loss: Any, loss_weights: Any, outputs: Any) -> bool:
    """Whether ``compile``'s loss needs the per-output form: a list or dict of losses,
    ``loss_weights``, or a model of several outputs (one loss then applies to each)."""
    several = isinstance(outputs, (list, tuple, dict)) and len(outputs) > 1
    return isinstance(loss, (list, tuple, dict)) or loss_weights is not None or \
        (several and loss is not None)


class _Term:
    def __init__(self, key: Any, loss: _losses.Loss, weight: Any, name: str):
        self.key, self.loss, self.weight, self.name = key, loss, weight, name
        self.tracker = _metrics.Mean(name=f"{name}_loss", dtype="float64")


class CompiledLoss(_losses.Loss):
    """The weighted sum of the per-output losses (built at the first call, when the
    outputs' structure is known)."""

    def __init__(self, loss: Any, loss_weights: Any, output_names: list[str] | None,
                 resolve: Callable[[Any], Any], outputs: Any = None):
        super().__init__(_unused, name="loss")
        self._user_loss, self._user_weights = loss, loss_weights
        self._output_names = output_names
        self._resolve = resolve
        self._terms: list[_Term] | None = None
        if outputs is not None:  # a functional model: its outputs are known now
            self._build(outputs if isinstance(outputs, (list, tuple, dict)) else [outputs])

    @property
    def metrics(self) -> list[_metrics.Metric]:
        """The per-output loss trackers (none for a single loss)."""
        terms = self._terms or []
        return [t.tracker for t in terms] if len(terms) > 1 else []

    def _names(self, y_pred: Any) -> list[Any]:
        if isinstance(y_pred, dict):
            return list(y_pred)
        count = len(y_pred) if isinstance(y_pred, (list, tuple)) else 1
        names = self._output_names or []
        return names if len(names) == count else [f"output_{i}" for i in range(count)]

    def _build(self, y_pred: Any) -> None:
        names = self._names(y_pred)
        keys = list(y_pred) if isinstance(y_pred, dict) else list(range(len(names)))
        losses = _per_output(self._user_loss, names, keys, "loss")
        weights = (_per_output(self._user_weights, names, keys, "loss_weights")
                   if self._user_weights is not None else [None] * len(keys))
        self._terms = [_Term(key, _as_loss(self._resolve(loss)), weight, str(name))
                       for key, name, loss, weight in zip(keys, names, losses, weights)
                       if loss is not None]

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Tensor:
        single = not isinstance(y_pred, (list, tuple, dict))
        if self._terms is None:
            self._build([y_pred] if single else y_pred)
        if single:
            y_pred, y_true, sample_weight = [y_pred], [y_true], [sample_weight]
        y_true = self._matched_targets(y_true, y_pred)
        total = None
        for term in self._terms:
            weight_of_samples = (sample_weight[term.key]
                                 if isinstance(sample_weight, (list, tuple, dict))
                                 else sample_weight)
            value = term.loss(y_true[term.key], y_pred[term.key],
                              sample_weight=weight_of_samples)
            term.tracker.update_state(value, sample_weight=_rows(y_pred[term.key]))
            if term.weight is not None:
                value = value * term.weight
            total = value if total is None else total + value
        if total is None:
            raise ValueError("No loss to compute: every output's loss is None.")
        return total

    def _matched_targets(self, y_true: Any, y_pred: Any) -> Any:
        """``y_true`` indexed like ``y_pred`` (a dict of targets by output name for a
        list of outputs works too, as in Keras 3)."""
        if isinstance(y_pred, (list, tuple)) and isinstance(y_true, dict):
            names = self._names(y_pred)
            return [y_true[name] for name in names]
        if isinstance(y_pred, (list, tuple)) and not isinstance(y_true, (list, tuple)):
            raise ValueError(f"The model has {len(y_pred)} outputs: pass `y` as a list "
                             "(or a dict by output name) of as many targets.")
        return y_true


def _unused(y_true: Any, y_pred: Any) -> Any:
    raise AssertionError("CompiledLoss computes its terms itself")


def _per_output(value: Any, names: list[Any], keys: list[Any], what: str) -> list[Any]:
    """One entry per output of ``value`` (a list, a dict by name, or one for all)."""
    if isinstance(value, dict):
        unknown = sorted(set(value) - {str(n) for n in names})
        if unknown:
            raise ValueError(f"Expected keys {[str(n) for n in names]} in the `{what}` "
                             f"dict, but found {unknown}: use the output layers' names "
                             "(or the outputs dict's keys).")
        return [value.get(str(n)) for n in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(keys):
            raise ValueError(f"`{what}` has {len(value)} entries but the model has "
                             f"{len(keys)} outputs: give one per output, in order.")
        return list(value)
    return [value] * len(keys)


def _as_loss(loss: Any) -> _losses.Loss:
    if isinstance(loss, _losses.Loss):
        return loss
    return _losses.Loss(loss, name=getattr(loss, "__name__", type(loss).__name__))


def _rows(y_pred: Any) -> int:
    shape = getattr(y_pred, "shape", ())
    return int(shape[0]) if len(shape) else 1
