"""Random differentiable programs for the property tests (hypothesis strategy ``programs``).

A program is a list of steps over a growing pool of values: the inputs first, then one
value per step. Steps cover elementwise unary and binary ops (with broadcasting),
reductions over random axes, views and copies (reshape, transpose, slicing, concat,
stack, tile, pad, gather, ...), contractions (matmul, tensordot) and nn ops (softmax,
log_softmax, cross-entropies). The generator tracks every value's shape, so each step is
valid, and a bound on its magnitude, so every op stays inside a safe domain (no
overflow, ``exp`` only of small values, divisions and logs only of positive values):
central finite differences in float64 are then accurate enough to check gradients.

Inputs are drawn in [-1, 1]. Kinks (``abs``, ``relu``, ``maximum``, ``where``) are met only
where two values are the same function of the inputs (a tie of ``x`` with itself), where
every gradient convention that sums the tied weights to one is right.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

import gradtape as gt

Shape = tuple[int, ...]

# Largest magnitude any value of a program may reach.
LIMIT = 8.0
# Largest number of elements of any value.
MAX_SIZE = 24


@dataclass(frozen=True)
class Step:
    op: str
    args: tuple[int, ...]  # indices into the pool of values
    params: tuple = ()


@dataclass(frozen=True)
class Program:
    """``program(*inputs)`` runs it on tensors (or arrays) and returns its output tensor."""

    input_shapes: tuple[Shape, ...]
    steps: tuple[Step, ...]
    extras: tuple[int, ...]  # values whose sums are added to the last one
    output_shape: Shape

    def __call__(self, *inputs: Any) -> gt.Tensor:
        values = list(inputs)
        for step in self.steps:
            values.append(OPS[step.op](*(values[i] for i in step.args), *step.params))
        out = values[-1]
        for n, k in enumerate(self.extras):
            out = out + gt.reduce_sum(values[k]) * (0.5 + 0.25 * n)
        return out

    def __repr__(self) -> str:
        lines = [f"inputs {list(self.input_shapes)}"]
        first = len(self.input_shapes)
        for k, step in enumerate(self.steps):
            params = "".join(f", {_short(p)}" for p in step.params)
            args = ", ".join(f"v{i}" for i in step.args)
            lines.append(f"v{first + k} = {step.op}({args}{params})")
        extras = " + ".join(f"sum(v{k})*{0.5 + 0.25 * n}" for n, k in enumerate(self.extras))
        lines.append(f"out = v{first + len(self.steps) - 1}" + (f" + {extras}" if extras else ""))
        return "Program:\n    " + "\n    ".join(lines)


def _short(p: Any) -> str:
    if isinstance(p, np.ndarray):
        return f"array{p.shape}" if p.size > 6 else np.array2string(p, precision=3)
    return repr(p)


# --- the ops ------------------------------------------------------------------------------

# Unary elementwise ops: name -> (function, bound of the result from the operand's bound,
# largest operand bound the op accepts).
UNARY: dict[str, tuple[Callable, Callable[[float], float], float]] = {
    "sin": (gt.sin, lambda b: 1.0, math.inf),
    "cos": (gt.cos, lambda b: 1.0, math.inf),
    "tanh": (gt.tanh, lambda b: 1.0, math.inf),
    "sigmoid": (gt.sigmoid, lambda b: 1.0, math.inf),
    "arctan": (gt.atan, lambda b: 1.6, math.inf),
    "softplus": (gt.nn.softplus, lambda b: b + 0.7, math.inf),
    "square": (gt.square, lambda b: b * b, math.inf),
    "exp": (gt.exp, math.exp, 2.0),
    "expm1": (gt.expm1, math.expm1, 2.0),
    "cosh": (gt.cosh, math.cosh, 2.0),
    "asinh": (gt.asinh, lambda b: b, math.inf),
    "abs": (gt.abs, lambda b: b, math.inf),
    "negative": (gt.negative, lambda b: b, math.inf),
    "scale": (lambda a: a * 2.5, lambda b: 2.5 * b, math.inf),
    "shift": (lambda a: 0.5 - a, lambda b: b + 0.5, math.inf),
    "log_1p_square": (lambda a: gt.log(1.0 + gt.square(a)), lambda b: math.log1p(b * b),
                      math.inf),
    "sqrt_1p_square": (lambda a: gt.sqrt(1.0 + a * a), lambda b: math.sqrt(1 + b * b),
                       math.inf),
    "reciprocal_1p_square": (lambda a: gt.reciprocal(1.0 + a * a), lambda b: 1.0, math.inf),
    "pow_1p_square": (lambda a: gt.pow(1.0 + a * a, 1.5), lambda b: (1 + b * b) ** 1.5, 1.5),
    "clip": (lambda a: gt.clip_by_value(a, -0.5, 0.7), lambda b: 0.7, math.inf),
    "relu": (gt.nn.relu, lambda b: b, math.inf),
    "leaky_relu": (gt.nn.leaky_relu, lambda b: b, math.inf),
    "relu6": (gt.nn.relu6, lambda b: min(b, 6.0), math.inf),
    "elu": (gt.nn.elu, lambda b: max(b, 1.0), math.inf),
    "selu": (gt.nn.selu, lambda b: 1.76 * max(b, 1.0), math.inf),
    "silu": (gt.nn.silu, lambda b: b, math.inf),
    "log_sigmoid": (gt.nn.log_sigmoid, lambda b: b + 0.7, math.inf),
    "sigmoid_xent": (lambda a: gt.nn.sigmoid_cross_entropy_with_logits(
        labels=np.full(a.shape, 0.3), logits=a), lambda b: b + 0.7, math.inf),
}

# Binary elementwise ops (broadcasting): name -> (function, bound, largest operand bounds).
BINARY: dict[str, tuple[Callable, Callable[[float, float], float], tuple[float, float]]] = {
    "add": (gt.add, lambda a, b: a + b, (math.inf, math.inf)),
    "subtract": (gt.subtract, lambda a, b: a + b, (math.inf, math.inf)),
    "multiply": (gt.multiply, lambda a, b: a * b, (math.inf, math.inf)),
    "maximum": (gt.maximum, max, (math.inf, math.inf)),
    "minimum": (gt.minimum, max, (math.inf, math.inf)),
    "divide_1p_square": (lambda a, b: a / (1.0 + b * b), lambda a, b: a, (math.inf, math.inf)),
    "where_greater": (lambda a, b: gt.where(a > b, a * b, a - b),
                      lambda a, b: max(a * b, a + b), (math.inf, math.inf)),
    "logaddexp": (gt.logaddexp, lambda a, b: max(a, b) + 0.7, (math.inf, math.inf)),
    "pow_positive": (lambda a, b: gt.pow(1.0 + a * a, b), lambda a, b: (1 + a * a) ** b,
                     (1.5, 2.0)),
    "atan2": (lambda a, b: gt.atan2(a, 2.0 + b * b), lambda a, b: 1.6, (math.inf, math.inf)),
}

# Reductions: name -> (function, bound from the operand's bound and the reduced count).
REDUCTIONS: dict[str, tuple[Callable, Callable[[float, int], float]]] = {
    "reduce_sum": (gt.reduce_sum, lambda b, n: b * n),
    "reduce_mean": (gt.reduce_mean, lambda b, n: b),
    "reduce_max": (gt.reduce_max, lambda b, n: b),
    "reduce_min": (gt.reduce_min, lambda b, n: b),
    "reduce_prod": (gt.reduce_prod, lambda b, n: b ** n),
    "reduce_logsumexp": (gt.reduce_logsumexp, lambda b, n: b + math.log(n)),
    "reduce_variance": (gt.reduce_variance, lambda b, n: b * b),
}


def _unstack_one(a, axis, k):
    return gt.unstack(a, axis=axis)[k]


def _softmax_xent(a, labels):
    return gt.nn.softmax_cross_entropy_with_logits(labels=labels, logits=a)


OPS: dict[str, Callable] = {
    **{name: fn for name, (fn, _, _) in UNARY.items()},
    **{name: fn for name, (fn, _, _) in BINARY.items()},
    **{name: lambda a, axis, keepdims, fn=fn: fn(a, axis=axis, keepdims=keepdims)
       for name, (fn, _) in REDUCTIONS.items()},
    "l2_loss": gt.nn.l2_loss,
    "cumsum": lambda a, axis, exclusive, reverse: gt.cumsum(a, axis, exclusive, reverse),
    "cumprod": lambda a, axis: gt.cumprod(a, axis),
    "reshape": gt.reshape,
    "transpose": lambda a, perm: gt.transpose(a, perm=perm),
    "getitem": lambda a, index: a[index],
    "concat": lambda a, b, axis: gt.concat([a, b], axis=axis),
    "stack": lambda a, b, axis: gt.stack([a, b], axis=axis),
    "unstack": _unstack_one,
    "broadcast_to": gt.broadcast_to,
    "expand_dims": gt.expand_dims,
    "squeeze": lambda a, axis: gt.squeeze(a, axis=axis),
    "tile": lambda a, multiples: gt.tile(a, multiples),
    "reverse": gt.reverse,
    "pad": lambda a, paddings: gt.pad(a, paddings),
    "gather": lambda a, indices, axis: gt.gather(a, indices, axis=axis),
    "roll": gt.roll,
    "matmul": gt.matmul,
    "matmul_constant": lambda a, c: gt.matmul(a, c),
    "tensordot": lambda a, b: gt.tensordot(a, b, axes=1),
    "tensordot_constant": lambda a, c: gt.tensordot(a, c, axes=1),
    "softmax": lambda a, axis: gt.nn.softmax(a, axis=axis),
    "log_softmax": lambda a, axis: gt.nn.log_softmax(a, axis=axis),
    "softmax_xent": _softmax_xent,
}


# --- drawing steps ------------------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    shape: Shape
    bound: float


def _size(shape: Shape) -> int:
    return math.prod(shape)


def _fits(shape: Shape, bound: float) -> bool:
    return _size(shape) <= MAX_SIZE and bound <= LIMIT


def _broadcast(a: Shape, b: Shape) -> Shape | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _draw_unary(draw, pool, a):
    name = draw(st.sampled_from(sorted(UNARY)))
    _, bound, largest = UNARY[name]
    if pool[a].bound > largest:
        return None
    return Step(name, (a,)), Value(pool[a].shape, bound(pool[a].bound))


def _draw_binary(draw, pool, a):
    partners = [i for i, v in enumerate(pool) if _broadcast(pool[a].shape, v.shape) is not None]
    b = draw(st.sampled_from(partners))
    if draw(st.booleans()):
        a, b = b, a
    name = draw(st.sampled_from(sorted(BINARY)))
    _, bound, (largest_a, largest_b) = BINARY[name]
    if pool[a].bound > largest_a or pool[b].bound > largest_b:
        return None
    shape = _broadcast(pool[a].shape, pool[b].shape)
    return Step(name, (a, b)), Value(shape, bound(pool[a].bound, pool[b].bound))


def _draw_axis_set(draw, rank):
    """``None``, one axis (maybe negative) or a tuple of axes."""
    how = draw(st.sampled_from(["all", "one", "several"]))
    if how == "all":
        return None
    if how == "one":
        return draw(st.integers(-rank, rank - 1))
    return tuple(draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank,
                               unique=True)))


def _reduced_shape(shape, axis, keepdims):
    axes = range(len(shape)) if axis is None else \
        [a % len(shape) for a in ((axis,) if isinstance(axis, int) else axis)]
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _draw_reduction(draw, pool, a):
    shape = pool[a].shape
    if not shape:
        return None
    name = draw(st.sampled_from(sorted(REDUCTIONS) + ["l2_loss"]))
    if name == "l2_loss":
        return Step(name, (a,)), Value((), _size(shape) * pool[a].bound ** 2 / 2)
    axis = _draw_axis_set(draw, len(shape))
    keepdims = draw(st.booleans())
    out = _reduced_shape(shape, axis, keepdims)
    count = _size(shape) // max(_size(out), 1)
    return (Step(name, (a,), (axis, keepdims)),
            Value(out, REDUCTIONS[name][1](pool[a].bound, count)))


def _draw_cumulative(draw, pool, a):
    shape, b = pool[a].shape, pool[a].bound
    if not shape:
        return None
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    if draw(st.booleans()):
        flags = (draw(st.booleans()), draw(st.booleans()))
        return Step("cumsum", (a,), (axis, *flags)), Value(shape, b * n)
    return Step("cumprod", (a,), (axis,)), Value(shape, max(b, 1.0) ** n)


def _reshape_targets(shape):
    size = _size(shape)
    targets = [(size,), (-1,), shape[::-1], (1,) + shape, shape + (1,),
               tuple(d for d in shape if d != 1)]
    if size % 2 == 0 and size > 2:
        targets += [(2, size // 2), (size // 2, 2, 1)]
    if size % 3 == 0 and size > 3:
        targets += [(3, -1)]
    return [t for t in targets if len(t) <= 4]


def _draw_view(draw, pool, a):
    shape, b = pool[a].shape, pool[a].bound
    rank = len(shape)
    kind = draw(st.sampled_from(["reshape", "transpose", "getitem", "broadcast_to",
                                 "expand_dims", "squeeze", "tile", "reverse", "pad",
                                 "gather", "roll", "unstack"]))
    if kind == "reshape":
        target = draw(st.sampled_from(_reshape_targets(shape)))
        out = tuple(np.empty(shape).reshape(target).shape)
        return Step(kind, (a,), (target,)), Value(out, b)
    if kind == "expand_dims":
        axis = draw(st.integers(-rank - 1, rank))
        out = tuple(np.expand_dims(np.empty(shape), axis).shape)
        return Step(kind, (a,), (axis,)), Value(out, b)
    if kind == "broadcast_to":
        lead = (draw(st.integers(2, 3)),) if draw(st.booleans()) or rank == 0 else ()
        out = lead + tuple(draw(st.integers(2, 3)) if d == 1 and draw(st.booleans()) else d
                           for d in shape)
        return Step(kind, (a,), (out,)), Value(out, b)
    if rank == 0:
        return None
    if kind == "transpose":
        perm = tuple(draw(st.permutations(range(rank))))
        return Step(kind, (a,), (perm,)), Value(tuple(shape[p] for p in perm), b)
    if kind == "getitem":
        return _draw_getitem(draw, a, shape, b)
    if kind == "squeeze":
        ones = [i for i, d in enumerate(shape) if d == 1]
        if not ones:
            return None
        axis = draw(st.sampled_from([None, *ones]))
        out = tuple(d for i, d in enumerate(shape) if d != 1 or (axis is not None and i != axis))
        return Step(kind, (a,), (axis,)), Value(out, b)
    if kind == "tile":
        multiples = tuple(draw(st.integers(1, 2)) for _ in shape)
        return Step(kind, (a,), (multiples,)), Value(tuple(np.multiply(shape, multiples)), b)
    if kind == "reverse":
        axes = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
        return Step(kind, (a,), (axes,)), Value(shape, b)
    if kind == "pad":
        paddings = [[draw(st.integers(0, 1)), draw(st.integers(0, 1))] for _ in shape]
        out = tuple(d + lo + hi for d, (lo, hi) in zip(shape, paddings))
        return Step(kind, (a,), (paddings,)), Value(out, b)
    axis = draw(st.integers(-rank, rank - 1))
    if kind == "gather":
        indices = draw(st.lists(st.integers(0, shape[axis] - 1), min_size=1, max_size=4))
        out = shape[:axis % rank] + (len(indices),) + shape[axis % rank + 1:]
        return Step(kind, (a,), (indices, axis)), Value(out, b)
    if kind == "roll":
        return Step(kind, (a,), (draw(st.integers(-2, 2)), axis)), Value(shape, b)
    k = draw(st.integers(0, shape[axis] - 1))  # unstack, keep one piece
    return Step("unstack", (a,), (axis, k)), Value(shape[:axis % rank] + shape[axis % rank + 1:], b)


def _draw_getitem(draw, a, shape, b):
    index, out = [], []
    for d in shape:
        if draw(st.integers(0, 4)) == 0:
            index.append(draw(st.integers(-d, d - 1)))  # an integer drops the axis
            continue
        step = draw(st.sampled_from([1, 1, 2, -1]))
        start = draw(st.sampled_from([None, *range(-d, d)]))
        stop = draw(st.sampled_from([None, *range(-d, d + 1)]))
        n = len(range(d)[slice(start, stop, step)])
        if n == 0:
            start, stop = None, None
            n = len(range(d)[::step])
        index.append(slice(start, stop, step))
        out.append(n)
    return Step("getitem", (a,), (tuple(index),)), Value(tuple(out), b)


def _draw_join(draw, pool, a):
    shape = pool[a].shape
    if draw(st.booleans()):  # stack with a value of the same shape
        partners = [i for i, v in enumerate(pool) if v.shape == shape]
        b = draw(st.sampled_from(partners))
        axis = draw(st.integers(-len(shape) - 1, len(shape)))
        out = tuple(np.stack([np.empty(shape)] * 2, axis=axis).shape)
        return Step("stack", (a, b), (axis,)), Value(out, max(pool[a].bound, pool[b].bound))
    if not shape:
        return None
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    partners = [i for i, v in enumerate(pool) if len(v.shape) == len(shape) and all(
        d == e for k, (d, e) in enumerate(zip(v.shape, shape)) if k != axis % len(shape))]
    b = draw(st.sampled_from(partners))
    out = list(shape)
    out[axis] += pool[b].shape[axis]
    return Step("concat", (a, b), (axis,)), Value(tuple(out), max(pool[a].bound, pool[b].bound))


def _constant(draw, shape):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return rng.uniform(-1.0, 1.0, shape)


def _draw_contraction(draw, pool, a):
    shape, b = pool[a].shape, pool[a].bound
    if not shape:
        return None
    k = shape[-1]
    n = draw(st.integers(1, 3))
    if len(shape) >= 2 and draw(st.booleans()):  # matmul, with a value or a constant
        partners = [i for i, v in enumerate(pool) if len(v.shape) == 2 and v.shape[0] == k]
        out = shape[:-1]
        if partners and draw(st.booleans()):
            c = draw(st.sampled_from(partners))
            return (Step("matmul", (a, c)),
                    Value(out + pool[c].shape[1:], b * pool[c].bound * k))
        return (Step("matmul_constant", (a,), (_constant(draw, (k, n)),)),
                Value(out + (n,), b * k))
    partners = [i for i, v in enumerate(pool) if 1 <= len(v.shape) <= 2 and v.shape[0] == k]
    if partners and draw(st.booleans()):
        c = draw(st.sampled_from(partners))
        return (Step("tensordot", (a, c)),
                Value(shape[:-1] + pool[c].shape[1:], b * pool[c].bound * k))
    c_shape = (k,) if draw(st.booleans()) else (k, n)
    return (Step("tensordot_constant", (a,), (_constant(draw, c_shape),)),
            Value(shape[:-1] + c_shape[1:], b * k))


def _draw_nn(draw, pool, a):
    shape, b = pool[a].shape, pool[a].bound
    if not shape:
        return None
    name = draw(st.sampled_from(["softmax", "log_softmax", "softmax_xent"]))
    if name == "softmax_xent":
        labels = _constant(draw, shape) ** 2
        labels = labels / labels.sum(axis=-1, keepdims=True)
        return Step(name, (a,), (labels,)), Value(shape[:-1], 2 * b + math.log(shape[-1]))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    bound = 1.0 if name == "softmax" else 2 * b + math.log(shape[axis])
    return Step(name, (a,), (axis,)), Value(shape, bound)


KINDS = {
    "unary": _draw_unary, "binary": _draw_binary, "reduction": _draw_reduction,
    "cumulative": _draw_cumulative, "view": _draw_view, "join": _draw_join,
    "contraction": _draw_contraction, "nn": _draw_nn,
}
# Elementwise ops are drawn more often than the rest: they are most of real programs.
KIND_WEIGHTS = ["unary"] * 3 + ["binary"] * 3 + sorted(KINDS)


def _draw_step(draw, pool):
    a = draw(st.integers(0, len(pool) - 1))
    drawn = KINDS[draw(st.sampled_from(KIND_WEIGHTS))](draw, pool, a)
    if drawn is not None and _fits(drawn[1].shape, drawn[1].bound):
        return drawn
    # Not applicable here (a scalar, too large, out of the op's domain): a bounded op.
    name = draw(st.sampled_from(["sin", "tanh", "sigmoid", "arctan"]))
    return Step(name, (a,)), Value(pool[a].shape, UNARY[name][1](pool[a].bound))


@st.composite
def input_shapes(draw) -> list[Shape]:
    """1-3 shapes that broadcast together: suffixes of one base shape (the first input
    has its full rank), some dims 1."""
    base = tuple(draw(st.lists(st.integers(2, 3), min_size=1, max_size=3)))
    shapes = []
    for n in range(draw(st.integers(1, 3))):
        rank = len(base) if n == 0 else draw(st.integers(0, len(base)))
        shapes.append(tuple(1 if draw(st.integers(0, 3)) == 0 else d
                            for d in base[len(base) - rank:]))
    return shapes


@st.composite
def programs(draw, min_steps: int = 5, max_steps: int = 30) -> Program:
    shapes = draw(input_shapes())
    pool = [Value(s, 1.0) for s in shapes]
    steps = []
    for _ in range(draw(st.integers(min_steps, max_steps))):
        step, value = _draw_step(draw, pool)
        steps.append(step)
        pool.append(value)
    extras = tuple(draw(st.lists(st.integers(0, len(pool) - 2), max_size=2)))
    return Program(tuple(shapes), tuple(steps), extras, pool[-1].shape)


def random_inputs(program: Program, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, s) for s in program.input_shapes]

