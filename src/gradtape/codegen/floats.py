"""A traced function whose every value is a float64 scalar, generated on Python floats.

NumPy spends about ten times a float operation on a ufunc call with 0-d operands, so a
``@gt.function`` of scalars only (a chain of ``sin``, ``*``, ``+`` and its gradient) is
written with Python's operators and ``math``'s functions instead: each primitive's
``float_template`` (declared with it), used only where it gives NumPy's float64 result
bit for bit (``+ - * /`` are IEEE operations either way; a ``math`` function is
compared with the primitive's NumPy implementation on sample values first).

NumPy and ``math`` differ where a value stops being finite: NumPy gives ``inf`` or
``nan`` with a ``RuntimeWarning``, ``math`` raises (``ZeroDivisionError``,
``ValueError``) or gives it silently. So the function checks that its outputs, and the
inputs of the divisions (the one covered operation that turns ``inf`` into a finite
value), are finite; where not, or where ``math`` raised, it calls ``on_numpy``: the
NumPy program in the interpreter, which gives NumPy's values and warnings. A value overflows,
divides by zero or is invalid in NumPy only by becoming ``inf`` or ``nan``, so a finite
run is one NumPy would have run without a warning, to the same bits.

Only float64: a float32 scalar keeps NumPy's float32 arithmetic.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import gast
import numpy as np

from ..ir import interpreter
from ..ir.nodes import Eqn, Literal, Program, Var
from .literals import USUB, call, constant, make, name
from .naming import GlobalNames
from .primitives import expression_tree
from .to_gast import Generated, _title_lines, _Writer, comment, import_statements

_FLOAT64 = np.dtype(np.float64)
_NOTE = ["Every value is a float64 scalar: it runs on Python floats. Where a value is not",
         "finite, on_numpy runs the NumPy program (NumPy's inf, nan and warnings)."]


def on_floats(program: Program) -> bool:
    """Whether ``program`` can run on Python floats: every input and value a float64
    scalar, every equation a primitive with a float template that matches NumPy here,
    every constant a real number."""
    if not program.eqns or not all(_float64_scalar(v) for v in program.inputs):
        return False
    for eqn in program.eqns:
        template = eqn.prim.float_template
        if template is None or eqn.params or not _matches_numpy(eqn.prim):
            return False
        if not all(_float64_scalar(v) for v in eqn.outs):
            return False
        for v in eqn.inputs:
            if isinstance(v, Literal):
                if not _real_number(v.value):
                    return False
            elif not _float64_scalar(v):
                return False
    return True


def _float64_scalar(v: Any) -> bool:
    return isinstance(v, Var) and v.aval.shape == () and v.aval.dtype == _FLOAT64


def _real_number(value: Any) -> bool:
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return False
    return isinstance(value, (int, float, np.integer, np.floating)) and (
        not isinstance(value, np.floating) or value.dtype.itemsize <= 8)


# Sample arguments for comparing a math function with NumPy's: signs, tiny, huge (range
# reduction), around the multiples of pi/2, and a spread of ordinary values.
_SAMPLE = [0.0, -0.0, 5e-324, 1e-300, 1e-8, 0.1, 0.5, 0.7, 1.0, 1.5707963267948966,
           2.0, 3.141592653589793, 4.71238898038469, 10.0, 100.0, 1e5, 1e10, 1e22,
           1e300] + list(np.random.default_rng(0).standard_normal(192) * 8.0)


@functools.cache
def _matches_numpy(prim: Any) -> bool:
    """A template that calls ``math`` gives the primitive's NumPy results on the samples
    (glibc's ``sin`` against NumPy's own SIMD loops may differ in the last bit)."""
    template = prim.float_template
    if not any(n in _MATH for n in _names_in(template)):
        return True  # operators only: IEEE arithmetic, as NumPy's
    expression = compile(template.format("x"), "<float template>", "eval")
    for x in _SAMPLE + [-s for s in _SAMPLE]:
        try:
            on_float = eval(expression, dict(_MATH), {"x": float(x)})
        except (ArithmeticError, ValueError):
            continue  # NumPy's inf or nan there: the NumPy program runs
        with np.errstate(all="ignore"):
            expected = prim.impl(np.asarray(x))
        if np.float64(on_float).tobytes() != np.float64(expected).tobytes():
            return False
    return True


_MATH = {n: getattr(math, n) for n in dir(math) if not n.startswith("_")}


def _names_in(template: str) -> set[str]:
    tree = expression_tree(template.replace("{", "_slot").replace("}", "_"))
    return {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}


def numpy_fallback(program: Program) -> Callable[..., Sequence[Any]]:
    """``on_numpy`` of the generated code: ``program`` in the interpreter, on the float64
    scalars the Python floats are (a float holds a float64's bits exactly)."""
    def on_numpy(*floats: float) -> Sequence[Any]:
        return interpreter.run(program, [np.asarray(x, _FLOAT64) for x in floats])

    return on_numpy


def generate(program: Program, title: str = "") -> Generated:
    """The gast module of ``program`` on Python floats (``on_floats(program)`` holds);
    its globals bind ``on_numpy`` to ``numpy_fallback(program)``."""
    return _FloatWriter(program).module(title)


class _FloatWriter(_Writer):
    """``to_gast``'s writer with float templates: same statements, fusion and comments."""

    def __init__(self, program: Program):
        super().__init__(program, fuse=True, reuse=False, kind="forward")
        # A template that reads an input twice (``x * x``) reads a name, not an
        # expression computed twice.
        for eqn in program.eqns:
            slots = eqn.prim.float_template.count("{0}")
            if slots > 1:
                self.inlined -= {v for v in eqn.inputs if isinstance(v, Var)}
        self.checked = self._checked_vars()

    def _checked_vars(self) -> list[Var]:
        """What the run checks is finite: the outputs, and what a division reads (it
        turns an ``inf`` NumPy warned about into a finite value)."""
        checked = [v for v in self.program.outputs if isinstance(v, Var)]
        for eqn in self.program.eqns:
            if "/" in eqn.prim.float_template:
                checked += [v for v in eqn.inputs if isinstance(v, Var)]
        self.inlined -= set(checked)
        return list(dict.fromkeys(checked))

    def expr(self, value: Any) -> gast.expr:
        if isinstance(value, Literal):
            return _float_literal(float(value.value), self.globs)
        if value in self.inlined:
            eqn = self.defining[value]
            return self.render(eqn, [self.expr(v) for v in eqn.inputs])
        return name(self.locals(value))

    def render(self, eqn: Eqn, args: list) -> gast.expr:
        return _fill(expression_tree(eqn.prim.float_template.replace("{", "_slot")
                                     .replace("}", "_")), args, self.globs)

    def statement(self, index: int, eqn: Eqn) -> gast.stmt:
        value = self.render(eqn, [self.expr(v) for v in eqn.inputs])
        out = eqn.outs[0]
        target = name(self.locals.define(out, self._hint(eqn, out)), store=True)
        return make(gast.Assign, targets=[target], value=value, type_comment=None)

    def _output(self, value: Any) -> gast.expr:
        if isinstance(value, Var):  # back to the float64 scalar NumPy's code returns
            float64 = self.globs.bind(np.float64, "float64", ("from", "numpy", "float64"))
            return call(float64, [self.expr(value)])
        return super()._output(value)

    def function(self) -> gast.FunctionDef:
        """The statements in a ``try`` (``math`` raises where NumPy gives inf or nan),
        then the finite check, then the return; both ways out call ``on_numpy`` on the
        arguments (converted to floats first: a conversion cannot fail)."""
        function = super().function()
        arguments = [a.id for a in function.args.args]
        conversions = [make(gast.Assign, targets=[name(a, store=True)],
                            value=call("float", [name(a)]), type_comment=None)
                       for a in arguments]
        *statements, returned = function.body
        on_numpy = self.globs.bind(
            numpy_fallback(self.program), "on_numpy",
            ("unavailable", "on_numpy: the traced NumPy program, run by gradtape"))
        give_up = make(gast.Return, value=call(on_numpy, [name(a) for a in arguments]))
        errors = make(gast.Tuple, elts=[name("ArithmeticError"), name("ValueError")],
                      ctx=gast.Load())
        handler = make(gast.ExceptHandler, type=errors, name=None, body=[give_up])
        guarded = make(gast.Try, body=statements, handlers=[handler], orelse=[],
                       finalbody=[]) if statements else None
        function.body = conversions + ([guarded] if guarded else [])
        if self.checked:
            function.body.append(self._finite_check(give_up))
        function.body.append(returned)
        return function

    def _finite_check(self, give_up: gast.stmt) -> gast.stmt:
        """``if not isfinite(a + b): return on_numpy(...)``: a sum is finite only if each
        term is (one that overflows finite terms costs a NumPy run, never a wrong value)."""
        terms = [self.expr(v) for v in self.checked]
        total = terms[0]
        for term in terms[1:]:
            total = make(gast.BinOp, left=total, op=gast.Add(), right=term)
        isfinite = self.globs.bind(math.isfinite, "isfinite", ("from", "math", "isfinite"))
        test = make(gast.UnaryOp, op=gast.Not(), operand=call(isfinite, [total]))
        return make(gast.If, test=test, body=[give_up], orelse=[])

    def module(self, title: str) -> Generated:
        function = self.function()
        lines = _title_lines(title, self.kind) + _NOTE
        header = [comment(self.comments, line) for line in lines]
        body = header + import_statements(self.globs) + [function]
        return Generated(gast.Module(body=body, type_ignores=[]), dict(self.globs.objects),
                         self.kind, self.comments)


def _fill(node: Any, args: list, globs: GlobalNames) -> Any:
    """A copy of the template tree with its slots replaced by ``args`` and its names
    bound to ``math``'s functions."""
    if isinstance(node, list):
        return [_fill(n, args, globs) for n in node]
    if not isinstance(node, gast.AST):
        return node
    if isinstance(node, gast.Name):
        if node.id.startswith("_slot"):
            return args[int(node.id[len("_slot"):-1])]
        function = _MATH[node.id]
        return name(globs.bind(function, node.id, ("from", "math", node.id)))
    return make(node.__class__, **{f: _fill(getattr(node, f), args, globs)
                                   for f in node._fields})


def _float_literal(value: float, globs: GlobalNames) -> gast.expr:
    if math.isnan(value) or math.isinf(value):
        node = name(globs.bind(math.nan if math.isnan(value) else math.inf,
                               "nan" if math.isnan(value) else "inf",
                               ("from", "math", "nan" if math.isnan(value) else "inf")))
    else:
        node = constant(math.fabs(value))
    return make(gast.UnaryOp, op=USUB, operand=node) if math.copysign(1, value) < 0 else node
