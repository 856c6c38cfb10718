"""TF AutoGraph's checks on what a converted statement carries, with TF's messages:
a variable a tensor ``if`` assigns in one branch only, one a tensor loop assigns before
it is defined, and one whose dtype or shape changes across a branch or an iteration."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...core.tensor import Tensor
from .undefined import Undefined, UndefinedReturnValue

__all__ = ["check_branch_outputs", "check_loop_entry", "check_iteration"]


def check_branch_outputs(names: Sequence[str], values: Sequence[Any], label: str,
                         other: Sequence[Any] | None = None) -> None:
    """A branch of a tensor ``if`` leaves every output defined (TF's ValueError); with
    ``other`` (the else branch's values), both agree on each tensor's dtype."""
    for name, value in zip(names, values):
        if isinstance(value, UndefinedReturnValue):
            raise ValueError(f"the {label} branch must also have a return statement: a "
                             "return inside an if on a tensor needs one in both "
                             "branches (or none).")
        if isinstance(value, Undefined):
            raise ValueError(f"'{name}' must also be initialized in the {label} branch: "
                             "an if on a tensor becomes a cond whose branches give the "
                             "same variables. Alternatively, initialize it before the if "
                             "statement.")
    if other is None:
        return
    for name, a, b in zip(names, values, other):
        if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype != b.dtype:
            raise TypeError(f"'{name}' has dtype {a.dtype.name} in the main branch, but "
                            f"dtype {b.dtype.name} in the else branch: cast one of them "
                            "(gt.cast).")


def check_loop_entry(names: Sequence[str], values: Sequence[Any]) -> None:
    """A tensor loop's variables are all defined when it starts (TF's ValueError)."""
    for name, value in zip(names, values):
        if isinstance(value, UndefinedReturnValue):
            raise ValueError("A return statement inside a loop over a tensor condition "
                             "needs the return value defined before the loop: assign the "
                             "result to a variable and return it after the loop.")
        if isinstance(value, Undefined) or value is None:
            what = "defined" if isinstance(value, Undefined) else "a value other than None"
            raise ValueError(f"'{name}' must be {what} before the loop: a loop over a "
                             "tensor condition carries it from one iteration to the next. "
                             "Initialize it before the loop.")


def check_iteration(names: Sequence[str], before: Sequence[Any],
                    after: Sequence[Any]) -> None:
    """An iteration keeps each tensor's dtype (TF's TypeError) and shape (ValueError)."""
    for name, a, b in zip(names, before, after):
        if not isinstance(a, Tensor):
            continue
        if not isinstance(b, Tensor):
            raise TypeError(f"'{name}' is a {a.dtype.name} tensor before the loop, but "
                            f"a {type(b).__name__} after one iteration: keep it a tensor.")
        if a.dtype != b.dtype:
            raise TypeError(f"'{name}' has dtype {a.dtype.name} before the loop, but dtype "
                            f"{b.dtype.name} after one iteration: cast it (gt.cast) to "
                            "keep its dtype.")
        if tuple(a.shape) != tuple(b.shape):
            raise ValueError(f"'{name}' has shape {tuple(a.shape)} before the loop, but "
                             f"shape {tuple(b.shape)} after one iteration. Keep its shape, "
                             "or write the loop with gt.while_loop(..., "
                             "shape_invariants=...).")
