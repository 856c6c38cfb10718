"""einsum: NumPy's subscripts parsed to explicit ones, the primitive and its transpose.

The ``einsum`` primitive takes explicit subscripts with one letter per axis (the
wrapper spells out ``'...'`` in free letters and broadcasts size-1 axes visibly). Its VJP
for an operand is another einsum of the cotangent with the other operands, producing
that operand's letters, then two fix-ups: letters summed within that operand alone are
broadcast back, and repeated letters (a diagonal read, ``'ii->i'``) are written back onto
the diagonal by ``einsum_embed``, whose own VJP is the diagonal-reading einsum. Both
primitives' rules are made of the two, so every order of derivative stays in the family.
"""

from __future__ import annotations

import string
from collections import Counter

import numpy as np

from ..ir.nodes import Aval
from . import elementwise as _ew
from . import reduce as _reduce
from . import shape as _shape
from .numpy_dispatch import implements
from .registry import EVERY_INPUT, Primitive, bind, list_operands, unchanged

__all__ = ["einsum"]

# --- the primitives ----------------------------------------------------------------------------

_LETTERS = string.ascii_letters


def _split_spec(subscripts: str) -> tuple[list[str], str]:
    lhs, out = subscripts.split("->")
    return lhs.split(","), out


def _einsum_impl(*operands, subscripts):
    # Planning a contraction order (and BLAS calls) costs tens of microseconds: worth it
    # for three or more operands, and for two only when the contraction is big.
    optimize = len(operands) > 2
    if len(operands) == 2:
        sizes = {}
        for term, x in zip(subscripts.split("->")[0].split(","), operands):
            sizes.update(zip(term, np.shape(x)))
        optimize = int(np.prod(list(sizes.values()), dtype=np.float64)) > 1 << 16
    return np.einsum(subscripts, *operands, optimize="greedy" if optimize else False)


def _einsum_shape(*operands, subscripts):
    terms, out = _split_spec(subscripts)
    sizes = {}
    for term, x in zip(terms, operands):
        sizes.update(zip(term, x.shape))
    return Aval(tuple(sizes[c] for c in out), np.result_type(*(x.dtype for x in operands)))


def _einsum_vjp(g, y, *operands, subscripts):
    terms, out = _split_spec(subscripts)
    cts = []
    for i, x in enumerate(operands):
        if not np.issubdtype(x.dtype, np.inexact):
            cts.append(None)
            continue
        term = terms[i]
        unique = "".join(dict.fromkeys(term))
        other_terms = terms[:i] + terms[i + 1:]
        others = [_ew.conj(o) for o in operands[:i] + operands[i + 1:]]
        reachable = set(out).union(*other_terms)
        kept = "".join(c for c in unique if c in reachable)
        ct = _contract([out, *other_terms], kept, [g, *others])
        if kept != unique:  # letters summed within this operand alone: broadcast back
            sizes = dict(zip(term, x.shape))
            ct = _shape.reshape(ct, tuple(sizes[c] if c in reachable else 1 for c in unique))
            ct = _shape.broadcast_to(ct, tuple(sizes[c] for c in unique))
        if unique != term:  # repeated letters read a diagonal: write onto it
            ct = bind(einsum_embed_p, ct, subscripts=f"{unique}->{term}", shape=tuple(x.shape))
        cts.append(ct)
    return tuple(cts)


def _einsum_jvp(ts, y, *operands, subscripts):
    terms, out = _split_spec(subscripts)
    total = None
    for i, t in enumerate(ts):
        if t is None:
            continue
        part = _contract(terms, out, [*operands[:i], t, *operands[i + 1:]])
        total = part if total is None else total + part
    return total


def _einsum_batch(size, args, batched, subscripts):
    """The batch axis gets a letter of its own."""
    free = [c for c in _LETTERS if c not in subscripts]
    if not free:
        from . import batch_rules

        return batch_rules.batch_by_loop(einsum_p, size, args, batched, subscripts=subscripts)
    terms, out = _split_spec(subscripts)
    terms = [free[0] + t if f else t for t, f in zip(terms, batched)]
    return bind(einsum_p, *args, subscripts=",".join(terms) + "->" + free[0] + out)


einsum_p = Primitive("einsum", _einsum_impl, vjp=_einsum_vjp, jvp=_einsum_jvp,
                     shape_rule=_einsum_shape, batch=_einsum_batch, same_dtype=EVERY_INPUT)


def _embed_impl(x, subscripts, shape):
    src, dst = subscripts.split("->")
    out = np.zeros(shape, np.asarray(x).dtype)
    # A one-operand einsum without summation is a writeable view of its operand.
    np.einsum(f"{dst}->{src}", out)[...] = x
    return out


def _embed_vjp(g, y, x, subscripts, shape):
    src, dst = subscripts.split("->")
    return (_contract([dst], src, [g]),)


def _embed_batch(size, args, batched, subscripts, shape):
    free = [c for c in _LETTERS if c not in subscripts]
    if not free:
        from . import batch_rules

        return batch_rules.batch_by_loop(einsum_embed_p, size, args, batched,
                                      subscripts=subscripts, shape=shape)
    src, dst = subscripts.split("->")
    return bind(einsum_embed_p, args[0], subscripts=f"{free[0]}{src}->{free[0]}{dst}",
                shape=(size,) + tuple(shape))


einsum_embed_p = Primitive(
    "einsum_embed", _embed_impl, vjp=_embed_vjp,
    jvp=lambda ts, y, x, subscripts, shape: bind(
        einsum_embed_p, ts[0], subscripts=subscripts, shape=shape),
    shape_rule=lambda x, subscripts, shape: Aval(tuple(shape), x.dtype),
    batch=_embed_batch,
)


def _contract(terms: list[str], out: str, operands: list):
    """einsum over explicit, validated subscripts; plain sums and transposes stay so."""
    if len(operands) == 1 and len(set(terms[0])) == len(terms[0]):
        x, term = operands[0], terms[0]
        summed = tuple(i for i, c in enumerate(term) if c not in out)
        if summed:
            x = _reduce.sum(x, summed)
            term = "".join(c for c in term if c in out)
        if term != out:
            x = _shape.transpose(x, tuple(term.index(c) for c in out))
        return unchanged(x)
    return bind(einsum_p, *operands, subscripts=",".join(terms) + "->" + out)


def _sublist_term(sublist) -> str:
    parts = []
    for s in sublist:
        if s is Ellipsis:
            parts.append("...")
        elif 0 <= int(s) < len(_LETTERS):
            parts.append(_LETTERS[int(s)])
        else:
            raise ValueError(f"einsum: subscript {s} is not within the valid range [0, 52).")
    return "".join(parts)


def _einsum_arguments(args) -> tuple[str, list]:
    """(subscripts, operands) from either of NumPy's calling conventions."""
    if not args:
        raise TypeError("einsum needs subscripts and at least one operand.")
    if isinstance(args[0], str):
        return args[0], list(args[1:])
    n = len(args) // 2
    operands = list(args[0:2 * n:2])
    terms = [_sublist_term(s) for s in args[1:2 * n:2]]
    spec = ",".join(terms)
    if len(args) % 2:
        spec += "->" + _sublist_term(args[-1])
    return spec, operands


def _check_term(term: str, where: str) -> None:
    body = term.replace("...", "", 1)
    for c in body:
        if c not in _LETTERS:
            raise ValueError(f"einsum: invalid subscript {c!r} in {where} {term!r}.")


def _parse_einsum(subscripts: str, shapes: list[tuple]) -> tuple[list[str], str]:
    """Explicit subscripts, one letter per axis (the ellipsis spelled out in free letters,
    right-aligned like broadcasting), and the output's letters."""
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1:
        raise ValueError("einsum: subscripts may contain '->' only once.")
    lhs, arrow, out = spec.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(shapes)} "
                         "operands.")
    for term in terms:
        _check_term(term, "operand")
    if arrow:
        _check_term(out, "output")
    used = set(spec) & set(_LETTERS)
    ellipsis_dims = []
    for term, shape in zip(terms, shapes):
        letters = len(term.replace("...", ""))
        extra = len(shape) - letters
        if extra < 0 or (extra and "..." not in term):
            raise ValueError(f"einsum: operand of shape {shape} does not match "
                             f"subscripts {term!r}.")
        ellipsis_dims.append(extra)
    width = max(ellipsis_dims, default=0)
    free = [c for c in _LETTERS if c not in used]
    if width > len(free):
        raise ValueError("einsum: too many dimensions for the available letters.")
    ell = "".join(free[:width])
    expanded = [t.replace("...", ell[width - k:]) for t, k in zip(terms, ellipsis_dims)]
    if not arrow:
        counts = Counter("".join(t.replace("...", "") for t in terms))
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1))
    elif "..." in out:
        out = out.replace("...", ell)
    elif width:
        raise ValueError("einsum: output has more dimensions than subscripts given in "
                         "einstein sum, but no '...' ellipsis provided to broadcast the "
                         "extra dimensions.")
    all_letters = set("".join(expanded))
    if len(set(out)) != len(out) or not set(out) <= all_letters:
        raise ValueError(f"einsum: output subscripts {out!r} must be distinct letters that "
                         "appear in the operands.")
    return expanded, out


def _letter_sizes(terms, shapes) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, shapes):
        mine: dict[str, int] = {}
        for c, d in zip(term, shape):
            if mine.setdefault(c, d) != d:
                raise ValueError(f"einsum: dimensions for repeated index {c!r} differ in "
                                 f"one operand ({mine[c]} != {d}).")
            known = sizes.get(c)
            if known is None or known == 1:  # size 1 broadcasts to any size, 0 included
                sizes[c] = d
            elif d not in (1, known):
                raise ValueError(f"einsum: size of index {c!r} is {known} in one operand "
                                 f"and {d} in another.")
    return sizes


def einsum(*args, optimize=None, dtype=None, out=None, order="K", casting="safe"):
    """Einstein summation with NumPy's subscripts: ``'ij,jk->ik'``, implicit output,
    ``'...'`` broadcasting, repeated letters (``'ii->'`` traces, ``'ii->i'``
    diagonals), and the interleaved ``einsum(a, [0, 1], b, [1, 2])`` form."""
    del optimize, order, casting
    if out is not None:
        raise TypeError("numpy.einsum(..., out=) cannot write into a tensor: tensors are "
                        "immutable.")
    spec, operands = _einsum_arguments(args)
    if not operands:
        raise ValueError("einsum needs at least one operand.")
    operands = list_operands(operands)
    if dtype is not None:
        operands = [_ew.cast(x, dtype) for x in operands]
    shapes = [tuple(x.shape) for x in operands]
    terms, out_term = _parse_einsum(spec, shapes)
    sizes = _letter_sizes(terms, shapes)
    for i, (term, x) in enumerate(zip(terms, operands)):
        full = tuple(sizes[c] for c in term)
        if full != tuple(x.shape):  # size-1 axes broadcast: do it visibly, once
            operands[i] = _shape.broadcast_to(x, full)
    return _contract(terms, out_term, operands)


implements(np.einsum)(einsum)
