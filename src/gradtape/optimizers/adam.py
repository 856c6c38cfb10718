"""Adam (Kingma & Ba, 2014), with the AMSGrad variant (Reddi et al., 2018)."""

from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor, constant
from ..core.variable import Variable
from ..ops import cast, maximum, sqrt, square
from .optimizer import Optimizer


class Adam(Optimizer):
    """Adam, ``keras.optimizers.Adam``. Each step, with ``t = iterations + 1``
    (Keras 3, keras/src/optimizers/adam.py)::

        alpha = learning_rate * sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)
        m = m + (g - m) * (1 - beta_1)
        v = v + (g ** 2 - v) * (1 - beta_2)
        v_hat = maximum(v_hat, v); v = v_hat                # amsgrad only
        w = w - m * alpha / (sqrt(v) + epsilon)

    ``epsilon`` is the paper's "epsilon hat": it is added after the bias correction.

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        beta_1: decay rate of the first moment estimates. Defaults to 0.9.
        beta_2: decay rate of the second moment estimates. Defaults to 0.999.
        epsilon: small constant for numerical stability. Defaults to 1e-7.
        amsgrad: whether to use the AMSGrad variant.
    """

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9,
                 beta_2: float = 0.999, epsilon: float = 1e-7, amsgrad: bool = False,
                 name: str = "adam"):
        super().__init__(learning_rate, name)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.amsgrad = bool(amsgrad)

    def _build_variable(self, variable: Variable) -> None:
        self.add_slot(variable, "momentum")
        self.add_slot(variable, "velocity")
        if self.amsgrad:
            self.add_slot(variable, "velocity_hat")

    def update_step(self, gradient: Tensor, variable: Variable, learning_rate: Tensor) -> None:
        dtype = variable.dtype
        local_step = cast(self.iterations + 1, dtype)
        beta_1_power = constant(self.beta_1, dtype) ** local_step
        beta_2_power = constant(self.beta_2, dtype) ** local_step
        m = self._slot(variable, "momentum")
        v = self._slot(variable, "velocity")
        alpha = learning_rate * sqrt(1 - beta_2_power) / (1 - beta_1_power)
        m.assign_add((gradient - m) * (1 - self.beta_1))
        v.assign_add((square(gradient) - v) * (1 - self.beta_2))
        if self.amsgrad:
            v_hat = self._slot(variable, "velocity_hat")
            v_hat.assign(maximum(v_hat, v))
            v = v_hat
        variable.assign_sub(m * alpha / (sqrt(v) + self.epsilon))
