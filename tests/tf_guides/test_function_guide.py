"""Cells of TF's "Better performance with tf.function" guide (tensorflow.org/guide/function),
run with ``import gradtape as tf``; each checks what the guide prints. String, tf.data,
Keras-layer and graph-inspection cells are left out (int32 and float32 stand in for the
guide's strings)."""

import numpy as np
import pytest

import gradtape as tf


def test_usage_and_gradients():
    @tf.function  # The decorator converts `add` into a `Function`.
    def add(a, b):
        return a + b

    np.testing.assert_array_equal(add(tf.ones([2, 2]), tf.ones([2, 2])).numpy(), [[2, 2]] * 2)
    v = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        result = add(v, 1.0)
    assert tape.gradient(result, v).numpy() == 1.0

    @tf.function
    def dense_layer(x, w, b):
        return add(tf.matmul(x, w), b)

    out = dense_layer(tf.ones([3, 2]), tf.ones([2, 2]), tf.ones([2]))
    np.testing.assert_array_equal(out.numpy(), [[3, 3]] * 3)


@pytest.fixture
def double(capsys):
    @tf.function
    def double(a):
        print("Tracing with", a)
        return a + a

    assert double(tf.constant(1)).numpy() == 2
    np.testing.assert_allclose(double(tf.constant(1.1)).numpy(), 2.2)
    assert double(tf.constant(2)).numpy() == 4  # no trace: same dtype and shape
    assert capsys.readouterr().out.count("Tracing with") == 2
    return double


def test_pretty_printed_concrete_signatures(double):
    assert double.pretty_printed_concrete_signatures() == (
        "Input Parameters:\n"
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=gt.int32, name=None)\n"
        "Output Type:\n"
        "  TensorSpec(shape=(), dtype=gt.int32, name=None)\n"
        "Captures:\n"
        "  None\n"
        "\n"
        "Input Parameters:\n"
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=gt.float32, name=None)\n"
        "Output Type:\n"
        "  TensorSpec(shape=(), dtype=gt.float32, name=None)\n"
        "Captures:\n"
        "  None")


def test_obtaining_concrete_functions(double):
    double_ints = double.get_concrete_function(tf.constant(1))
    assert double_ints(tf.constant(3)).numpy() == 6
    assert double_ints(a=tf.constant(4)).numpy() == 8
    from_spec = double.get_concrete_function(tf.TensorSpec(shape=[], dtype=tf.int32))
    assert from_spec(tf.constant(5)).numpy() == 10
    assert str(double_ints).startswith("ConcreteFunction Input Parameters:\n  a (")
    assert repr(double_ints.structured_input_signature) == \
        "((TensorSpec(shape=(), dtype=gt.int32, name='a'),), {})"
    assert repr(double_ints.structured_outputs) == 'Tensor("Identity:0", shape=(), dtype=int32)'
    assert [o.shape for o in double_ints.outputs] == [()]
    # Using a concrete trace with incompatible types will throw an error
    with pytest.raises(tf.errors.InvalidArgumentError):
        double_ints(tf.constant(1.0))


def test_python_arguments_are_fixed_in_a_concrete_function():
    @tf.function
    def pow(a, b):
        return a ** b

    square = pow.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    assert str(square) == (
        "ConcreteFunction Input Parameters:\n"
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=<unknown>, dtype=gt.float32, name=None)\n"
        "  b (POSITIONAL_OR_KEYWORD): Literal[2]\n"
        "Output Type:\n"
        "  TensorSpec(shape=<unknown>, dtype=gt.float32, name=None)\n"
        "Captures:\n"
        "  None")
    assert square(tf.constant(10.0)) == 100
    np.testing.assert_array_equal(square(tf.constant([2.0, 3.0])).numpy(), [4.0, 9.0])
    with pytest.raises(TypeError):
        square(tf.constant(10.0), b=3)


def test_input_signature(capsys):
    @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    def next_collatz(x):
        print("Tracing with", x)
        return tf.where(x % 2 == 0, x // 2, 3 * x + 1)

    np.testing.assert_array_equal(next_collatz(tf.constant([1, 2])).numpy(), [4, 1])
    # You specified a 1-D tensor in the input signature, so this should fail.
    with pytest.raises(TypeError):
        next_collatz(tf.constant([[1, 2], [3, 4]]))
    # You specified an int32 dtype in the input signature, so this should fail.
    with pytest.raises(TypeError):
        next_collatz(tf.constant([1.0, 2.0]))


def test_run_functions_eagerly(capsys):
    @tf.function
    def get_MSE(y_true, y_pred):
        print("Calculating MSE!")
        sq_diff = tf.pow(y_true - y_pred, 2)
        return tf.reduce_mean(sq_diff)

    y_true = tf.random.uniform([5], maxval=10, dtype=tf.int32)
    y_pred = tf.random.uniform([5], maxval=10, dtype=tf.int32)
    expected = np.mean((y_true.numpy() - y_pred.numpy()) ** 2)
    for _ in range(3):
        assert get_MSE(y_true, y_pred).numpy() == int(expected)
    assert capsys.readouterr().out.count("Calculating MSE!") == 1
    tf.config.run_functions_eagerly(True)
    try:
        assert tf.config.functions_run_eagerly()
        for _ in range(3):
            assert get_MSE(y_true, y_pred).numpy() == int(expected)
        assert capsys.readouterr().out.count("Calculating MSE!") == 3
    finally:
        tf.config.run_functions_eagerly(False)
    assert not tf.config.functions_run_eagerly()
    get_MSE(y_true, y_pred)
    assert capsys.readouterr().out.count("Calculating MSE!") == 0


def test_python_side_effects(capsys):
    @tf.function
    def f(x):
        print("Traced with", x)
        tf.print("Executed with", x)

    f(1)
    f(1)
    f(2)
    captured = capsys.readouterr()
    assert captured.out == "Traced with 1\nTraced with 2\n"
    assert captured.err == "Executed with 1\nExecuted with 1\nExecuted with 2\n"

    external_list = []

    @tf.function
    def side_effect(x):
        print('Python side effect')
        external_list.append(x)

    side_effect(1)
    side_effect(1)
    side_effect(1)
    # The list append only happened once!
    assert len(external_list) == 1


def test_init_scope_lifts_the_increment_out_of_the_function():
    class Model(tf.Module):
        def __init__(self):
            self.v = tf.Variable(0)
            self.counter = 0

        @tf.function
        def __call__(self):
            if self.counter == 0:
                # A python side-effect
                self.counter += 1
                self.v.assign_add(1)
            return self.v

    m = Model()
    assert [int(m().numpy()) for _ in range(3)] == [1, 2, 3]

    class LiftedModel(Model):
        @tf.function
        def __call__(self):
            if self.counter == 0:
                # Lifts ops out of function-building graphs
                with tf.init_scope():
                    self.counter += 1
                    self.v.assign_add(1)
            return self.v

    m = LiftedModel()
    assert [int(m().numpy()) for _ in range(3)] == [1, 1, 1]


def test_leaked_tensors_cannot_be_captured():
    leaked = []

    @tf.function
    def leaky_function(a):
        leaked.append(a + 1)  # Bad - leaks local tensor
        return a + 2

    assert leaky_function(tf.constant(1)).numpy() == 3

    @tf.function
    def captures_leaked_tensor(b):
        b += leaked[0]  # Bad - `x` is leaked from `leaky_function`
        return b

    with pytest.raises(TypeError, match="out of scope"):
        captures_leaked_tensor(tf.constant(2))


def test_recursion_on_a_tensor_condition_raises(capsys):
    @tf.function
    def recursive_fn(n):
        if n > 0:
            return recursive_fn(n - 1)
        else:
            return 1

    with pytest.raises(RecursionError):
        recursive_fn(tf.constant(5))  # Bad - maximum recursion error.

    @tf.function
    def recursive_fn(n):
        if n > 0:
            print('tracing')
            return recursive_fn(n - 1)
        else:
            return 1

    assert recursive_fn(5).numpy() == 1  # Warning - multiple tracings
    assert capsys.readouterr().out.count("tracing") == 5


def test_python_globals_are_captured_at_trace_time():
    namespace = {"tf": tf, "foo": 1}
    exec(
        "@tf.function\n"
        "def buggy_add():\n"
        "    return 1 + foo\n",
        namespace)
    buggy_add = namespace["buggy_add"]
    assert buggy_add().numpy() == 2
    namespace["foo"] = 100
    assert buggy_add().numpy() == 2  # Did not change!
    namespace["foo"] = tf.Variable(1)
    exec(
        "@tf.function\n"
        "def variable_add():\n"
        "    return 1 + foo\n",
        namespace)
    variable_add = namespace["variable_add"]
    assert variable_add().numpy() == 2
    namespace["foo"].assign(100)
    assert variable_add().numpy() == 101


def test_depending_on_python_objects():
    class SimpleModel(tf.Module):
        def __init__(self):
            # These values are *not* tf.Variables.
            self.bias = 0.
            self.weight = 2.

    @tf.function
    def evaluate(model, x):
        return model.weight * x + model.bias

    simple_model = SimpleModel()
    x = tf.constant(10.)
    assert evaluate(simple_model, x).numpy() == 20.0
    simple_model.bias += 5.0
    assert evaluate(simple_model, x).numpy() == 20.0  # Didn't change :(

    def evaluate(model, x):
        return model.weight * x + model.bias

    new_model = SimpleModel()
    evaluate_no_bias = tf.function(evaluate).get_concrete_function(new_model, x)
    assert evaluate_no_bias(x).numpy() == 20.0
    new_model.bias += 5.0
    evaluate_with_bias = tf.function(evaluate).get_concrete_function(new_model, x)
    assert evaluate_with_bias(x).numpy() == 25.0


def test_creating_variables():
    @tf.function
    def f(x):
        v = tf.Variable(1.0)
        return v

    with pytest.raises(ValueError):
        f(1.0)

    class Count(tf.Module):
        def __init__(self):
            self.count = None

        @tf.function
        def __call__(self):
            if self.count is None:
                self.count = tf.Variable(0)
            return self.count.assign_add(1)

    c = Count()
    assert c().numpy() == 1 and c().numpy() == 2


def test_concrete_functions_per_optimizer():
    opt1 = tf.keras.optimizers.Adam(learning_rate=1e-2)
    opt2 = tf.keras.optimizers.Adam(learning_rate=1e-3)

    def train_step(w, x, y, optimizer):
        with tf.GradientTape() as tape:
            L = tf.reduce_sum(tf.square(w*x - y))
        gradients = tape.gradient(L, [w])
        optimizer.apply_gradients(zip(gradients, [w]))

    w = tf.Variable(2.)
    x = tf.constant([-1.])
    y = tf.constant([2.])
    # Make a new Function and ConcreteFunction for each optimizer.
    train_step_1 = tf.function(train_step).get_concrete_function(w, x, y, opt1)
    train_step_2 = tf.function(train_step).get_concrete_function(w, x, y, opt2)
    for i in range(10):
        if i % 2 == 0:
            train_step_1(w, x, y)  # `opt1` is not used as a parameter.
        else:
            train_step_2(w, x, y)  # `opt2` is not used as a parameter.
    # Adam's first steps move by about the learning rate each (the gradient's sign).
    np.testing.assert_allclose(w.numpy(), 2.0 - 5 * 1e-2 - 5 * 1e-3, atol=2e-3)


def test_tracing_protocol():
    @tf.function
    def get_mixed_flavor(fruit_a, fruit_b):
        return fruit_a.flavor + fruit_b.flavor

    class Fruit:
        flavor = tf.constant([0, 0])

    class Apple(Fruit):
        flavor = tf.constant([1, 2])

    class Mango(Fruit):
        flavor = tf.constant([3, 4])

    # A generic object is part of the signature by identity: each new pair traces.
    np.testing.assert_array_equal(get_mixed_flavor(Apple(), Mango()).numpy(), [4, 6])
    np.testing.assert_array_equal(get_mixed_flavor(Apple(), Mango()).numpy(), [4, 6])
    assert get_mixed_flavor.experimental_get_tracing_count() == 2

    class FruitTraceType(tf.types.experimental.TraceType):
        def __init__(self, fruit_type):
            self.fruit_type = fruit_type

        def is_subtype_of(self, other):
            return (type(other) is FruitTraceType and
                    self.fruit_type is other.fruit_type)

        def most_specific_common_supertype(self, others):
            return self if all(self == other for other in others) else None

        def __eq__(self, other):
            return type(other) is FruitTraceType and self.fruit_type == other.fruit_type

        def __hash__(self):
            return hash(self.fruit_type)

    class FruitWithTraceType:
        def __tf_tracing_type__(self, context):
            return FruitTraceType(type(self))

    class AppleWithTraceType(FruitWithTraceType):
        flavor = tf.constant([1, 2])

    class MangoWithTraceType(FruitWithTraceType):
        flavor = tf.constant([3, 4])

    # Now if you try calling it again:
    get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType())  # Traces a new function
    out = get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType())  # Re-uses the trace
    np.testing.assert_array_equal(out.numpy(), [4, 6])
    assert get_mixed_flavor.experimental_get_tracing_count() == 3
    out = get_mixed_flavor(MangoWithTraceType(), MangoWithTraceType())  # another type
    np.testing.assert_array_equal(out.numpy(), [6, 8])
    assert get_mixed_flavor.experimental_get_tracing_count() == 4


def test_autograph_to_code_shows_the_converted_function():
    @tf.function
    def f(x):
        while tf.reduce_sum(x) > 1:
            x = tf.tanh(x)
        return x

    code = tf.autograph.to_code(f.python_function)
    assert code.startswith("def f(x):\n") and "tf.tanh(x)" in code
    assert "ag__.while_stmt(" in code  # the while became a loop statement
    out = f(tf.constant([0.9, 0.8]))
    assert tf.reduce_sum(out).numpy() <= 1.0


def test_tensors_made_in_init_scope_are_eager_and_can_be_captured():
    class Scaler(tf.Module):
        def __init__(self):
            self.scale = None

        @tf.function
        def __call__(self, x):
            if self.scale is None:
                with tf.init_scope():  # made once, eagerly: not a leaked graph tensor
                    self.scale = tf.constant(3.0)
            return x * self.scale

    s = Scaler()
    assert s(tf.constant(2.0)).numpy() == 6.0
    np.testing.assert_array_equal(s(tf.constant([1.0, 2.0])).numpy(), [3.0, 6.0])  # retrace
