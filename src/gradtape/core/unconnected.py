"""What a gradient returns for a source its target does not depend on (TF's
``tf.UnconnectedGradients``): shared by tapes, jacobians and forward accumulators."""

from __future__ import annotations

import enum
from typing import Any


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


def unconnected_mode(value: Any) -> UnconnectedGradients:
    """``value`` (an ``UnconnectedGradients`` or its string) as the enum."""
    if value.__class__ is UnconnectedGradients:
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(
            f"Unknown value for unconnected_gradients: {value!r}. Use "
            "UnconnectedGradients.NONE ('none') or UnconnectedGradients.ZERO ('zero')."
        ) from None
