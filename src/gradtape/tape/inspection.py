"""Reading what the compiler makes of a gradient: ``tape.inspect(target, sources)``.

    insp = tape.inspect(loss, [w, b])
    print(insp.forward_ir)     # the recorded computation, pruned to target and sources
    print(insp.backward_ir)    # its backward program, as autodiff emits it
    print(insp.optimized_ir)   # after the passes: what the code generator reads
    print(insp.source)         # the generated Python function
    insp.to_dot()              # forward and backward programs as a Graphviz graph
    insp.to_svg()              # that graph drawn, where Graphviz's `dot` is installed

It neither uses up a non-persistent tape nor touches the compile cache: it builds with
the recipe ``gradient`` builds with (``compiler/build.build_inspected``: ``build_entry``'s
steps and the program the entry compiles), so the source is exactly what ``gradient``
runs once the structure compiles.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from ..core import nest
from ..core.errors import NotFoundError, UnknownError
from ..ir.graph import programs_dot


class Inspection:
    """The forward IR, backward IR (before and after passes) and generated source."""

    __slots__ = ("forward_ir", "backward_ir", "optimized_ir", "source", "_programs")

    def __init__(self, forward_ir: str, backward_ir: str, optimized_ir: str, source: str,
                 programs: tuple[Any, Any] | None = None):
        self.forward_ir = forward_ir
        self.backward_ir = backward_ir
        self.optimized_ir = optimized_ir
        self.source = source
        self._programs = programs  # (forward, optimized backward) Programs

    def to_dot(self) -> str:
        """The forward program and the backward program that runs (after the passes) as
        one Graphviz graph, in DOT text: a box per equation, an edge per value read.
        Names are those of ``forward_ir`` and ``optimized_ir``."""
        forward, backward = self._programs
        return programs_dot([("forward", "forward", forward),
                             ("backward", "backward (after passes)", backward)])

    def to_svg(self) -> str:
        """``to_dot()`` drawn by Graphviz's ``dot``, as SVG text."""
        dot = shutil.which("dot")
        if dot is None:
            raise NotFoundError(
                "Inspection.to_svg() needs Graphviz's `dot` program, which is not on PATH: "
                "install Graphviz (e.g. `apt-get install graphviz`, `brew install "
                "graphviz`), or render to_dot()'s text with any Graphviz viewer.")
        result = subprocess.run([dot, "-Tsvg"], input=self.to_dot(), capture_output=True,
                                text=True, check=False)
        if result.returncode != 0:
            raise UnknownError(f"Graphviz's `dot` failed: {result.stderr.strip()}")
        return result.stdout

    def __str__(self) -> str:
        return "\n\n".join([
            "# forward IR\n" + self.forward_ir,
            "# backward IR\n" + self.backward_ir,
            "# backward IR after passes\n" + self.optimized_ir,
            self.source.rstrip("\n"),
        ])

    def __repr__(self) -> str:
        return f"<Inspection of a backward: {self.source.count(chr(10))} lines of source>"


def inspect_gradient(tape: Any, target: Any, sources: Any,
                     output_gradients: Any = None) -> Inspection:
    """What ``tape.gradient(target, sources, output_gradients)`` compiles and runs."""
    from ..codegen import generate_source
    from ..codegen.array_kinds import kind_title
    from ..compiler.build import build_inspected
    from ..core.backends import kind_of_all
    from ..ir.lower import IN_VALUES, Trace, prune
    from ..ir.printer import format_program
    from .arguments import as_target, check_source, flat_output_gradients, is_float
    from .lookup import output_flags

    if target is None:
        raise TypeError("Argument `target` should be a Tensor or a structure of Tensors, "
                        "but received None.")
    targets = [as_target(t) for t in nest.flatten(target)]
    flat_sources = nest.flatten(sources)
    for s in flat_sources:
        check_source(s)
    float_sources = [s for s in flat_sources if is_float(s.dtype)]
    output_grads = flat_output_gradients(output_gradients, targets)
    target_ids = [t._id for t in targets]
    records = tape._records_for(float_sources)
    kept = prune(records, [s._id for s in float_sources], target_ids)
    flags = output_flags(output_grads)
    trace = Trace(kept, float_sources, target_ids, flags)
    forward, backward, optimized, _ = build_inspected(trace, output_grads, float_sources,
                                                      records)
    # Recorded on another library's arrays (Dask): the source generated for them.
    array_kind = kind_of_all([v for record in kept for v in record[IN_VALUES]])
    source, _, _ = generate_source(optimized, title=kind_title(array_kind),
                                   array_kind=array_kind)
    return Inspection(format_program(forward), format_program(backward),
                      format_program(optimized), source, (forward, optimized))
