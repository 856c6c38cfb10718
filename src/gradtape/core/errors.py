"""TF's exception classes (``gt.errors``, TF's ``tf.errors``).

Each also subclasses the Python exception gradtape raised before it had them (and that
the situation calls for), so ``except ValueError`` around a bad reshape keeps working
while ported code can catch ``tf.errors.InvalidArgumentError``.
"""

from __future__ import annotations

from typing import Any

from .namespaces import public_dir

__all__ = ["OpError", "InvalidArgumentError", "NotFoundError", "OutOfRangeError",
           "UnimplementedError", "ResourceExhaustedError", "FailedPreconditionError",
           "UnknownError", "DataLossError", "OperatorNotAllowedInGraphError",
           "INVALID_ARGUMENT", "NOT_FOUND", "OUT_OF_RANGE", "UNIMPLEMENTED",
           "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "UNKNOWN", "DATA_LOSS"]

# TF's error codes (error_codes.proto).
UNKNOWN = 2
INVALID_ARGUMENT = 3
NOT_FOUND = 5
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
DATA_LOSS = 15


class OpError(Exception):
    """Base of TF's op errors. Built as gradtape raises them, ``OpError(message)``, or as
    TF's constructors take them, ``OpError(node_def, op, message)``."""

    error_code = UNKNOWN

    def __init__(self, *args: Any):
        if len(args) >= 3:  # TF's (node_def, op, message, *args)
            node_def, op, message = args[:3]
        else:
            node_def, op, message = None, None, args[0] if args else ""
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self) -> str:
        return str(self.message)


class InvalidArgumentError(OpError, ValueError):
    """An op got an argument it cannot use (a shape that does not fit, a bad axis)."""

    error_code = INVALID_ARGUMENT


class NotFoundError(OpError, LookupError):
    error_code = NOT_FOUND


class OutOfRangeError(OpError, IndexError):
    """An index or position past the end."""

    error_code = OUT_OF_RANGE


class UnimplementedError(OpError, NotImplementedError):
    error_code = UNIMPLEMENTED


class ResourceExhaustedError(OpError, MemoryError):
    error_code = RESOURCE_EXHAUSTED


class FailedPreconditionError(OpError, RuntimeError):
    error_code = FAILED_PRECONDITION


class UnknownError(OpError, RuntimeError):
    error_code = UNKNOWN


class DataLossError(OpError, OSError):
    """A file's bytes are damaged or not what its name says (a checkpoint that does not
    parse or whose checksums do not match)."""

    error_code = DATA_LOSS


class OperatorNotAllowedInGraphError(TypeError):
    """Python used a tensor's value where a ``@gt.function`` trace cannot stand for it
    (TF's: a graph tensor used as a Python ``bool``). Not an ``OpError``, as in TF."""


__dir__ = public_dir(globals())  # what users see as gt.errors
