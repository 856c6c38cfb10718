"""Generated code in the user's words: parameters, cotangents and results named after
the user's values, comments quoting the statement, names that never collide, and names
that never reach the cache key."""

import ast
import builtins
import keyword
import re

import numpy as np
import pytest
from golden_programs import PROGRAMS

import gradtape as gt


def _function(source: str) -> ast.FunctionDef:
    (function,) = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
    return function


def _parameters(source: str) -> list[str]:
    """The function's inputs: a forward's parameters, or the names a backward takes
    from its one list (``[x, w] = feeds``)."""
    function = _function(source)
    params = [a.arg for a in function.args.args]
    if params != ["feeds"]:
        return params
    unpack = next(s for s in function.body if isinstance(s, ast.Assign)
                  and isinstance(s.value, ast.Name) and s.value.id == "feeds")
    return [e.id for e in unpack.targets[0].elts]


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
    # Sparse cross-entropy's textbook gradient, (softmax - one_hot) / 32. NumPy 1's
    # value-based casting keeps the mean's 1/32 an input, so it is not folded there.
    scale = (r"float32_0p03125" if np.lib.NumpyVersion(np.__version__) >= "2.0.0"
             else r"\w+")
    assert re.search(rf"d_logits = {scale} \* \(softmax_\d+ - one_hot_\d+\)", source)
    assert "softmax_impl(logits, " in source and "one_hot_impl(labels, depth=3" in source


def test_indexing_is_written_as_numpy():
    """Rows picked by an index array go back with np.add.at on the user's index array,
    not the IR's index encoding."""
    *_, source = PROGRAMS["indexing"]()
    assert re.search(r"add\.at\(\w+, \(rows, slice\(1, 3\)\), d_picked\)", source)
    assert "[0, ::2] = d_corner" in source
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


# --- a value is named after a target only when it is what the target is bound to ------

def _source_of(text: str, tmp_path, name: str = "model.py") -> str:
    """Run ``text`` (which leaves ``tape``, ``loss`` and ``x``) as a module of its own
    file, inspecting the backward there (where a user would), and return its source."""
    text += "source = tape.inspect(loss, x).source\n"
    path = tmp_path / name
    path.write_text(text)
    namespace = {"gt": gt, "np": np, "__name__": "model"}
    exec(compile(text, str(path), "exec"), namespace)
    return namespace["source"]


def _names_in(source: str) -> set[str]:
    function = _function(source)
    names = {a.arg for a in function.args.args}
    names |= {t.id for node in ast.walk(function) if isinstance(node, (ast.Assign, ast.AugAssign))
              for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
              if isinstance(t, ast.Name)}
    return names


PRELUDE = "x = gt.Variable(np.array([0.5, -1.0, 2.0]), name='x')\n"


@pytest.mark.parametrize("body, wrong", [
    # a list display: its last op (exp) is not h
    ("    h = [gt.tanh(x), gt.exp(x)]\n"
     "    loss = gt.reduce_sum(h[0] * h[1])\n", "h"),
    # a tuple display ending in a two-result op: s and e are not eigh's two outputs
    ("    m = gt.eye(3) * x\n"
     "    s, e = gt.sin(x), gt.linalg.eigh(m)\n"
     "    loss = gt.reduce_sum(s) + gt.reduce_sum(e[0] * e[0]) + gt.reduce_sum(e[1])\n", "e"),
    # a call returning a list reads like one value: the frame shows grids is a list, so
    # meshgrid's last op (the second grid) is not grids
    ("    grids = gt.meshgrid(x * 2.0, x * 3.0)\n"
     "    loss = gt.reduce_sum(gt.sin(grids[0]) * grids[1])\n", "grids"),
])
def test_a_statement_whose_value_is_not_its_last_op_names_nothing(tmp_path, body, wrong):
    text = PRELUDE + "with gt.GradientTape(persistent=True) as tape:\n" + body
    names = _names_in(_source_of(text, tmp_path))
    assert wrong not in names and f"d_{wrong}" not in names, names


@pytest.mark.parametrize("text, direct", [
    ("h = gt.tanh(x @ w)\n", True),
    ("h = x[0]\n", True),
    ("h = x[0][1:]\n", True),
    ("h = [f(x), g(x)]\n", False),
    ("a, b = f(x), g(x)\n", False),
    ("h = f(x)[0]\n", False),
    ("h = {'a': f(x)}\n", False),
    ("h = f(x) if c else [g(x)]\n", False),
    ("traced = gt.function(lambda x: gt.sin(x))\n", False),
])
def test_which_statements_bind_their_last_ops_value(tmp_path, text, direct):
    from gradtape.codegen import user_source

    path = tmp_path / "t.py"
    path.write_text(text)
    assert user_source.statement_at((str(path), 1)).direct is direct


def test_a_statement_in_a_returned_function_is_judged_by_its_form(tmp_path):
    """No frame to look at (``model`` returned): the list display still names nothing,
    while ``out = gt.tanh(x) * 2.0`` in the same function is ``out``."""
    text = ("def model(v):\n"
            "    h = [gt.tanh(v), gt.exp(v)]\n"
            "    out = h[0] * h[1]\n"
            "    return out\n\n" + PRELUDE
            + "with gt.GradientTape(persistent=True) as tape:\n"
            "    loss = gt.reduce_sum(gt.sin(model(x)))\n")
    source = _source_of(text, tmp_path)
    names = _names_in(source)
    assert "h" not in names and "d_h" not in names
    assert "d_out" in names


def test_a_target_rebound_in_a_loop_keeps_its_name(tmp_path):
    """The frame holds the last pass's ``state``, which the statement's last op made:
    the check accepts it (earlier passes are not told apart from the statement's inner
    ops, so they keep op names)."""
    text = (PRELUDE + "with gt.GradientTape(persistent=True) as tape:\n"
            "    state = x\n"
            "    for _ in range(3):\n"
            "        state = gt.tanh(state * x)\n"
            "    loss = gt.reduce_sum(state)\n")
    source = _source_of(text, tmp_path)
    assert "[state, x," in source
    # and the gradient is right: d/dx of tanh(tanh(tanh(x*x)*x)*x), by finite differences
    x0 = np.array([0.5, -1.0, 2.0])

    def loss_of(v):
        s = v
        for _ in range(3):
            s = np.tanh(s * v)
        return s.sum()

    namespace = {"gt": gt, "np": np}
    exec(compile(text, str(tmp_path / "model.py"), "exec"), namespace)
    grad = namespace["tape"].gradient(namespace["loss"], namespace["x"]).numpy()
    numeric = [(loss_of(x0 + 1e-6 * e) - loss_of(x0 - 1e-6 * e)) / 2e-6 for e in np.eye(3)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)


# --- @gt.function code speaks the same names as the eager tape --------------------------

def test_a_traced_training_step_reads_in_the_users_names():
    """The Keras fit step: parameters after the arguments and the layers' variables,
    the loss after its target, the inner gradient's cotangents as the tape names them."""
    from golden_programs import FORWARD_PROGRAMS

    function, args = FORWARD_PROGRAMS["keras_fit_step"]()
    source = function.get_source(*args)
    assert _parameters(source)[:6] == ["images", "targets", "hidden_kernel", "hidden_bias",
                                       "head_kernel", "head_bias"]
    assert "    loss = sum_" in source and "return loss," in source
    assert "d_predictions = " in source
    assert "d_hidden_kernel = " in source and "hidden_kernel - d_hidden_kernel * " in source


def test_traced_names_are_cosmetic_and_the_step_is_right():
    """Two traced steps differing only in names compute the same update, which matches
    float64 central differences of the loss."""
    rng = np.random.default_rng(1)
    x = gt.constant(rng.standard_normal((5, 3)))
    y = gt.constant(rng.standard_normal(5))

    def make(name):
        w = gt.Variable(rng.standard_normal(3) * 0 + 0.5, name=name)

        @gt.function
        def step(x, y):
            with gt.GradientTape() as tape:
                error = gt.linalg.matvec(x, w) - y
                loss = gt.reduce_mean(error * error)
            return tape.gradient(loss, w)

        return step, w

    (step_a, wa), (step_b, _) = make("alpha"), make("beta")
    ga, gb = step_a(x, y).numpy(), step_b(x, y).numpy()
    # Each forward's parameter is its variable; the inner gradient's backward is one
    # compiled entry for both (structural key), so it shows the first's cotangent names.
    assert "alpha" in _parameters(step_a.get_source(x, y))
    assert "beta" in _parameters(step_b.get_source(x, y))
    assert "d_alpha = " in step_a.get_source(x, y)
    np.testing.assert_array_equal(ga, gb)

    def loss_of(w):
        e = x.numpy() @ w - y.numpy()
        return np.mean(e * e)

    w0 = wa.numpy()
    numeric = [(loss_of(w0 + 1e-6 * e) - loss_of(w0 - 1e-6 * e)) / 2e-6 for e in np.eye(3)]
    np.testing.assert_allclose(ga, numeric, rtol=1e-6)
