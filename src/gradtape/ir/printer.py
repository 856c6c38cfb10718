"""Text form of a program, in the spirit of a jaxpr: one equation per line.

    { lambda x_1:float32[3] .
        sin_2:float32[3] = sin x_1
        ...
      return (mul_4,) }
"""

from __future__ import annotations

from .naming import Namer
from .nodes import Literal, Program


def _format_param(value) -> str:
    if hasattr(value, "__name__"):
        return value.__name__
    if isinstance(value, Program):
        return "{...}"  # written out below the equation
    if isinstance(value, tuple) and value and isinstance(value[0], Program):
        return "(" + ", ".join("{...}" for _ in value) + ")"
    return repr(value)


def _sub_programs(params: dict) -> list[tuple[str, Program]]:
    """The sub-programs an equation holds (a loop's body, a switch's branches, a
    recompute's block), by param name, to write out below it."""
    found = []
    for key, value in params.items():
        if isinstance(value, Program):
            found.append((key, value))
        elif isinstance(value, tuple) and value and isinstance(value[0], Program):
            found.extend((f"{key}[{i}]", p) for i, p in enumerate(value))
    return found


def format_program(program: Program, namer: Namer | None = None) -> str:
    name = namer or Namer()

    def show(v) -> str:
        if v is None:
            return "zero"
        if isinstance(v, Literal):
            value = v.value
            return repr(value.item() if hasattr(value, "item") else value)
        return name(v)

    inputs = " ".join(f"{name(v)}:{v.aval}" for v in program.inputs)
    lines = [f"{{ lambda {inputs} ."]
    for eqn in program.eqns:
        outs = " ".join(f"{name(o)}:{o.aval}" for o in eqn.outs)
        args = " ".join(show(v) for v in eqn.inputs)
        params = ", ".join(f"{k}={_format_param(v)}" for k, v in eqn.params.items())
        params = f"[{params}] " if params else ""
        lines.append(f"    {outs} = {eqn.prim.name}{params and ' ' + params.rstrip()} {args}")
        for key, sub in _sub_programs(eqn.params):
            text = format_program(sub, name).replace("\n", "\n        ")
            lines.append(f"      {key} = {text}")
    outputs = ", ".join(show(v) for v in program.outputs)
    lines.append(f"  return ({outputs}{',' if len(program.outputs) == 1 else ''}) }}")
    return "\n".join(lines)
