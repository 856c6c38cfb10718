"""The examples of TF's ``tf.while_loop``, ``tf.scan`` and ``tf.TensorArray`` API pages,
and the AutoGraph cell of the "Introduction to graphs and tf.function" guide
(tensorflow.org/guide/intro_to_graphs), run with ``import gradtape as tf``; each checks
the output the page documents. The API examples run eagerly as written, and once more
inside ``@tf.function``, where they compile to one loop each."""

import collections

import numpy as np
import pytest

import gradtape as tf
from gradtape import scan


def _loop_primitives(fn, *args):
    """The primitive names of ``fn``'s trace, those inside loop bodies too."""
    def names(program):
        found = set()
        for eqn in program.eqns:
            found.add(eqn.prim.name)
            for value in eqn.params.values():
                for sub in value if isinstance(value, tuple) else (value,):
                    if hasattr(sub, "eqns"):
                        found |= names(sub)
        return found
    return names(fn.get_concrete_function(*args).program)


# --- tf.while_loop -----------------------------------------------------------------------

def test_while_loop_example():
    i = tf.constant(0)
    c = lambda i: tf.less(i, 10)  # noqa: E731 (the page's lambdas)
    b = lambda i: (tf.add(i, 1), )  # noqa: E731
    r = tf.while_loop(c, b, [i])[0]
    assert r.numpy() == 10

    compiled = tf.function(lambda i: tf.while_loop(c, b, [i])[0])
    assert compiled(i).numpy() == 10 and compiled(tf.constant(4)).numpy() == 10
    assert compiled.experimental_get_tracing_count() == 1
    assert "loop" in _loop_primitives(compiled, i)


def test_while_loop_with_nesting_and_a_namedtuple():
    Pair = collections.namedtuple('Pair', 'j, k')
    ijk_0 = (tf.constant(0), Pair(tf.constant(1), tf.constant(2)))
    c = lambda i, p: i < 10  # noqa: E731
    b = lambda i, p: (i + 1, Pair((p.j + p.k), (p.j - p.k)))  # noqa: E731
    ijk_final = tf.while_loop(c, b, ijk_0)[1]
    assert (ijk_final[0].numpy(), ijk_final[1].numpy()) == (32, 64)

    compiled = tf.function(lambda ijk: tf.while_loop(c, b, ijk)[1])
    final = compiled(ijk_0)
    assert isinstance(final, Pair) and (final.j.numpy(), final.k.numpy()) == (32, 64)


def test_while_loop_using_shape_invariants():
    i0 = tf.constant(0)
    m0 = tf.ones([2, 2])
    c = lambda i, m: i < 10  # noqa: E731
    b = lambda i, m: [i+1, tf.concat([m, m], axis=0)]  # noqa: E731
    out = tf.while_loop(
        c, b, loop_vars=[i0, m0],
        shape_invariants=[i0.get_shape(), tf.TensorShape([None, 2])])[1]
    assert out.shape == (2048, 2) and out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), np.ones((2048, 2)))


# --- tf.scan -----------------------------------------------------------------------------

def _scan_examples():
    elems = np.array([1, 2, 3, 4, 5, 6])
    sum = scan(lambda a, x: a + x, elems)
    reverse = scan(lambda a, x: a + x, elems, reverse=True)
    initializer = np.array(0)
    sum_one = scan(
        lambda a, x: x[0] - x[1] + a, (elems + 1, elems), initializer)
    elems = np.array([1, 0, 0, 0, 0, 0])
    initializer = (np.array(0), np.array(1))
    fibonaccis = scan(lambda a, _: (a[1], a[0] + a[1]), elems, initializer)
    return sum, reverse, sum_one, fibonaccis


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_scan_examples(compiled):
    run = tf.function(_scan_examples) if compiled else _scan_examples
    sum, reverse, sum_one, fibonaccis = run()
    np.testing.assert_array_equal(sum.numpy(), [1, 3, 6, 10, 15, 21])
    np.testing.assert_array_equal(reverse.numpy(), [21, 20, 18, 15, 11, 6])
    np.testing.assert_array_equal(sum_one.numpy(), [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(fibonaccis[0].numpy(), [1, 1, 2, 3, 5, 8])
    np.testing.assert_array_equal(fibonaccis[1].numpy(), [1, 2, 3, 5, 8, 13])
    if compiled:
        assert "loop" in _loop_primitives(run)


# --- tf.TensorArray ----------------------------------------------------------------------

def test_tensor_array_plain_reading_and_writing():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
    ta = ta.write(0, 10)
    ta = ta.write(1, 20)
    ta = ta.write(2, 30)

    for k, want in enumerate([10.0, 20.0, 30.0]):
        value = ta.read(k)
        assert value.shape == () and value.dtype == tf.float32 and value.numpy() == want
    stacked = ta.stack()
    assert stacked.shape == (3,) and stacked.dtype == tf.float32
    np.testing.assert_array_equal(stacked.numpy(), [10., 20., 30.])


def test_tensor_array_fibonacci_writes_in_a_loop_then_returns():
    @tf.function
    def fibonacci(n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        ta = ta.unstack([0., 1.])

        for i in range(2, n):
            ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))

        return ta.stack()

    out = fibonacci(7)
    assert out.shape == (7,) and out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), [0., 1., 1., 2., 3., 5., 8.])


def test_tensor_array_a_simple_loop_interacting_with_a_variable():
    v = tf.Variable(1)

    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        for i in tf.range(x):
            v.assign_add(i)
            ta = ta.write(i, v)
        return ta.stack()

    out = f(5)
    assert out.shape == (5,) and out.dtype == tf.int32
    np.testing.assert_array_equal(out.numpy(), [1, 2, 4, 7, 11])


def test_tensor_array_in_a_static_size_loop_compiles_to_a_buffer():
    """The same loop with a size known when it starts (``size=x``): one buffer, each
    call's trip count at run time."""
    @tf.function
    def squares(x, n):
        ta = tf.TensorArray(tf.float32, size=x.shape[0])
        for i in tf.range(n):
            ta = ta.write(i, x[i] * x[i])
        return ta.stack()

    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(squares(x, tf.constant(4)).numpy(), [1, 4, 9, 16])
    np.testing.assert_array_equal(squares(x, tf.constant(2)).numpy(), [1, 4, 0, 0])
    assert squares.experimental_get_tracing_count() == 1
    assert {"loop", "row_write"} <= _loop_primitives(squares, x, tf.constant(2))


# --- intro_to_graphs: converting Python functions to graphs ------------------------------

def test_intro_to_graphs_simple_relu(capsys):
    def simple_relu(x):
        if tf.greater(x, 0):
            return x
        else:
            return 0

    # `tf_simple_relu` is a TensorFlow `Function` that wraps `simple_relu`.
    tf_simple_relu = tf.function(simple_relu)

    print("First branch, with graph:", tf_simple_relu(tf.constant(1)).numpy())
    print("Second branch, with graph:", tf_simple_relu(tf.constant(-1)).numpy())
    assert capsys.readouterr().out.splitlines() == ["First branch, with graph: 1",
                                                    "Second branch, with graph: 0"]
    assert tf_simple_relu.experimental_get_tracing_count() == 1  # a cond, not a guard

    # This is the graph-generating output of AutoGraph.
    print(tf.autograph.to_code(simple_relu))
    code = capsys.readouterr().out
    assert "def simple_relu(x):" in code and "ag__.if_stmt(" in code
