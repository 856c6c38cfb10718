"""``codegen/liveness.py``: a ``del`` line after each local's last use, never one that a
later statement, a later loop iteration or the ``return`` would miss."""

from __future__ import annotations

import ast
import re
import textwrap

import gast
import numpy as np

import gradtape as gt
from gradtape.codegen.liveness import release_dead_names


def _released(source: str, small: frozenset[str] = frozenset()) -> str:
    function = gast.parse(textwrap.dedent(source)).body[0]
    function.body = release_dead_names(function.body, small)
    return ast.unparse(gast.gast_to_ast(gast.Module(body=[function], type_ignores=[])))


def _run(source: str, **inputs):
    namespace: dict = {"np": np}
    exec(source, namespace)  # the function this test just generated
    return namespace["f"](**inputs)


def test_each_name_is_deleted_after_its_last_use_and_the_result_kept():
    released = _released("""
        def f(feeds):
            [a, b] = feeds
            c = a * 2
            d = c + b
            e = d * d
            return e, b
    """)
    lines = [line.strip() for line in released.splitlines()]
    assert lines[1:] == ["[a, b] = feeds", "c = a * 2", "del a", "d = c + b", "del c",
                         "e = d * d", "del d", "return (e, b)"]
    assert _run(released, feeds=[1.0, 2.0]) == (16.0, 2.0)


def test_a_value_a_loop_reads_lives_until_the_loop_is_over():
    released = _released("""
        def f(feeds):
            [x, w] = feeds
            k = 0
            h = x
            while k < 3:
                t = h * w
                h = t + x
                k += 1
            out = h * 1
            return out,
    """)
    assert all("del" not in body for body in _loop_bodies(released))
    # w and x are read in every iteration: deleted after the whole while; t is bound
    # only inside the loop body (which might not run): never deleted.
    assert "    while k < 3:" in released and "    del k, w, x\n    out = h * 1\n    del h" \
        in released and "del t" not in released
    assert _run(released, feeds=[1.0, 2.0]) == (15.0,)
    assert _run(released.replace("k < 3", "k < 0"), feeds=[1.0, 2.0]) == (1.0,)


def test_a_name_only_one_branch_binds_is_not_deleted():
    released = _released("""
        def f(feeds):
            [p, x] = feeds
            if p:
                y = x + 1
                z = x * 3
            else:
                y = x - 1
            q = y * 2
            return q,
    """)
    assert "del p, x" in released and "del y" in released and "z" not in \
        released.split("else")[1]
    assert not re.search(r"del .*\bz\b", released)
    assert _run(released, feeds=[True, 1.0]) == (4.0,)
    assert _run(released, feeds=[False, 1.0]) == (0.0,)


def test_small_names_get_no_del_line():
    released = _released("""
        def f(feeds):
            [a, b] = feeds
            c = a + b
            return c,
    """, small=frozenset({"b"}))
    assert "del a\n" in released + "\n" and "del a, b" not in released


def test_a_compiled_while_loop_reads_its_invariants_in_every_iteration():
    """A @gt.function with a while loop over large arrays: the generated forward deletes
    what dies, nothing inside the loop, and computes what NumPy does (and its
    gradient, finite differences in float64)."""
    rng = np.random.default_rng(2)
    w0 = rng.standard_normal((96, 96)) / 12
    x0 = rng.standard_normal((64, 96))
    w = gt.Variable(w0)

    @gt.function
    def step(x):
        with gt.GradientTape() as tape:
            h = x
            for _ in gt.range(4):
                h = gt.tanh(gt.matmul(h, w) + x)
            loss = gt.reduce_sum(h * h)
        return loss, tape.gradient(loss, w)

    def by_numpy(wv):
        h = x0
        for _ in range(4):
            h = np.tanh(h @ wv + x0)
        return np.sum(h * h)

    for _ in range(2):
        loss, grad = step(gt.constant(x0))
    np.testing.assert_allclose(float(loss), by_numpy(w0), rtol=1e-12)
    direction = rng.standard_normal(w0.shape)
    eps = 1e-6
    numeric = (by_numpy(w0 + eps * direction) - by_numpy(w0 - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(np.sum(grad.numpy() * direction), numeric, rtol=1e-6)
    source = step.get_source(gt.constant(x0))
    bodies = _loop_bodies(source)
    assert bodies and "\n    del " in source
    assert all("del " not in body for body in bodies)


def _loop_bodies(source: str) -> list[str]:
    """The text of each ``while`` statement's body in ``source``."""
    tree = ast.parse(source)
    return [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.While)]
