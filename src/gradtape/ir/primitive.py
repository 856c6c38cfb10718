"""The ``Primitive`` type: one operation, declared in one block.

A primitive is declared once, in one constructor call: its NumPy implementation, how
to compute its output shape and dtype, its derivative rules (VJP and JVP), its batching
rule, the template the code generator writes it with, and its flags. The rules are
written with the library's own ops, so evaluating them on IR values *emits IR*: the
backward of a program is another program of the same primitives.

This module depends only on ``ir.nodes``: the IR knows what a primitive is without
knowing any op (``docs/adding-a-primitive.md`` shows a declaration).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .nodes import Aval, IRValue, Literal

# A VJP rule: (cotangent, output, *inputs, **params) -> one cotangent (or None) per input.
VJPRule = Callable[..., "tuple[Any, ...]"]
# A batching rule: (size, args, batched, **params) -> the output(s), batched at axis 0
# (``ad/batching.py`` describes the convention).
BatchRule = Callable[..., Any]


class PerPrimitive(NamedTuple):
    """A rule that needs the primitive it belongs to (most batching rules re-apply
    their own primitive with shifted params): ``make(prim)`` builds it once the
    primitive exists, so it can still be declared inside the constructor call."""

    make: Callable[[Primitive], Callable[..., Any]]


def per_primitive(make: Callable[[Primitive], Callable[..., Any]]) -> PerPrimitive:
    """Declare ``batch=per_primitive(make)``: the rule is ``make(the primitive)``."""
    return PerPrimitive(make)


class ArrayShorthand(NamedTuple):
    """A shorter array template for some param values (``x.T`` for a transpose with
    axes ``(1, 0)``): used when ``applies(params)``; ``implied`` names the params the
    shorthand leaves out because their value is then known."""

    applies: Callable[[dict], bool]
    template: str
    implied: frozenset


# ``same_dtype=EVERY_INPUT``: all inputs must share a dtype under TF's rule.
EVERY_INPUT = slice(None)


class Primitive:
    """One operation the tape records and the compiler understands."""

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        *,
        vjp: VJPRule | None = None,
        jvp: Callable[..., Any] | None = None,
        shape_rule: Callable[..., Any] | None = None,
        batch: BatchRule | PerPrimitive | None = None,
        template: str | None = None,
        array_template: str | None = None,
        array_shorthands: tuple[ArrayShorthand, ...] = (),
        float_template: str | None = None,
        elementwise: bool = False,
        multiple_results: bool = False,
        differentiable: bool = True,
        cacheable: bool = True,
        pure: bool = True,
        eager: Callable[..., Any] | None = None,
        run_on_tensors: Callable[..., Any] | None = None,
        run_consuming: Callable[..., Any] | None = None,
        kind_neutral: bool = False,
        index_operands: bool = False,
        same_dtype: slice | None = None,
        effect: bool = False,
        residuals: tuple[str, ...] | None = None,
    ):
        self.name = name
        self.impl = impl
        # What eager ops run, when it differs from impl: Python's operators give NumPy
        # scalars NumPy's fast scalar math (a ufunc call on two float64 scalars costs ten
        # times ``a * b``); arrays go to the same ufunc either way.
        self.eager = impl if eager is None else eager
        self.vjp = vjp
        self.jvp = jvp
        self.shape_rule = shape_rule
        # None: ir/batching falls back to the elementwise rule or one call per element.
        self.batch = batch.make(self) if isinstance(batch, PerPrimitive) else batch
        # How generated code writes an equation: ``{0}``, ``{1}`` are the inputs,
        # ``{name}`` the params; the array template serves when input 0 is an array of
        # rank >= 1 (codegen/primitives.py). ``()`` means a call of the implementation.
        if array_template is not None and template is None:
            raise ValueError(f"{name}: an array_template needs a template beside it")
        self.templates: tuple[str, ...] = tuple(
            t for t in (template, array_template) if t is not None)
        self.array_shorthands = array_shorthands
        # How it is written on Python floats, where every value of a traced function is
        # a float64 scalar (codegen/floats.py): Python operators, names from ``math``
        # that give NumPy's results bit for bit. ``None``: that function stays on NumPy.
        self.float_template = float_template
        # Elementwise primitives broadcast their inputs; the fusion pass merges them.
        self.elementwise = elementwise
        self.multiple_results = multiple_results
        # Non-differentiable primitives are never recorded: their outputs are constants.
        self.differentiable = differentiable and vjp is not None
        # False when params hold a Python callable (custom_gradient): never cached.
        self.cacheable = cacheable
        # False when two equal equations may give different results: CSE keeps both.
        self.pure = pure
        # Set when running a backward on tensors must call this instead of binding
        # (custom_gradient's grad_fn runs user code the recording tapes must see).
        self.run_on_tensors = run_on_tensors
        # Set when the interpreter may call this instead of impl with the operand list
        # itself (``run_consuming(operands, **params)``), having dropped the operands
        # that die here: the callee may empty the list to free them before it returns
        # (custom_gradient_vjp: recompute_grad's upstream gradients, which the recomputed
        # block's backward then frees after their last use).
        self.run_consuming = run_consuming
        # True when the implementation is plain Python around other programs or the
        # user's code (a @gt.function call, a nested backward, custom_gradient), or takes
        # no data (random draws): it runs as it is on any array kind (core/backends.py).
        self.kind_neutral = kind_neutral
        # True when the inputs after the first are integer index arrays gradtape makes
        # as NumPy arrays (``x[[0, 2]]``): not the user's data, so they may mix with
        # another library's arrays.
        self.index_operands = index_operands
        # The inputs TF requires to share one dtype (``slice(None)``: all of them; ``where``
        # leaves out its condition): gt.config(dtype_promotion="tf") checks the tensors
        # among them in ``bind`` (ops/promotion.py).
        self.same_dtype = same_dtype
        # True when it runs for what it does, not its result (gt.print in a loop body):
        # never dead code, whether or not its output is read. Dead-code elimination asks
        # only impure primitives, so an effect must be declared impure.
        if effect and pure:
            raise ValueError(f"primitive {name!r}: an effect primitive must be pure=False")
        self.effect = effect
        # What the VJP and JVP read of the op's values ("in0", "in1"... and "out" for
        # every output); ``None``: everything. A tape keeps only these arrays of a
        # record (tape/recording.py), the rest stand in as their shape and dtype.
        self.residuals = residuals
        self.kept_inputs, self.keeps_outputs = _kept(name, residuals)
        # The positions a record may release, made once here so a recorded op pays one
        # check (``None``: it keeps every input: undeclared, or all declared read). A
        # record of fewer inputs than ``released_inputs[0]`` skips releasing.
        released = () if self.kept_inputs is None \
            else tuple(p for p in range(_MANY_INPUTS) if p not in self.kept_inputs)
        self.released_inputs: tuple[int, ...] | None = released or None
        # Whether a record whose output is no NumPy array (a scalar) may still release
        # inputs: not for an elementwise op, whose inputs are no larger than its output.
        self.releases_at_scalar_output = self.released_inputs is not None and not elementwise
        # Whether a record of it may release anything at all: bind's fast branch skips
        # the release checks in one attribute read for an op that keeps it all (matmul).
        self.releases = self.released_inputs is not None or not self.keeps_outputs
        # Whether bind may hand it to a lone tape directly (GradientTape.on_op_alone):
        # one attribute read on bind's fast branch instead of two.
        self.records_alone = self.differentiable and not multiple_results

    def __repr__(self) -> str:
        return f"Primitive({self.name})"

    def abstract_eval(self, inputs: tuple[IRValue, ...], params: dict) -> list[Aval]:
        """Output avals for IR inputs, without any real data."""
        if self.shape_rule is not None:
            out = self.shape_rule(*inputs, **params)
        else:
            out = _eval_on_dummies(self, inputs, params)
        return list(out) if self.multiple_results else [out]


def _dummy(value: IRValue, elementwise: bool) -> Any:
    if isinstance(value, Literal):
        return value.value
    shape, dtype = value.aval
    if elementwise and shape:
        # Same rank keeps NumPy's promotion rules; size 1 keeps it cheap.
        return np.ones((1,) * len(shape), dtype)
    return np.ones(shape, dtype)


# (primitive, what the dtype depends on) -> result dtype of an elementwise primitive:
# autodiff asks this for every equation it emits, and running NumPy each time showed.
# A Python scalar enters the key by its type and the range class of its value (never the
# value: a learning rate that changes every step would add a key per step), and the
# memo is dropped whole when full (params can hold any value).
_elementwise_dtypes: dict = {}
MAX_ELEMENTWISE_DTYPES = 4096


def _dtype_key(v: IRValue) -> tuple:
    if isinstance(v, Literal):  # a Python scalar's type and range, a NumPy scalar's dtype
        value = v.value
        cls = value.__class__
        return (cls, _value_class(value)) if cls in _SCALAR_TYPES else (v.aval.dtype,)
    return (v.aval.dtype, not v.aval.shape)  # 0-d or not: NumPy 1 promotes by value


def _value_class(value: bool | int | float | complex) -> Any:
    """What of a Python scalar's value NumPy's result dtype can depend on: for an int,
    the integer types that hold it (its sign and bit length: NumPy 2 raises when one
    does not fit, NumPy 1 picks the smallest that holds it); for a float or complex,
    NumPy 1's smallest type that holds it (``np.min_scalar_type``, also NaN and inf).
    NumPy 2 (NEP 50) ignores the value otherwise. A few dozen classes in all."""
    cls = value.__class__
    if cls is bool:
        return value
    if cls is int:
        return (value < 0, min((value if value >= 0 else ~value).bit_length(), 65))
    return np.min_scalar_type(value)


def _eval_on_dummies(prim: Primitive, inputs, params):
    """Default shape rule: run the NumPy implementation on arrays of ones."""
    if prim.elementwise:
        shape = np.broadcast_shapes(*(v.aval.shape for v in inputs))
        try:
            key = (prim, tuple(_dtype_key(v) for v in inputs), tuple(params.items()))
            dtype = _elementwise_dtypes.get(key)
        except TypeError:  # an unhashable param: no caching
            key = dtype = None
        if dtype is None:
            dummies = [_dummy(v, True) for v in inputs]
            with np.errstate(all="ignore"):
                dtype = np.asarray(prim.impl(*dummies, **params)).dtype
            if key is not None:
                if len(_elementwise_dtypes) >= MAX_ELEMENTWISE_DTYPES:
                    _elementwise_dtypes.clear()
                _elementwise_dtypes[key] = dtype
        return Aval(shape, dtype)
    dummies = [_dummy(v, prim.elementwise) for v in inputs]
    with np.errstate(all="ignore"):
        out = prim.impl(*dummies, **params)
    if prim.multiple_results:
        return [Aval(tuple(np.shape(o)), np.asarray(o).dtype) for o in out]
    return Aval(tuple(np.shape(out)), np.asarray(out).dtype)



_SCALAR_TYPES = frozenset((bool, int, float, complex))


_MANY_INPUTS = 256


def _kept(name: str, residuals: tuple[str, ...] | None) -> tuple[frozenset[int] | None, bool]:
    """The input positions and whether the outputs a record keeps, from ``residuals``."""
    if residuals is None:
        return None, True
    inputs = set()
    for r in residuals:
        if r == "out":
            continue
        digits = r[2:].rstrip(":")
        if not (r.startswith("in") and digits.isdigit()):
            raise ValueError(f"{name}: residuals name 'out', 'in<k>' or 'in<k>:' (inputs "
                             f"k and after), not {r!r}")
        k = int(digits)
        # "in<k>:": every input from k on (an op of any number of inputs, e.g. the
        # index arrays of getitem); no op has this many.
        inputs.update(range(k, _MANY_INPUTS) if r.endswith(":") else (k,))
    return frozenset(inputs), "out" in residuals
