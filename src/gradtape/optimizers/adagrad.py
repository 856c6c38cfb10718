"""Adagrad (Duchi et al., 2011): per-parameter rates shrinking with accumulated squares."""

from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor
from ..core.variable import Variable
from ..ops import sqrt, square
from .optimizer import Optimizer


class Adagrad(Optimizer):
    """Adagrad, ``keras.optimizers.Adagrad`` (Keras 3, keras/src/optimizers/adagrad.py)::

        accumulator = accumulator + g ** 2        # starts at initial_accumulator_value
        w = w - learning_rate * g / sqrt(accumulator + epsilon)

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        initial_accumulator_value: non-negative starting value of the accumulators.
        epsilon: small constant for numerical stability. Defaults to 1e-7.
    """

    def __init__(self, learning_rate: Any = 0.001, initial_accumulator_value: float = 0.1,
                 epsilon: float = 1e-7, name: str = "adagrad"):
        super().__init__(learning_rate, name)
        if initial_accumulator_value < 0.0:
            raise ValueError(
                "initial_accumulator_value must be non-negative: "
                f"{initial_accumulator_value}"
            )
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def _build_variable(self, variable: Variable) -> None:
        self.add_slot(variable, "accumulator", self.initial_accumulator_value)

    def update_step(self, gradient: Tensor, variable: Variable, learning_rate: Tensor) -> None:
        accumulator = self._slot(variable, "accumulator")
        accumulator.assign_add(square(gradient))
        variable.assign_sub(learning_rate * gradient / sqrt(accumulator + self.epsilon))
