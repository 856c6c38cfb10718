"""Code generation: a backward Program -> gast -> Python source -> a compiled function.

    naming      deterministic local and global names (the user's where known)
    user_source the user's statement at a file:line (comment text, assigned names)
    literals    values as expressions (dtype-preserving NumPy scalars)
    primitives  one equation as an expression (templates, NumPy calls, impl calls)
    control_flow a loop as a Python while, a switch as if/else (their bodies inside)
    to_gast     the program as a gast module (uses the fusion and buffer analyses)
    buffer_pool a function that keeps its large intermediates' buffers between calls
    emit        gast -> source text (astor, or ast.unparse where astor cannot serve)
    load        compile, register in linecache, dump to a directory
    floats      a traced function of float64 scalars on Python floats (math)

Imports: ``core``, ``ir``, ``ops``, ``passes``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ..ir.nodes import Program


class CompiledBackward(NamedTuple):
    function: Callable[..., tuple]
    source: str
    filename: str
    printer: str


def generate_source(program: Program, printer: str = "astor", fuse: bool = True,
                    reuse: bool = True, kind: str = "backward",
                    title: str = "", array_kind: Any = None,
                    pool: bool | None = None) -> tuple[str, dict[str, Any], str]:
    """``(source, globals, printer used)`` for ``program``; ``kind`` names the function
    (``"forward"`` for a @gt.function's trace), ``title`` adds a header comment line;
    ``array_kind`` (a ``core.backends.ArrayKind``) generates it for another library's
    arrays (``array_kinds.py``), ``None`` for NumPy's. ``pool``: keep the buffers of
    large intermediates between calls (``buffer_pool.py``); by default a @gt.function's
    forward does, under ``gt.config(pool_buffers=True)``."""
    from ..core.config import options
    from ..passes.control_flow import drop_unread_stacks, hoist_invariants
    from ..passes.loop_motion import move_loop_work
    from .emit import to_source
    from .to_gast import to_gast

    # A forward without gradient stacks nothing; invariant and map-like work runs once
    # per loop, not per iteration.
    program = move_loop_work(hoist_invariants(drop_unread_stacks(program)))
    globs = None
    if array_kind is not None:
        from .array_kinds import NamespaceNames

        globs, reuse = NamespaceNames(array_kind), False  # its arrays cannot be written into
    if pool is None:
        pool = kind == "forward" and options.pool_buffers
    generated = to_gast(program, fuse=fuse, reuse=reuse, title=title, kind=kind,
                        globs=globs, pool=pool)
    source, used = to_source(generated.module, generated.comments, printer)
    return source, generated.globals, used


def compile_program(program: Program, printer: str = "astor", fuse: bool = True,
                    reuse: bool = True, kind: str = "backward",
                    title: str = "", array_kind: Any = None) -> CompiledBackward:
    """Generate and compile the backward (or, with ``kind="forward"``, forward) function
    of ``program`` (for ``array_kind``'s arrays: see ``generate_source``)."""
    from .load import compile_function, filename_of

    if kind == "forward" and array_kind is None:  # a traced function of float64 scalars
        from . import floats

        if floats.on_floats(program):
            from .emit import to_source

            generated = floats.generate(program, title)
            source, used = to_source(generated.module, generated.comments, printer)
            function = compile_function(source, kind, generated.globals)
            return CompiledBackward(function, source, filename_of(source), used)
    source, globals_, used = generate_source(program, printer, fuse, reuse, kind, title,
                                             array_kind)
    function = compile_function(source, kind, globals_)
    return CompiledBackward(function, source, filename_of(source), used)
