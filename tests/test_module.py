"""gt.Module (tf.Module): names, the attribute walk in TF's order, name scopes, training."""

import numpy as np
import pytest

import gradtape as gt


class Dense(gt.Module):  # TF's "Introduction to modules" guide
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.w = gt.Variable(gt.random.normal([in_features, out_features]), name="w")
        self.b = gt.Variable(gt.zeros([out_features]), name="b")

    def __call__(self, x):
        return gt.nn.relu(gt.matmul(x, self.w) + self.b)


class MLP(gt.Module):
    def __init__(self, input_size, sizes, name=None):
        super().__init__(name=name)
        self.layers = []
        with self.name_scope:
            for size in sizes:
                self.layers.append(Dense(input_size, size))
                input_size = size

    @gt.Module.with_name_scope
    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def ids(items):
    return [id(i) for i in items]


@pytest.mark.parametrize("cls, name", [(Dense, "dense"), (MLP, "mlp")])
def test_default_name_is_the_snake_case_class_name(cls, name):
    module = cls(2, 3) if cls is Dense else cls(2, [3])
    assert module.name == name


def test_camel_to_snake_as_tf():
    from gradtape.api.module import camel_to_snake

    cases = {"MyModule": "my_module", "HTTPServer": "http_server", "Linear2D": "linear2_d",
             "ABC": "abc", "snake_already": "snake_already"}
    assert {k: camel_to_snake(k) for k in cases} == cases


def test_explicit_names_must_be_identifiers():
    assert Dense(1, 1, name="first").name == "first"
    with pytest.raises(ValueError, match="not a valid module name"):
        Dense(1, 1, name="bad name")


def test_variables_in_tfs_order():
    mlp = MLP(2, [3, 4])
    d0, d1 = mlp.layers
    # Each module's attributes sorted by name ("b" before "w"), submodules after.
    assert ids(mlp.variables) == ids([d0.b, d0.w, d1.b, d1.w])
    assert ids(mlp.trainable_variables) == ids(mlp.variables)
    assert mlp.non_trainable_variables == ()
    assert ids(mlp.submodules) == ids([d0, d1])
    assert ids(d0.variables) == ids([d0.b, d0.w]) and d0.submodules == ()
    assert all(isinstance(v, gt.Variable) for v in mlp.variables)
    assert isinstance(mlp.variables, tuple)


def test_the_walk_flattens_containers_and_deduplicates():
    m = gt.Module()
    a, b, c = gt.Variable(1.0), gt.Variable(2.0), gt.Variable(3.0, trainable=False)
    shared = Dense(1, 1)
    m.z_dict = {"y": b, "x": [a, (c,)]}  # dict by sorted key: a, c, then b
    m.a_again = a  # the first attribute holds a: a comes first
    m.sub = shared
    m.sub_alias = shared  # one module, listed once
    assert ids(m.variables) == ids([a, c, b, shared.b, shared.w])
    assert ids(m.trainable_variables) == ids([a, b, shared.b, shared.w])
    assert ids(m.non_trainable_variables) == ids([c])
    assert ids(m.submodules) == ids([shared])


def test_nested_submodules_and_cycles():
    outer, middle, inner = gt.Module(name="outer"), gt.Module(name="middle"), Dense(1, 1)
    outer.child = middle
    middle.child = inner
    inner.parent = outer  # a cycle: the walk must end
    assert ids(outer.submodules) == ids([middle, inner])
    assert ids(outer.variables) == ids([inner.b, inner.w])


def test_name_scopes():
    with gt.name_scope("a") as scope:
        assert scope == "a/"
        with gt.name_scope("b") as inner:
            assert inner == "a/b/"
        with gt.name_scope("c/") as absolute:
            assert absolute == "c/"
    mlp = MLP(2, [3], name="net")
    assert mlp.name_scope.name == "net/"
    assert mlp.layers[0].name_scope.name == "net/dense/"  # built inside the parent's scope
    with mlp.name_scope:
        with gt.name_scope("x") as scope:
            assert scope == "net/x/"
    with gt.name_scope("a"):
        assert gt.Module(name="m").name_scope.name == "a/m/"


def test_with_name_scope_runs_inside_the_scope_and_keeps_the_function():
    class Probe(gt.Module):
        @gt.Module.with_name_scope
        def scope_inside(self, suffix):
            """Doc kept."""
            with gt.name_scope(suffix) as scope:
                return scope

    p = Probe(name="probe")
    assert p.scope_inside("q") == "probe/q/"
    assert Probe.scope_inside.__name__ == "scope_inside"
    assert Probe.scope_inside.__doc__ == "Doc kept."
    assert Probe.scope_inside.__wrapped__.__name__ == "scope_inside"


def _fd_gradients(loss_of, variables, eps=1e-6):
    """Central finite differences of ``loss_of()`` for each element of each variable."""
    out = []
    for v in variables:
        base = v.numpy().copy()
        g = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            for sign in (1, -1):
                bumped = base.copy()
                bumped[i] += sign * eps
                v.assign(bumped)
                g[i] += sign * float(loss_of()) / (2 * eps)
        v.assign(base)
        out.append(g)
    return out


class Linear(gt.Module):
    def __init__(self):
        super().__init__()
        self.w = gt.Variable(np.array([[0.5], [-1.5]]), name="w")
        self.b = gt.Variable(np.array([0.25]), name="b")

    def __call__(self, x):
        return gt.matmul(x, self.w) + self.b


class CompiledLinear(Linear):
    @gt.function
    def __call__(self, x):
        return gt.matmul(x, self.w) + self.b


X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
Y = np.array([[1.0], [0.0], [2.0]])


@pytest.mark.parametrize("cls", [Linear, CompiledLinear])
def test_tape_gradient_over_trainable_variables(cls):
    model = cls()

    def loss():
        return gt.reduce_mean((model(X) - Y) ** 2)

    with gt.GradientTape() as tape:
        value = loss()
    grads = tape.gradient(value, model.trainable_variables)
    expected = _fd_gradients(loss, model.trainable_variables)
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-6, atol=1e-9)
    assert [v.name for v in model.trainable_variables] == ["b:0", "w:0"]


def test_function_method_matches_eager_and_traces_once():
    eager, compiled = Linear(), CompiledLinear()
    for _ in range(3):
        np.testing.assert_allclose(compiled(X).numpy(), eager(X).numpy())
    assert compiled.__call__.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("cls", [Linear, CompiledLinear])
def test_optimizer_step_on_module_variables(cls):
    model = cls()
    opt = gt.keras.optimizers.SGD(learning_rate=0.1)
    with gt.GradientTape() as tape:
        loss = gt.reduce_mean((model(X) - Y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    before = [v.numpy() for v in model.trainable_variables]
    opt.apply_gradients(zip(grads, model.trainable_variables))
    for v, b, g in zip(model.trainable_variables, before, grads):
        np.testing.assert_allclose(v.numpy(), b - 0.1 * g.numpy())


def test_with_name_scope_and_function_in_either_order():
    class Scaled(gt.Module):
        def __init__(self):
            super().__init__()
            self.w = gt.Variable(2.0)

        @gt.Module.with_name_scope
        @gt.function
        def scope_outside(self, x):
            return self.w * x * x

        @gt.function
        @gt.Module.with_name_scope
        def function_outside(self, x):
            return self.w * x * x

    m = Scaled()
    x = gt.constant(3.0)
    for method in (m.scope_outside, m.function_outside):
        with gt.GradientTape() as tape:
            y = method(x)
        assert float(y) == 18.0 and float(tape.gradient(y, m.w)) == 9.0
    m.w.assign(5.0)  # the traces read the variable, not a stale value
    assert float(m.scope_outside(x)) == 45.0 and float(m.function_outside(x)) == 45.0
