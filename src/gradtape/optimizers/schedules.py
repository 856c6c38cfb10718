"""Learning-rate schedules: callables of the step, with Keras's formulas.

Formulas follow keras/src/optimizers/schedules/learning_rate_schedule.py. The step is a
tensor (the optimizer's ``iterations`` variable) and schedules are written with gradtape
ops, so a traced training step reads the step as an input instead of baking it in.
Results are float32, the dtype Keras gives a Python-float ``initial_learning_rate``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.tensor import Tensor, constant
from ..ops import cast, ceil, cos, equal, floor, log, minimum, where

__all__ = [
    "CosineDecay",
    "CosineDecayRestarts",
    "ExponentialDecay",
    "InverseTimeDecay",
    "LearningRateSchedule",
    "PiecewiseConstantDecay",
    "PolynomialDecay",
]

_F32 = np.float32


def _step(step: Any) -> Tensor:
    return cast(step if isinstance(step, Tensor) else constant(np.asarray(step)), _F32)


def _check_decay_steps(name: str, value: Any) -> None:
    if value <= 0:
        raise ValueError(f"Argument `{name}` must be > 0. Received: {name}={value}")


class LearningRateSchedule:
    """Base class: subclasses implement ``__call__(self, step)`` returning the rate."""

    def __call__(self, step: Any) -> Any:
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override "
            "`__call__(self, step)`."
        )


class _DecaySchedule(LearningRateSchedule):
    """What ExponentialDecay and InverseTimeDecay share: their arguments and the decay
    progress ``step / decay_steps`` (floored with ``staircase``)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float,
                 staircase: bool = False, name: str | None = None):
        _check_decay_steps("decay_steps", decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name if name is not None else type(self).__name__

    def _progress(self, step: Any) -> Tensor:
        p = _step(step) / _F32(self.decay_steps)
        return floor(p) if self.staircase else p


class ExponentialDecay(_DecaySchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``; with ``staircase``
    the exponent is floored."""

    def __call__(self, step: Any) -> Tensor:
        p = self._progress(step)
        return _F32(self.initial_learning_rate) * constant(_F32(self.decay_rate)) ** p


class InverseTimeDecay(_DecaySchedule):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)``; with
    ``staircase`` the ratio ``step / decay_steps`` is floored."""

    def __call__(self, step: Any) -> Tensor:
        p = self._progress(step)
        return _F32(self.initial_learning_rate) / (_F32(1) + _F32(self.decay_rate) * p)


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[i]`` while
    ``boundaries[i-1] < step <= boundaries[i]``, ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries: Sequence[float], values: Sequence[float],
                 name: str = "PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. "
                f"Received: boundaries={list(boundaries)} of length {len(boundaries)}, and "
                f"values={list(values)} of length {len(values)}."
            )
        self.boundaries = list(boundaries)
        self.values = list(values)
        self.name = name

    def __call__(self, step: Any) -> Tensor:
        step = _step(step)
        # Walk from the last interval back: each earlier boundary overrides later values.
        result = constant(_F32(self.values[-1]))
        for boundary, value in zip(reversed(self.boundaries), reversed(self.values[:-1])):
            result = where(step <= _F32(boundary), _F32(value), result)
        return result


class CosineDecay(LearningRateSchedule):
    """Cosine decay from ``initial_learning_rate`` to ``alpha`` times it over
    ``decay_steps``, after an optional linear warmup to ``warmup_target`` over
    ``warmup_steps`` (Loshchilov & Hutter, SGDR)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, alpha: float = 0.0,
                 name: str = "CosineDecay", warmup_target: float | None = None,
                 warmup_steps: int = 0):
        _check_decay_steps("decay_steps", decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decayed(self, step: Tensor, start: float) -> Tensor:
        fraction = step / _F32(self.decay_steps)
        cosine = _F32(0.5) * (_F32(1) + cos(_F32(math.pi) * fraction))
        return _F32(start) * ((_F32(1) - _F32(self.alpha)) * cosine + _F32(self.alpha))

    def __call__(self, step: Any) -> Tensor:
        step = _step(step)
        if self.warmup_target is None:
            return self._decayed(minimum(step, _F32(self.decay_steps)),
                                 self.initial_learning_rate)
        warmup = _F32(self.warmup_steps)
        step = minimum(step, _F32(self.decay_steps) + warmup)
        initial = _F32(self.initial_learning_rate)
        ramp = (_F32(self.warmup_target) - initial) * (step / max(warmup, _F32(1))) + initial
        decay = self._decayed(step - warmup, self.warmup_target)
        return where(step < warmup, ramp, decay)


class PolynomialDecay(LearningRateSchedule):
    """``(initial - end) * (1 - step / decay_steps) ** power + end``, the step capped at
    ``decay_steps``; with ``cycle``, ``decay_steps`` grows to the first multiple of it
    above the step (Keras's formula)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int,
                 end_learning_rate: float = 0.0001, power: float = 1.0, cycle: bool = False,
                 name: str = "PolynomialDecay"):
        _check_decay_steps("decay_steps", decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step: Any) -> Tensor:
        step = _step(step)
        decay_steps = constant(_F32(self.decay_steps))
        if self.cycle:
            multiplier = where(equal(step, _F32(0)), _F32(1), ceil(step / decay_steps))
            decay_steps = decay_steps * multiplier
        else:
            step = minimum(step, decay_steps)
        remaining = _F32(1) - step / decay_steps
        span = _F32(self.initial_learning_rate) - _F32(self.end_learning_rate)
        return span * remaining ** _F32(self.power) + _F32(self.end_learning_rate)


class CosineDecayRestarts(LearningRateSchedule):
    """SGDR: cosine decay over ``first_decay_steps``, then restarts, each period
    ``t_mul`` times longer and each restart's peak ``m_mul`` times lower, decaying to
    ``alpha`` times the peak (Keras's formula)."""

    def __init__(self, initial_learning_rate: float, first_decay_steps: int,
                 t_mul: float = 2.0, m_mul: float = 1.0, alpha: float = 0.0,
                 name: str = "SGDRDecay"):
        _check_decay_steps("first_decay_steps", first_decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def _restart(self, fraction: Tensor) -> tuple[Tensor, Tensor]:
        """The restart index and the fraction done of the current period."""
        t_mul = _F32(self._t_mul)
        if self._t_mul == 1.0:
            restart = floor(fraction)
            return restart, fraction - restart
        restart = floor(log(_F32(1) - fraction * (_F32(1) - t_mul)) / log(constant(t_mul)))
        done = (_F32(1) - constant(t_mul) ** restart) / (_F32(1) - t_mul)
        return restart, (fraction - done) / constant(t_mul) ** restart

    def __call__(self, step: Any) -> Tensor:
        fraction = _step(step) / _F32(self.first_decay_steps)
        restart, fraction = self._restart(fraction)
        peak = constant(_F32(self._m_mul)) ** restart
        cosine = _F32(0.5) * peak * (_F32(1) + cos(_F32(math.pi) * fraction))
        decayed = (_F32(1) - _F32(self.alpha)) * cosine + _F32(self.alpha)
        return _F32(self.initial_learning_rate) * decayed
