"""The placeholders converted code gives a variable before anything assigns it.

``x = ag__.Undefined('x')`` stands before a converted ``if`` or loop that assigns ``x``
when nothing assigned it before: the branch and loop functions declare it ``nonlocal``,
which needs a binding. Reading it raises what Python would (``UnboundLocalError``);
``UndefinedReturnValue`` is ``retval_`` before a ``return`` ran.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["Undefined", "UndefinedReturnValue", "is_undefined"]


class Undefined:
    """A variable no code path assigned yet; any use raises ``UnboundLocalError``."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name: str):
        object.__setattr__(self, "symbol_name", symbol_name)

    def __repr__(self) -> str:
        return f"<undefined {self.symbol_name}>"

    def _raise(self, *_: Any) -> NoReturn:
        raise UnboundLocalError(f"'{self.symbol_name}' is used before assignment: no path "
                                "through the code before this line assigned it. Assign it "
                                "before the if statement or loop.")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # copy, pickle and friends probe dunders
        self._raise()


def _install_raising_operators() -> None:
    """Every operator of an Undefined raises (``x + 1`` on an unassigned ``x``)."""
    names = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "neg",
             "pos", "abs", "lt", "le", "gt", "ge", "getitem", "iter", "len", "bool",
             "call", "array", "float", "int", "index", "invert", "and", "or", "xor"]
    for name in names:
        setattr(Undefined, f"__{name}__", Undefined._raise)
        if name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul"):
            setattr(Undefined, f"__r{name}__", Undefined._raise)


_install_raising_operators()


class UndefinedReturnValue:
    """``retval_`` of a function whose ``return`` statements were lowered, before one
    ran: the function returns ``None`` if it stays so (Python's implicit return)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no return value>"


def is_undefined(value: Any) -> bool:
    return isinstance(value, (Undefined, UndefinedReturnValue))
