"""TF's hook into ``tf.function`` that user code subclasses:
``tf.types.experimental.TraceType`` (the tracing protocol). ``tf.autograph`` is
``functions/autograph/``.

An argument with a ``__tf_tracing_type__(context)`` method is part of a function's
signature through what that method returns (compared with ``==``, hashed), not through
the object itself: two objects with equal trace types share a trace.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

__all__ = ["TraceType", "tracing_key"]


class TraceType(abc.ABC):
    """TF's ``tf.types.experimental.TraceType``: what a value contributes to the
    signature of a ``@gt.function`` call. Subclasses define ``__eq__`` and
    ``__hash__``; gradtape matches trace types by equality only, so ``is_subtype_of``
    and ``most_specific_common_supertype`` are TF's hooks, not called here."""

    def is_subtype_of(self, other: TraceType) -> bool:
        return self == other

    def most_specific_common_supertype(self, others: Sequence[TraceType]) -> TraceType | None:
        return self if all(self == other for other in others) else None

    def placeholder_value(self, placeholder_context: Any = None) -> Any:
        raise NotImplementedError("gradtape traces with the argument itself: it needs no "
                                  "placeholder value.")

    @abc.abstractmethod
    def __eq__(self, other: Any) -> bool: ...

    @abc.abstractmethod
    def __hash__(self) -> int: ...


def tracing_key(value: Any) -> Any:
    """The signature key of an object implementing the tracing protocol, else None."""
    method = getattr(type(value), "__tf_tracing_type__", None)
    if method is None:
        return None
    return ("trace_type", method(value, None))
