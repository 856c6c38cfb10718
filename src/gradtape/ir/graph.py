"""Programs drawn as a graph, in Graphviz's DOT language (text only: no dependency).

Each program is one cluster: an ellipse per input, a box per equation (its outputs,
primitive, arguments and types), an edge from where each value is
made to where it is read, and a ``return`` node. Names are the printer's
(``format_program``), so the picture and the IR text agree.
"""

from __future__ import annotations

from .naming import Namer
from .nodes import Literal, Program


def _quote(text: str) -> str:
    """A DOT string literal; ``\\n`` in ``text`` stays a line break of the label."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _argument_text(value, name: Namer) -> str:
    """An equation's argument as the printer shows it: a name, a literal, or ``zero``."""
    if value is None:
        return "zero"
    if isinstance(value, Literal):
        v = value.value
        return repr(v.item() if hasattr(v, "item") else v)
    return name(value)


def program_cluster(program: Program, prefix: str, title: str) -> list[str]:
    """The DOT lines of one program, as ``subgraph cluster_<prefix>``; node ids start with
    ``prefix`` so that several programs can share one graph."""
    name = Namer()
    made_by: dict = {}  # var -> the id of the node that makes it
    lines = [f"  subgraph cluster_{prefix} {{", f"    label={_quote(title)};"]
    for i, var in enumerate(program.inputs):
        node = f"{prefix}_in{i}"
        made_by[var] = node
        label = _quote(f"{name(var)}\n{var.aval}")
        lines.append(f"    {node} [shape=ellipse, label={label}];")
    for i, eqn in enumerate(program.eqns):
        node = f"{prefix}_e{i}"
        outs = ", ".join(name(o) for o in eqn.outs)
        args = ", ".join(_argument_text(v, name) for v in eqn.inputs)
        avals = ", ".join(str(o.aval) for o in eqn.outs)
        label = _quote(f"{outs} = {eqn.prim.name}({args})\n{avals}")
        lines.append(f"    {node} [shape=box, label={label}];")
        for v in eqn.inputs:
            if v is not None and not isinstance(v, Literal) and v in made_by:
                lines.append(f"    {made_by[v]} -> {node};")
        for o in eqn.outs:
            made_by[o] = node
    result = f"{prefix}_return"
    lines.append(f"    {result} [shape=plaintext, label=\"return\"];")
    for i, v in enumerate(program.outputs):
        if v is not None and not isinstance(v, Literal) and v in made_by:
            lines.append(f"    {made_by[v]} -> {result} [label=\"{i}\"];")
    lines.append("  }")
    return lines


def programs_dot(programs: list[tuple[str, str, Program]]) -> str:
    """One digraph of the programs, each given as ``(prefix, title, program)``."""
    lines = ["digraph gradtape {", "  rankdir=TB;", "  node [fontname=\"monospace\"];"]
    for prefix, title, program in programs:
        lines.extend(program_cluster(program, prefix, title))
    lines.append("}")
    return "\n".join(lines) + "\n"
