"""RMSprop (Hinton, 2012): divide the gradient by a running RMS of recent gradients."""

from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor
from ..core.variable import Variable
from ..ops import sqrt, square
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """RMSprop, ``keras.optimizers.RMSprop`` (Keras 3, keras/src/optimizers/rmsprop.py)::

        velocity = rho * velocity + (1 - rho) * g ** 2
        average  = rho * average + (1 - rho) * g             # centered only
        denominator = velocity - average ** 2 + epsilon      # centered
        denominator = velocity + epsilon                     # not centered
        increment = learning_rate * g / sqrt(denominator)
        momentum = momentum_coef * momentum + increment      # momentum > 0 only
        w = w - momentum                                     # momentum > 0
        w = w - increment                                    # momentum == 0

    Note that ``epsilon`` sits inside the square root here, unlike Adam.

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        rho: discounting factor for the old gradients.
        momentum: plain (not Nesterov) momentum coefficient; 0 disables it.
        epsilon: small constant for numerical stability. Defaults to 1e-7.
        centered: normalize by the estimated variance of the gradient instead of its
            uncentered second moment.
    """

    def __init__(self, learning_rate: Any = 0.001, rho: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-7, centered: bool = False, name: str = "rmsprop"):
        super().__init__(learning_rate, name)
        # Range checks as in recent Keras releases.
        for arg, value in (("rho", rho), ("momentum", momentum)):
            if not 0 <= value <= 1:
                raise ValueError(f"`{arg}` must be in [0, 1]. Received: {arg}={value}")
        if not epsilon > 0:
            raise ValueError(f"`epsilon` must be positive. Received: epsilon={epsilon}")
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = bool(centered)

    def _build_variable(self, variable: Variable) -> None:
        self.add_slot(variable, "velocity")
        if self.momentum > 0:
            self.add_slot(variable, "momentum")
        if self.centered:
            self.add_slot(variable, "average_gradient")

    def update_step(self, gradient: Tensor, variable: Variable, learning_rate: Tensor) -> None:
        rho = self.rho
        velocity = self._slot(variable, "velocity")
        velocity.assign(rho * velocity + (1 - rho) * square(gradient))
        if self.centered:
            average = self._slot(variable, "average_gradient")
            average.assign(rho * average + (1 - rho) * gradient)
            denominator = velocity - square(average) + self.epsilon
        else:
            denominator = velocity + self.epsilon
        increment = learning_rate * gradient / sqrt(denominator)
        if self.momentum > 0:
            momentum = self._slot(variable, "momentum")
            momentum.assign(self.momentum * momentum + increment)
            variable.assign_sub(momentum)
        else:
            variable.assign_sub(increment)
