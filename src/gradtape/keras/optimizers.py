"""``gt.keras.optimizers``: Keras's optimizer names for gradtape's optimizers (the same
classes as ``gt.optimizers``; their constructors take Keras's arguments)."""

from ..optimizers import SGD, Adagrad, Adam, Optimizer, RMSprop, schedules

__all__ = ["SGD", "Adagrad", "Adam", "Optimizer", "RMSprop", "schedules"]
