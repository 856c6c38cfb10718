"""``gt.keras``: only what TF code with ``tf.keras.optimizers`` and ``tf.keras.losses``
next to a tape needs (no layers, no models)."""

from . import losses, optimizers

__all__ = ["losses", "optimizers"]
