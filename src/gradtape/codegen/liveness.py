"""Liveness of a generated function's local names: ``del`` each one after its last use.

A generated function used to hold every input and intermediate until it returned; a
backward of large arrays then peaked at all of them at once. This pass runs on the
function's top-level statements (gast): for each local name, the last statement that
reads or writes it, and after that statement a ``del`` line for the names that die
there::

    tanh_1 = np.tanh(matmul)
    del matmul
    d_h = d_y * (1 - tanh_1 * tanh_1)
    del d_y, tanh_1

A loop or branch is one top-level statement, so a name its body reads (in any
iteration) lives until the whole ``while`` or ``if`` is over; nothing is deleted inside
one. Only names bound on every path are deleted: names assigned at the top level (the
inputs a backward takes from its list among them) or in every branch of an ``if``,
never a name only a loop body or one branch binds. Returned names are read by the
``return``, the last statement, so they are never deleted. Names of small values (fewer
elements than the buffer analysis's ``MIN_OUT_SIZE``) are left alone: their memory does
not matter. A view keeps its base alive by itself, so deleting a base's name while a
view of it is still read is safe. Globals (NumPy, constants, comment markers) are never
assigned in the function, so they are never candidates.
"""

from __future__ import annotations

import gast

from .literals import make, name


def _names(node: gast.AST) -> set[str]:
    """Every name ``node`` reads or writes, nested statements included."""
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}


def _bound(statement: gast.stmt) -> set[str]:
    """The names ``statement`` binds on every path through it."""
    if isinstance(statement, gast.If):
        in_body = set().union(*map(_bound, statement.body))
        in_else = set().union(*map(_bound, statement.orelse))
        return in_body & in_else
    if isinstance(statement, (gast.Assign, gast.AugAssign)):
        targets = statement.targets if isinstance(statement, gast.Assign) \
            else [statement.target]
        return {n.id for t in targets for n in gast.walk(t)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return set()


def _delete(names: list[str]) -> gast.stmt:
    targets = [name(n) for n in names]
    for t in targets:
        t.ctx = gast.Del()
    return make(gast.Delete, targets=targets)


def release_dead_names(statements: list[gast.stmt], small: frozenset[str] = frozenset()
                       ) -> list[gast.stmt]:
    """``statements`` (a function body ending with its ``return``) with a ``del`` line
    after the last use of each local name but the ``small`` ones (values too small for
    their memory to matter: a ``del`` would only be noise)."""
    bound: set[str] = set()
    last_use: dict[str, int] = {}
    for index, statement in enumerate(statements):
        bound |= _bound(statement)
        for n in _names(statement):
            last_use[n] = index
    dying: dict[int, list[str]] = {}
    end = len(statements) - 1  # the return: what it reads is the result
    for n, index in last_use.items():
        if n in bound and index < end and n not in small:
            dying.setdefault(index, []).append(n)
    if not dying:
        return statements
    released: list[gast.stmt] = []
    for index, statement in enumerate(statements):
        released.append(statement)
        if index in dying:
            released.append(_delete(sorted(dying[index])))
    return released
