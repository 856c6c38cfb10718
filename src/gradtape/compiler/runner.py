"""The compiled runner: a Program, its generated function, and the interpreter behind it.

Every generated function (a tape's backward, a ``@gt.function``'s forward) is compiled,
dumped, announced to listeners, run, and given up on in one place:

- ``compile(program)`` generates and compiles code (``codegen.compile_program``), writes
  it to ``gt.config(dump_dir=...)``, keeps its source in ``linecache`` until the runner
  goes (or ``release()``), and calls the class's ``listeners``. A code generator failure
  warns once and leaves the runner on the interpreter: never a wrong result.
- ``run(args)`` runs the generated function, or ``self.program`` in the interpreter while
  there is none. If the generated function raises where the interpreter does not, it is
  disabled (with a warning) and the interpreter's result is returned; if the interpreter
  raises too, the error is the user's and the generated function's traceback is shown.
  Never after an effect the user saw ran in the failed call (a ``gt.print`` op's line,
  a ``py_function``'s Python): the interpreter would run it twice, so the error is
  raised as it is, with a note naming the user's line that raised.

Subclasses say *when* to compile (``_maybe_compile``): a backward after a few calls of
its structure, a traced function at once.
"""

from __future__ import annotations

import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from ..core.backends import PLAIN_CLASSES, ArrayKind, kind_of_all
from ..core.config import options
from ..core.state import state
from ..ir import interpreter
from ..ir.nodes import Program
from ..ir.walk import dead_after
from ..ops.control_flow import subprograms

_plain_superset = PLAIN_CLASSES.issuperset


class CompiledRunner:
    """Runs ``program``: generated code once compiled, the interpreter until then."""

    __slots__ = ("program", "compiled", "failed", "compile_time", "_registration",
                 "_compiled_program", "by_kind", "consumes", "_release",
                 "__weakref__")

    # What the warnings call the generated code, and the function it defines.
    what: ClassVar[str] = "a generated function"
    kind: ClassVar[str] = "backward"
    # Called with every CompiledBackward right after it is compiled.
    listeners: ClassVar[list[Callable[[Any], None]]] = []

    def __init__(self, program: Program):
        self.program = program
        self.compiled = None  # a codegen.CompiledBackward once generated
        self.failed = False
        self.compile_time = 0.0
        self._registration: weakref.finalize | None = None
        self._compiled_program: Program | None = None  # what self.compiled was made of
        # Array library name (Dask's "dask.array") -> its generated function, or None
        # where generating or running it failed: NumPy's is never used for other arrays.
        self.by_kind: dict[str, Any] = {}
        # Whether a caller that holds nothing else may let it empty its argument list
        # (``run(consume=True)``); off once a consuming call raised.
        self.consumes = True
        self._release: list | None = None  # the program's dead_after, for the interpreter

    # --- running ------------------------------------------------------------------------
    def run(self, args: Sequence[Any], consume: bool = False) -> Sequence[Any]:
        """Run on arrays: compiled code if enabled and built, else the interpreter.

        A backward's generated function takes its inputs as one list and empties it
        (codegen's ``feeds``). With ``consume``, ``args`` (a list) is that list: the
        caller holds nothing else, and each input dies at its last use. Otherwise the
        function gets a copy and ``args`` stays as it was (a later call runs on it).
        """
        if not options.compile:
            return self._interpret(args, consume)
        # An array of another library (Dask): its own generated code. One C-level pass
        # over the types for the usual all-NumPy arguments.
        if not _plain_superset(map(type, args)):
            array_kind = kind_of_all(args)
            if array_kind is not None:
                return self._run_on(array_kind, args)
        compiled = self.compiled
        if compiled is None:
            compiled = self._maybe_compile()
            if compiled is None:
                return self._interpret(args, consume)
        try:
            if self.kind == "backward":
                return compiled.function(args if consume else list(args))
            return compiled.function(*args)
        except Exception as error:
            if consume and len(args) < len(self.program.inputs):
                self._consumed(error, compiled)
            return self._fall_back(error, compiled, args)

    def _interpret(self, args: Sequence[Any], consume: bool = False) -> list[Any]:
        if self._release is None:
            self._release = dead_after(self.program) or interpreter.NOTHING_TO_RELEASE
        return interpreter.run(self.program, args, consume, self._release)

    def _consumed(self, error: Exception, compiled: Any) -> None:
        # The inputs were released to save memory, so this call cannot be checked in
        # the interpreter: the error goes to the caller as it is, and a later call
        # that raises falls back as usual (its caller keeps the arguments to do so).
        self.consumes = False
        raise error

    def program_for_other_kinds(self) -> Program:
        """The program to interpret on another library's arrays before code is
        generated: ``program`` (``BackwardEntry``: after the passes)."""
        return self.program

    def _maybe_compile(self) -> Any:
        """The compiled code to run now, compiling it if it is time; ``None``: interpret."""
        if self.failed:
            return None
        return self.compile(self.program)

    def _fall_back(self, error: Exception, compiled: Any, args: Sequence[Any]) -> Sequence[Any]:
        # If the interpreter raises too, the error is the user's: show it in the
        # generated lines. Otherwise the generated code is wrong: stop using it.
        if getattr(error, _EFFECTS_RAN, False):  # running again would repeat them
            raise error from None
        try:
            result = interpreter.run(self.program, args)
        except Exception:
            raise error from None
        self.disable(compiled)
        return result

    def _run_on(self, array_kind: ArrayKind, args: Sequence[Any]) -> Sequence[Any]:
        """Run on another library's arrays: the function generated for that library,
        compiled when NumPy's is (the same program), else the interpreter."""
        compiled = self.by_kind.get(array_kind.name)
        if compiled is None:
            if array_kind.name in self.by_kind or (
                    self.compiled is None and self._maybe_compile() is None):
                return interpreter.run(self.program_for_other_kinds(), args)
            compiled = self._compile_for(array_kind)
            if compiled is None:
                return interpreter.run(self.program, args)
        try:
            if self.kind == "backward":
                return compiled.function(list(args))
            return compiled.function(*args)
        except Exception as error:
            if getattr(error, _EFFECTS_RAN, False):  # running again would repeat them
                raise error from None
            try:
                result = interpreter.run(self.program, args)
            except Exception:
                raise error from None
            self.by_kind[array_kind.name] = None
            warnings.warn(
                f"gradtape's generated code {compiled.filename} for {self.what} on "
                f"{array_kind.name} arrays raised where the interpreter does not "
                f"({type(error).__name__}: {error}); it runs in the interpreter on them "
                "from now on. Please report this.", RuntimeWarning, stacklevel=5)
            return result

    def _compile_for(self, array_kind: ArrayKind) -> Any:
        """Generate ``self.compiled``'s program again for ``array_kind``'s arrays."""
        from ..codegen import compile_program
        from ..codegen.array_kinds import kind_title
        from ..codegen.load import dump_or_warn, release

        program = self._compiled_program
        try:
            title = " ".join(t for t in (getattr(self, "title", ""), kind_title(array_kind)) if t)
            compiled = compile_program(program, kind=self.kind, title=title,
                                       array_kind=array_kind)
        except Exception as exc:  # never a wrong result: interpret on this kind
            self.by_kind[array_kind.name] = None
            warnings.warn(
                f"gradtape could not generate code for {self.what} on {array_kind.name} "
                f"arrays ({type(exc).__name__}: {exc}); it runs in the interpreter on "
                "them instead. Please report this.", RuntimeWarning, stacklevel=6)
            return None
        if options.dump_dir:
            dump_or_warn(compiled.source, options.dump_dir)
        compiled = _with_effects_told(compiled, program)
        self.by_kind[array_kind.name] = compiled
        weakref.finalize(self, release, compiled.filename)
        return compiled

    def source_for(self, array_kind: ArrayKind | None) -> str | None:
        """The generated source that runs on ``array_kind``'s arrays (None: NumPy's),
        once compiled."""
        compiled = self.compiled if array_kind is None else self.by_kind.get(array_kind.name)
        return None if compiled is None else compiled.source

    # --- compiling ----------------------------------------------------------------------
    def compile(self, program: Program, title: str = "") -> Any:
        """Generate and compile ``program`` (the one to run: it may be an optimized copy
        of ``self.program`` with the same inputs); the result, or ``None`` if it failed."""
        from ..codegen import compile_program
        from ..codegen.load import dump_or_warn, release

        start = time.perf_counter()
        try:
            compiled = compile_program(program, kind=self.kind, title=title)
        except Exception as exc:  # never a wrong result: interpret this program
            self.failed = True
            warnings.warn(
                f"gradtape could not generate code for {self.what} ({type(exc).__name__}: "
                f"{exc}); it runs in the interpreter instead. Please report this with the "
                "script that triggers it.", RuntimeWarning, stacklevel=6,
            )
            return None
        self.compile_time = time.perf_counter() - start
        self._compiled_program = program
        if options.dump_dir:
            dump_or_warn(compiled.source, options.dump_dir)
        compiled = _with_effects_told(compiled, program)
        self.compiled = compiled
        # Its source stays in linecache (tracebacks show it) until the runner goes.
        self._registration = weakref.finalize(self, release, compiled.filename)
        for listener in list(self.listeners):
            listener(compiled)
        return compiled

    def disable(self, compiled: Any) -> None:
        """The generated code raised where the interpreter does not: interpret from now on."""
        self.failed = True
        self.compiled = None
        self.by_kind.clear()
        self.release()
        warnings.warn(
            f"gradtape's generated code {compiled.filename} for {self.what} raised where "
            "the interpreter does not; it runs in the interpreter from now on. Please "
            "report this.", RuntimeWarning, stacklevel=5,
        )

    def release(self) -> None:
        """Drop the generated source from ``linecache`` (once; the code still runs)."""
        if self._registration is not None:
            self._registration()

    @property
    def function(self) -> Callable[..., Sequence[Any]] | None:
        """The generated function, or ``None`` while the interpreter runs."""
        compiled = self.compiled
        return None if compiled is None else compiled.function


# --- effects: a failed run that printed is not run again -------------------------------

# Set on an error raised after an effect of the failed call ran (read with getattr).
_EFFECTS_RAN = "_gradtape_effects_ran"
# Primitives whose implementation does what the user sees: gt.print ops (``effect``)
# and the user's Python (py_function, numpy_function: functions/py_function.py).
_PYTHON_CALLS = frozenset(("py_function", "numpy_function"))


def has_effects(program: Program) -> bool:
    """Whether running ``program`` prints or calls the user's Python (sub-programs too)."""
    return any(e.prim.effect or e.prim.name in _PYTHON_CALLS
               or any(has_effects(sub) for sub in subprograms(e.params))
               for e in program.eqns)


def _with_effects_told(compiled: Any, program: Program) -> Any:
    """``compiled`` whose function marks an error raised after one of its effects ran
    (and notes the user's line); a program without effects runs as it is (no cost)."""
    if not has_effects(program):
        return compiled
    function, source = compiled.function, compiled.source

    def run_telling_effects(*args: Any) -> Any:
        before = state.effects_run
        try:
            return function(*args)
        except Exception as error:
            if state.effects_run != before:
                _mark_effects_ran(error, source, compiled.filename)
            raise

    run_telling_effects.__wrapped__ = function  # type: ignore[attr-defined]
    return compiled._replace(function=run_telling_effects)


def _mark_effects_ran(error: Exception, source: str, filename: str) -> None:
    try:
        setattr(error, _EFFECTS_RAN, True)
    except AttributeError:  # an exception type without attributes: still raised
        return
    line = _user_line(error, source, filename)
    if hasattr(error, "add_note"):  # Python 3.11+
        where = f" at {line}" if line else ""
        error.add_note(
            f"gradtape: the compiled function raised{where} after its gt.print or "
            "py_function effects ran in this call, so it is not run again in the "
            "interpreter (they would run twice).")


def _user_line(error: Exception, source: str, filename: str) -> str:
    """The user's statement the generated line that raised belongs to: the comment
    above it in the generated source, ``'x = f(y)   (file.py:12)'``; '' if unknown."""
    lineno = 0
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    lines = source.splitlines()
    for text in reversed(lines[:lineno]):
        text = text.strip()
        if text.startswith("# ") and text.endswith(")") and "(" in text:
            return " ".join(text[2:].split())
    return ""
