"""``gt.keras``: only what TF code with ``tf.keras.optimizers`` needs (no layers)."""

from . import optimizers

__all__ = ["optimizers"]
