"""Deterministic, readable names for vars: ``<hint>_<n>`` in order of first appearance."""

from __future__ import annotations

import keyword
import re

from .nodes import Var


class Namer:
    def __init__(self) -> None:
        self._names: dict[Var, str] = {}
        self._count = 0

    def __call__(self, var: Var) -> str:
        name = self._names.get(var)
        if name is None:
            self._count += 1
            hint = re.sub(r"\W", "_", var.hint) or "v"
            if keyword.iskeyword(hint) or hint[0].isdigit():
                hint = "v_" + hint
            name = f"{hint}_{self._count}"
            self._names[var] = name
        return name


def op_cotangent_name(prim_name: str) -> str:
    """The name of a cotangent whose value has no user's name: its op's (``d_matmul_out``)."""
    return f"d_{prim_name}_out"


_OP_COTANGENT = re.compile(r"d_\w+_out")


def is_users_name(name: str | None) -> bool:
    """Whether ``name`` comes from the user's code (``d_logits``, ``w_out``), not from an
    op (``d_matmul_out``)."""
    return name is not None and _OP_COTANGENT.fullmatch(name) is None
