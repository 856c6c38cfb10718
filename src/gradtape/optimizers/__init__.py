"""Optimizers for training loops: Keras's API (``apply_gradients``, ``minimize``) and
update formulas, over gradtape variables.

Imports: ``core``, ``ops``, ``tape``.
"""

from ..core.namespaces import public_dir
from . import schedules
from .adagrad import Adagrad
from .adam import Adam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "Optimizer", "RMSprop", "schedules"]

__dir__ = public_dir(globals())  # what users see as gt.optimizers
