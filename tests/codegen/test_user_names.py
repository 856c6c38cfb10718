"""Generated code in the user's words: parameters, cotangents and results named after
the user's values, comments quoting the statement, names that never collide, and names
that never reach the cache key."""

import ast
import builtins
import keyword

import numpy as np
import pytest
from golden_programs import PROGRAMS

import gradtape as gt


def _function(source: str) -> ast.FunctionDef:
    (function,) = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
    return function


def _parameters(source: str) -> list[str]:
    return [a.arg for a in _function(source).args.args]


def _returned(source: str) -> list[str]:
    value = _function(source).body[-1].value
    return [e.id for e in value.elts]


def test_the_mlp_backward_speaks_the_users_names():
    *_, source = PROGRAMS["mlp_classifier"]()
    assert set(_parameters(source)) >= {"labels", "w_out", "hidden", "x"}
    assert _returned(source) == ["d_weights", "d_bias", "d_w_out"]
    # d_hidden is the gradient of relu's output ``hidden``: matmul's VJP makes it from
    # d_logits, and the relu's rule reads it.
    assert "d_hidden = d_logits @ " in source
    assert "d_add_out = d_hidden * " in source
    assert "# logits = hidden @ w_out   (golden_programs.py:" in source
    # The labels' logits picked as a person writes it, not the IR's index encoding.
    assert "add.at(d_log_softmax_out, (arange(32)[:, None], labels), " in source
    assert "('arange'" not in source and "scatter_add_impl" not in source


def test_the_named_mlp_gradients_are_the_same_numbers():
    """Names are cosmetic: the compiled backward gives the interpreted values, which
    match central differences in float64 for w_out."""
    rng = np.random.default_rng(3)
    x = gt.constant(rng.standard_normal((6, 4)))
    labels = gt.constant(rng.integers(0, 3, 6))
    weights = gt.Variable(rng.standard_normal((4, 5)), name="weights")
    w_out = gt.Variable(rng.standard_normal((5, 3)), name="w_out")

    def loss_of():
        hidden = gt.nn.relu(x @ weights)
        logits = hidden @ w_out
        return gt.reduce_mean(gt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))

    results = []
    for compiled in (False, True):
        gt.clear_cache()
        with gt.config(compile=compiled, compile_after=1):
            with gt.GradientTape() as tape:
                loss = loss_of()
            results.append([g.numpy() for g in tape.gradient(loss, [weights, w_out])])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    base = w_out.numpy().copy()
    numeric = np.zeros_like(base)
    for i in np.ndindex(base.shape):
        for sign in (1, -1):
            shifted = base.copy()
            shifted[i] += sign * 1e-6
            w_out.assign(shifted)
            numeric[i] += sign * float(loss_of().numpy()) / 2e-6
    w_out.assign(base)
    np.testing.assert_allclose(results[1][1], numeric, rtol=1e-6, atol=1e-9)


def test_comments_quote_the_statement_and_fall_back_to_op_names():
    x = gt.Variable(np.linspace(-1.0, 1.0, 4), name="x")
    namespace = {"gt": gt, "x": x}
    exec(compile("with gt.GradientTape() as tape:\n    y = gt.reduce_sum(gt.tanh(x))\n",
                 "<no source>", "exec"), namespace)
    source = namespace["tape"].inspect(namespace["y"], x).source
    assert "# sum, tanh (<no source>:2)" in source or "# tanh (<no source>:2)" in source


def test_two_programs_differing_only_in_names_share_compiled_code():
    def step(first_name, second_name):
        a = gt.Variable(np.arange(3.0), name=first_name)
        b = gt.Variable(np.ones(3), name=second_name)
        with gt.GradientTape() as tape:
            product = a * b
            total = gt.reduce_sum(gt.sin(product))
        return tape.gradient(total, [a, b]), a, b

    gt.clear_cache()
    with gt.config(compile_after=1):
        step("alpha", "beta")
        before = gt.cache_info()
        (da, db), a, b = step("gamma", "delta")
        after = gt.cache_info()
    assert (after.misses, after.compiled) == (before.misses, before.compiled)
    assert after.hits > before.hits
    np.testing.assert_allclose(da.numpy(), np.cos(a.numpy() * b.numpy()) * b.numpy())
    np.testing.assert_allclose(db.numpy(), np.cos(a.numpy() * b.numpy()) * a.numpy())


ADVERSARIAL = ["np", "def", "x_1", "λ", "my var:0", "w", "w", "sum", "square", "float32",
               "backward", "_runtime", "__gradtape_comment_0__", "", "1abc", "ﬁ"]


def test_adversarial_user_names_never_collide():
    rng = np.random.default_rng(0)
    variables = [gt.Variable(rng.standard_normal(3), name=n) for n in ADVERSARIAL]
    with gt.GradientTape(persistent=True) as tape:
        total = gt.reduce_sum(gt.square(variables[0]))
        for v in variables[1:]:
            total = total + gt.reduce_sum(gt.square(gt.sin(v) * v))
    source = tape.inspect(total, variables).source
    function = _function(source)
    params = _parameters(source)
    returned = _returned(source)
    assigned = {t.id for node in ast.walk(function) if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    module_names = {alias.asname or alias.name for node in ast.parse(source).body
                    if isinstance(node, ast.ImportFrom) for alias in node.names}
    module_names |= {t.id for node in ast.parse(source).body if isinstance(node, ast.Assign)
                     for t in node.targets}
    local_names = set(params) | assigned
    assert len(set(params)) == len(params)
    assert len(set(returned)) == len(returned) == len(variables)
    for local in local_names:
        assert local.isidentifier() and not keyword.iskeyword(local), local
        assert local not in dir(builtins) and local not in module_names, local
        assert local not in ("np", "backward", "_runtime"), local
    # The function computes the interpreted gradients.
    gt.clear_cache()
    grads = []
    for compiled in (False, True):
        with gt.config(compile=compiled, compile_after=1):
            gt.clear_cache()
            grads.append([g.numpy() for g in tape.gradient(total, variables)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_a_local_named_like_a_numpy_global_makes_the_global_yield():
    square = gt.Variable(np.array([0.5, 2.0]), name="square")
    with gt.GradientTape() as tape:
        zeros = gt.tanh(square)
        loss = gt.reduce_sum(zeros * zeros)
    source = tape.inspect(loss, [square]).source
    compile(source, "<test>", "exec")
    assert "def backward(" in source and "d_square" in _returned(source)
    namespace: dict = {}
    exec(source, namespace)
    assert callable(namespace["backward"])


def test_a_statement_is_read_once_per_location(tmp_path, monkeypatch):
    from gradtape.codegen import user_source

    path = tmp_path / "model.py"
    path.write_text("import gradtape as gt\n\ndef f(x):\n    y = gt.tanh(x) * x\n    return y\n")
    parsed = []
    real_parse = user_source.gast.parse
    monkeypatch.setattr(user_source.gast, "parse",
                        lambda text: parsed.append(1) or real_parse(text))
    user_source._files.pop(str(path), None)
    first = user_source.statement_at((str(path), 4))
    assert first.text == "y = gt.tanh(x) * x" and first.targets == ("y",)
    assert user_source.statement_at((str(path), 4)) is first
    assert user_source.statement_at((str(path), 5)).targets is None  # a return
    assert user_source.statement_at((str(path), 1)) is None  # an import: no value
    assert len(parsed) == 1


@pytest.mark.parametrize("text, expected", [
    ("a, b = f(x)\n", ("a", "b")),
    ("self.kernel = f(x)\n", ("kernel",)),
    ("total += f(x)\n", ("total",)),
    ("out[0] = f(x)\n", None),
    ("f(x)\n", None),
])
def test_assignment_targets(tmp_path, text, expected):
    from gradtape.codegen import user_source

    path = tmp_path / "t.py"
    path.write_text(text)
    assert user_source.statement_at((str(path), 1)).targets == expected
