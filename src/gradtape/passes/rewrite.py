"""The one walk the simplification passes share: rules rewrite equations in order.

A rule looks at one equation (its inputs already rewritten) and returns the value that
should replace its output, or ``None`` to keep it. It may emit new equations through
the walk (``emit``), which are rewritten in turn. Replacing an output renames it in
every later use and in the program's outputs. A replacement must have exactly the
replaced var's aval (shape and dtype); the walk refuses any other, keeping the
equation, so a rule can never make a program compute something else. Equations left
unused are removed by dead-code elimination afterwards.

Most rules only apply when an operand is a known fill or is made by a particular
primitive. A rule declares that with ``@applies_when(...)``, and the walk then calls it
only for equations where the condition holds: the rule is unchanged (it still checks
everything itself), it is just not asked where it would answer ``None`` anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..ir.abstract import abstract_eval
from ..ir.nodes import Aval, Eqn, IRValue, Literal, Program, Var
from ..ops.registry import Primitive
from .fills import Fills
from .fusion import use_counts

Rule = Callable[[Eqn, "Rewriter"], "IRValue | None"]


def applies_when(fill: bool = False, defined_by: Iterable[Primitive] = ()
                 ) -> Callable[[Rule], Rule]:
    """Declares that a rule returns ``None`` unless some operand is a known fill
    (``fill``) or is the output of one of the primitives ``defined_by`` (either one
    suffices when both are given)."""
    prims = frozenset(defined_by)
    when = (fill, prims) if fill or prims else None  # no condition: always asked

    def declare(rule: Rule) -> Rule:
        rule.applies_when = when  # type: ignore[attr-defined]
        return rule

    return declare


# Emitted equations are rewritten too; the depth bound guards against two rules
# rewriting into each other forever.
_MAX_DEPTH = 8


def same_aval(value: IRValue, var: Var) -> bool:
    """Whether ``value`` can stand for ``var`` everywhere, dtype promotion included."""
    if isinstance(value, Literal):
        # A Python scalar is weakly typed (x_f32 * 2.0 stays float32) where a var is
        # not: only a NumPy scalar of the same dtype behaves exactly like a 0-d var. A
        # literal is its scalar wherever it is read, whatever shape its aval claims.
        if not isinstance(value.value, np.generic) or value.value.dtype != var.dtype:
            return False
        if value.aval.shape != () or var.aval.shape != ():
            return False
    return tuple(value.aval.shape) == tuple(var.aval.shape) and value.aval.dtype == var.dtype


# The rule selections of the last few rule sets (a walk per backward built would
# otherwise work out again which rules each kind of equation asks). Keyed by the rule
# table itself, held here so its identity stays its own: a rule table is not changed
# once a walk has used it (make a new one, as merge_rules does).
_SELECTIONS: list[tuple[Mapping, tuple, tuple, dict, dict]] = []
_MAX_SELECTIONS = 8


def _selection_tables(rules: Mapping, generic: tuple, late: tuple) -> tuple[dict, dict]:
    for known, known_generic, known_late, table, selected in _SELECTIONS:
        if known is rules and known_generic == generic and known_late == late:
            return table, selected
    table: dict[Primitive, tuple[tuple[Rule, tuple | None], ...]] = {}
    selected: dict[tuple, tuple[Rule, ...]] = {}
    if len(_SELECTIONS) >= _MAX_SELECTIONS:
        del _SELECTIONS[0]
    _SELECTIONS.append((rules, generic, late, table, selected))
    return table, selected


class Rewriter:
    """One pass over a program applying ``rules`` (per primitive, then ``generic``)."""

    def __init__(self, rules: Mapping[Primitive, Sequence[Rule]],
                 generic: Sequence[Rule] = (), late: Sequence[Rule] = ()):
        self._rules = rules
        self._generic = tuple(generic)
        self._late = tuple(late)
        # primitive -> its rules, each with its precondition (``None``: always asked);
        # (primitive, an operand is a fill, primitives making the operands) -> the rules
        # whose preconditions hold then. Shared by the walks with the same rules.
        self._table, self._selected = _selection_tables(rules, self._generic, self._late)
        self.fills = Fills()
        self.eqns: list[Eqn] = []
        self._subst: dict[Var, IRValue] = {}
        self._defs: dict[Var, Eqn] = {}
        self._uses: dict[Var, int] = {}
        # made: the primitives of the equations kept so far (a rule that needs one of
        # them among the definitions, like merged selects, knows at once it can't apply).
        self.made: set[Primitive] = set()
        self._loc: Any = None
        self._depth = 0
        # Rules ask these for every operand: bound lookups, no method call in between.
        # definition(v): the (rewritten) equation defining ``v``; ``None`` for inputs
        # and literals (never keys: only equations' outputs are).
        self.definition: Callable[[IRValue], Eqn | None] = self._defs.get
        # fill(v): the scalar all of ``v`` equals, or ``None``.
        self.fill: Callable[[IRValue], Any] = self.fills.value

    # --- what rules may ask -------------------------------------------------------

    def uses(self, v: IRValue) -> int:
        """How often ``v`` is read in the program as given (a replacement inherits the
        count of what it replaces): a hint for rewrites that pay only for a value's
        one reader, never a correctness condition."""
        return self._uses.get(v, 0)

    def emit(self, prim: Primitive, inputs: Iterable[IRValue], params: dict) -> IRValue | None:
        """Append ``prim(*inputs, **params)`` (rewritten in turn) and return its value;
        ``None`` if its shape rule rejects the inputs."""
        inputs = tuple(inputs)
        try:
            avals = abstract_eval(prim, inputs, params)
        except Exception:  # a rule proposed something invalid: decline the rewrite
            return None
        outs = tuple(Var(Aval(tuple(a.shape), a.dtype), prim.name) for a in avals)
        self._visit(Eqn(prim, inputs, outs, params, self._loc))
        return self.read(outs[0])

    def read(self, v: IRValue | None) -> IRValue | None:
        return self._subst.get(v, v)  # only replaced outputs are keys

    # --- the walk -------------------------------------------------------------------
    def run(self, program: Program) -> Program:
        self._uses.update(use_counts(program))
        subst = self._subst
        visit = self._visit
        for eqn in program.eqns:
            if subst:
                old = eqn.inputs
                for v in old:
                    if v in subst:  # dicts compare IR values by identity (never ``==``)
                        eqn = Eqn(eqn.prim, tuple([subst.get(v, v) for v in old]), eqn.outs,
                                  eqn.params, eqn.loc)
                        break
            visit(eqn)
        outputs = [subst.get(v, v) for v in program.outputs]
        return Program(program.inputs, self.eqns, outputs)

    def _visit(self, eqn: Eqn) -> None:
        if not eqn.prim.multiple_results and self._depth < _MAX_DEPTH:
            out = eqn.outs[0]
            saved_loc, self._loc = self._loc, eqn.loc
            self._depth += 1
            try:
                for rule in self._applicable(eqn):
                    value = rule(eqn, self)
                    if value is not None and value is not out and same_aval(value, out):
                        self._subst[out] = value
                        if isinstance(value, Var):
                            self._uses[value] = self.uses(value) + self.uses(out)
                            if value.name is None and value in self._defs:
                                value.name = out.name  # the user's word for it (codegen)
                        return
            finally:
                self._depth -= 1
                self._loc = saved_loc
        self.eqns.append(eqn)
        self.made.add(eqn.prim)
        for o in eqn.outs:
            self._defs[o] = eqn
        self.fills.observe(eqn)

    def _applicable(self, eqn: Eqn) -> tuple[Rule, ...]:
        """The rules for ``eqn`` whose preconditions hold, in order. What they ask of
        the operands cannot change while the rules run: rules only define new vars."""
        has_fill = self.fills.any_known(eqn.inputs)
        defs = self._defs
        # In operand order, duplicates kept: a tuple is cheaper to make than a set, and
        # the selections are kept across walks (a few more keys cost nothing).
        makers = tuple([defs[v].prim for v in eqn.inputs if v in defs])
        key = (eqn.prim, has_fill, makers)
        rules = self._selected.get(key)
        if rules is None:
            rules = self._selected[key] = tuple(
                rule for rule, when in self._rules_for(eqn.prim)
                if when is None or (when[0] and has_fill) or not when[1].isdisjoint(makers))
        return rules

    def _rules_for(self, prim: Primitive) -> tuple[tuple[Rule, tuple | None], ...]:
        rules = self._table.get(prim)
        if rules is None:
            rules = self._table[prim] = tuple(
                (rule, getattr(rule, "applies_when", None))
                for rule in (*self._generic, *self._rules.get(prim, ()), *self._late))
        return rules


def rewrite(program: Program, rules: Mapping[Primitive, Sequence[Rule]],
            generic: Sequence[Rule] = (), late: Sequence[Rule] = ()) -> Program:
    """``program`` with ``rules`` applied in one forward walk."""
    return Rewriter(rules, generic, late).run(program)


def merge_rules(*tables: Mapping[Primitive, Sequence[Rule]]) -> dict[Primitive, list[Rule]]:
    """Per-primitive rule tables combined, earlier tables' rules tried first."""
    merged: dict[Primitive, list[Rule]] = {}
    for table in tables:
        for prim, rules in table.items():
            merged.setdefault(prim, []).extend(rules)
    return merged
