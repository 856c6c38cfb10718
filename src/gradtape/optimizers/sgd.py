"""Stochastic gradient descent, with optional (Nesterov) momentum."""

from __future__ import annotations

import numbers
from typing import Any

from ..core.tensor import Tensor
from ..core.variable import Variable
from .optimizer import Optimizer


class SGD(Optimizer):
    """Gradient descent (with momentum), ``keras.optimizers.SGD``.

    Without momentum: ``w = w - learning_rate * g``. With momentum (Keras 3,
    keras/src/optimizers/sgd.py)::

        velocity = momentum * velocity - learning_rate * g
        w = w + velocity                                    # nesterov=False
        w = w + momentum * velocity - learning_rate * g     # nesterov=True

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.01.
        momentum: float in [0, 1]. 0 is vanilla gradient descent.
        nesterov: whether to apply Nesterov momentum.
    """

    def __init__(self, learning_rate: Any = 0.01, momentum: float = 0.0,
                 nesterov: bool = False, name: str = "SGD"):
        super().__init__(learning_rate, name)
        if (isinstance(momentum, bool) or not isinstance(momentum, numbers.Real)
                or not 0 <= momentum <= 1):
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

    def _build_variable(self, variable: Variable) -> None:
        if self.momentum != 0:
            self.add_slot(variable, "momentum")
        else:
            self._slots.setdefault(variable._id, {})

    def update_step(self, gradient: Tensor, variable: Variable, learning_rate: Tensor) -> None:
        if self.momentum == 0:
            variable.assign_sub(gradient * learning_rate)
            return
        m = self._slot(variable, "momentum")
        momentum = self.momentum
        m.assign(m * momentum - gradient * learning_rate)
        if self.nesterov:
            variable.assign_add(m * momentum - gradient * learning_rate)
        else:
            variable.assign_add(m)
