"""A Python function converted once, by its code object: its source parsed with gast,
its control flow converted (``control_flow.convert_function``), compiled with the
user's file name and line numbers (an error in converted code shows the user's line),
and made into a function with the original's globals, closure cells and defaults.

A function whose source cannot be read (a lambda typed at a prompt, a builtin) runs as
it is, with one warning; a function with no control flow (no ``if``, loop, ``and``,
``or``, ``not`` or ``x if c else y``) runs as it is, silently: there is nothing to
convert.
"""

from __future__ import annotations

import ast
import dis
import inspect
import textwrap
import threading
import types
import warnings
from collections.abc import Callable
from typing import Any

import gast

from . import runtime
from .control_flow import convert_function
from .templates import inherit_lines, name

__all__ = ["converted", "converted_source", "do_not_convert", "AutoGraphWarning"]

DO_NOT_CONVERT = "__gt_do_not_convert__"
_CONVERTIBLE = (gast.If, gast.While, gast.For, gast.IfExp, gast.BoolOp)


class AutoGraphWarning(UserWarning):
    """A function ``@gt.function`` could not convert: it is traced as it is."""


class _Conversion:
    """What one code object converts to: its code and source, or why it cannot."""

    def __init__(self, code: types.CodeType | None, source: str | None,
                 reason: str | None):
        self.code, self.source, self.reason = code, source, reason


_cache: dict[types.CodeType, _Conversion] = {}
_lock = threading.Lock()


def do_not_convert(func: Callable[..., Any] | None = None) -> Any:
    """TF's ``tf.autograph.experimental.do_not_convert``: ``func`` runs as written
    inside ``@gt.function`` (its control flow reads values while tracing)."""
    if func is None:
        return do_not_convert
    try:
        setattr(func, DO_NOT_CONVERT, True)
    except AttributeError:  # a builtin: never converted anyway
        pass
    return func


def converted(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with its control flow converted; itself if there is none to
    convert, or (with one ``AutoGraphWarning``) if its source cannot be read."""
    if isinstance(function, types.MethodType):
        return types.MethodType(converted(function.__func__), function.__self__)
    if not isinstance(function, types.FunctionType) or getattr(function, DO_NOT_CONVERT,
                                                                False):
        if isinstance(function, (types.BuiltinFunctionType, types.BuiltinMethodType)) \
                or type(function).__name__ == "ufunc":
            _warn(function, "it is a builtin or C function, with no Python source")
        return function  # callable objects, partials: run as they are
    if hasattr(function, "__wrapped__"):
        return function  # another decorator's wrapper: converting it would drop it
    conversion = _conversion(function)
    if conversion.code is None:
        return function
    return _function_from(conversion.code, function)


def converted_source(function: Callable[..., Any]) -> str:
    """The converted source of ``function`` (its own source if nothing converts)."""
    function = inspect.unwrap(getattr(function, "python_function", function))
    function = getattr(function, "__func__", function)
    if not isinstance(function, types.FunctionType):
        raise TypeError(f"to_code needs a Python function, got {function!r}.")
    if not getattr(function, DO_NOT_CONVERT, False):
        conversion = _conversion(function)
        if conversion.source is not None:
            return conversion.source
    try:
        return textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return f"# The source of {function.__qualname__} is not available.\n"


def _conversion(function: types.FunctionType) -> _Conversion:
    code = function.__code__
    found = _cache.get(code)
    if found is None:
        with _lock:
            found = _cache.get(code)
            if found is None:
                found = _cache[code] = _convert(function)
                if found.reason is not None:
                    _warn(function, found.reason)
    return found


def _warn(function: Any, reason: str) -> None:
    """One warning, at the function's definition when it has one."""
    name = getattr(function, "__qualname__", repr(function))
    message = (f"AutoGraph could not convert {name} ({reason}): @gt.function traces it "
               "as it is, so its Python control flow on tensors reads their values while "
               "tracing (a guard per read).")
    code = getattr(function, "__code__", None)
    if code is None:
        warnings.warn(message, AutoGraphWarning, stacklevel=4)
    else:
        warnings.warn_explicit(message, AutoGraphWarning, code.co_filename,
                               code.co_firstlineno)


def _has_control_flow(code: types.CodeType) -> bool:
    """Whether ``code`` (or a function or comprehension in it) branches or loops: a
    function without has nothing to convert, so a missing source costs nothing. The
    branches ``with`` and ``except`` compile to do not count."""
    previous = ""
    for instruction in dis.get_instructions(code):
        name = instruction.opname
        if name.startswith(_BRANCHES) and previous not in _HANDLER_TESTS:
            return True
        previous = name
    return any(isinstance(c, types.CodeType) and _has_control_flow(c)
               for c in code.co_consts)


_BRANCHES = ("POP_JUMP", "JUMP_IF", "FOR_ITER", "UNARY_NOT")
_HANDLER_TESTS = frozenset({"WITH_EXCEPT_START", "CHECK_EXC_MATCH", "CHECK_EG_MATCH"})


def _convert(function: types.FunctionType) -> _Conversion:
    code = function.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE):
        return _Conversion(None, None, None)  # gt.function refuses these itself
    if not _has_control_flow(code):  # straight-line code: no source to read or parse
        return _Conversion(None, None, None)
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return _Conversion(None, None, "its source is not available: it was defined at "
                           "a prompt or with exec")
    if function.__name__ == "<lambda>":
        return _Conversion(None, None, None)  # no statements: nothing to convert
    try:
        tree = gast.parse(source)
    except SyntaxError as error:
        return _Conversion(None, None, f"its source does not parse: {error}")
    definition = tree.body[0] if tree.body else None
    if not isinstance(definition, gast.FunctionDef):
        return _Conversion(None, None, None)
    if not any(isinstance(n, _CONVERTIBLE) or (isinstance(n, gast.UnaryOp) and
                                               isinstance(n.op, gast.Not))
               for n in gast.walk(definition)):
        return _Conversion(None, None, None)
    definition.decorator_list = []  # @gt.function's own: the result is what it wraps
    if "__class__" in code.co_freevars and definition.args.args:
        _ExplicitSuper(definition.args.args[0].id).visit(definition)
    definition = convert_function(definition)
    inherit_lines(definition)
    text = ast.unparse(gast.gast_to_ast(definition)) + "\n"
    return _Conversion(_compile(definition, code), text, None)


class _ExplicitSuper(gast.NodeTransformer):
    """``super()`` → ``super(__class__, self)``: converted code runs a method's branches
    and loop bodies as functions of their own, where ``super()`` finds no arguments."""

    def __init__(self, first_parameter: str):
        self.first = first_parameter

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        if not hasattr(self, "_entered"):  # the method itself, not functions inside it
            self._entered = True
            self.generic_visit(node)
        return node

    def visit_Call(self, node: gast.Call) -> gast.Call:
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id == "super" and not node.args:
            node.args = [name("__class__"), name(self.first)]
        return node


def _compile(definition: gast.FunctionDef, code: types.CodeType) -> types.CodeType:
    """The converted function's code object, compiled inside a factory whose
    parameters are ``ag__`` and the original's free variables (so they stay free)."""
    factory = ast.parse(f"def __ag_factory(ag__, {', '.join(code.co_freevars)}):\n"
                        "    pass\n").body[0]
    inner = gast.gast_to_ast(definition)
    factory.body = [inner, ast.Return(value=ast.Name(id=inner.name, ctx=ast.Load()))]
    module = ast.Module(body=[factory], type_ignores=[])
    ast.increment_lineno(inner, code.co_firstlineno - 1)
    _fill_lines(factory, code.co_firstlineno)  # the factory's own: the function's line
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec")
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    return next(c for c in factory_code.co_consts
                if isinstance(c, types.CodeType) and c.co_name == inner.name)


def _fill_lines(tree: ast.AST, line: int) -> None:
    for node in ast.walk(tree):
        if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
            node.lineno = node.end_lineno = line
            node.col_offset = node.end_col_offset = 0


def _function_from(code: types.CodeType, original: types.FunctionType) -> Any:
    """A function of the converted ``code`` with ``original``'s globals, defaults and
    closure cells (a cell the original reads stays shared: a later rebinding shows)."""
    cells = dict(zip(original.__code__.co_freevars, original.__closure__ or ()))
    closure = tuple(types.CellType(runtime) if n == "ag__" else cells[n]
                    for n in code.co_freevars)
    function = types.FunctionType(code, original.__globals__, original.__name__,
                                  original.__defaults__, closure)
    function.__kwdefaults__ = original.__kwdefaults__
    function.__qualname__ = original.__qualname__
    function.__module__ = original.__module__
    function.__doc__ = original.__doc__
    function.__dict__.update(original.__dict__)
    return function
