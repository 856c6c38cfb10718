"""Cells of the "AutoGraph transformations" section of TF's "Better performance with
tf.function" guide (tensorflow.org/guide/function), run with ``import gradtape as tf``;
each checks what the guide prints. ``measure_graph_size`` counts the trace's equations
(``get_concrete_function(...).program``) where TF counts graph nodes: gradtape computes
a loop over Python numbers while tracing, so that trace holds no equation at all; a
``for`` over a ``gt.data.Dataset`` is a Python loop over its elements (gt.data's
iteration inside ``@gt.function``), one copy of the body per element, not TF's
dataset loop."""

import numpy as np

import gradtape as tf


def test_a_simple_loop_and_its_converted_code(capsys):
    # A simple loop

    @tf.function
    def f(x):
        while tf.reduce_sum(x) > 1:
            tf.print(x)
            x = tf.tanh(x)
        return x

    x = tf.random.uniform([5])
    out = f(x)
    expected = x.numpy()
    printed = 0
    while expected.sum() > 1:
        expected, printed = np.tanh(expected), printed + 1
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    assert len(capsys.readouterr().err.strip().splitlines()) == printed  # tf.print per step

    print(tf.autograph.to_code(f.python_function))
    code = capsys.readouterr().out
    assert "def f(x):" in code and "ag__.while_stmt(" in code and "tf.tanh(x)" in code


def test_conditionals_fizzbuzz(capsys):
    @tf.function
    def fizzbuzz(n):
        for i in tf.range(1, n + 1):
            print('Tracing for loop')
            if i % 15 == 0:
                print('Tracing fizzbuzz branch')
                tf.print('fizzbuzz')
            elif i % 3 == 0:
                print('Tracing fizz branch')
                tf.print('fizz')
            elif i % 5 == 0:
                print('Tracing buzz branch')
                tf.print('buzz')
            else:
                print('Tracing default branch')
                tf.print(i)

    fizzbuzz(tf.constant(5))
    fizzbuzz(tf.constant(20))
    captured = capsys.readouterr()
    # Python's prints run while tracing: the loop and every branch once, for both calls.
    for line in ['Tracing for loop', 'Tracing fizzbuzz branch', 'Tracing fizz branch',
                 'Tracing buzz branch', 'Tracing default branch']:
        assert line in captured.out.splitlines()
    words = ["fizzbuzz" if i % 15 == 0 else "fizz" if i % 3 == 0 else
             "buzz" if i % 5 == 0 else str(i) for i in [*range(1, 6), *range(1, 21)]]
    assert captured.err.split() == words


def test_looping_over_python_data_and_a_dataset(capsys):
    def measure_graph_size(f, *args):
        g = f.get_concrete_function(*args).program
        print("{}({}) contains {} nodes in its graph".format(
            f.__name__, ', '.join(map(str, args)), len(g.eqns)))
        return len(g.eqns)

    @tf.function
    def train(dataset):
        loss = tf.constant(0)
        for x, y in dataset:
            loss += tf.abs(y - x)  # Some dummy computation.
        return loss

    small_data = [(1, 1)] * 3
    big_data = [(1, 1)] * 10
    measure_graph_size(train, small_data)
    measure_graph_size(train, big_data)

    measure_graph_size(train, tf.data.Dataset.from_generator(
        lambda: small_data, (tf.int32, tf.int32)))
    measure_graph_size(train, tf.data.Dataset.from_generator(
        lambda: big_data, (tf.int32, tf.int32)))
    assert capsys.readouterr().out.count("nodes in its graph") == 4
    assert int(train(small_data)) == 0 and int(train([(1, 3), (5, 2)])) == 5
    assert int(train(tf.data.Dataset.from_generator(
        lambda: [(1, 3), (5, 2)], (tf.int32, tf.int32)))) == 5


def test_accumulating_values_in_a_loop_with_a_tensor_array():
    batch_size = 2
    seq_len = 3
    feature_size = 4

    def rnn_step(inp, state):
        return inp + state

    @tf.function
    def dynamic_rnn(rnn_step, input_data, initial_state):
        # [batch, time, features] -> [time, batch, features]
        input_data = tf.transpose(input_data, [1, 0, 2])
        max_seq_len = input_data.shape[0]

        states = tf.TensorArray(tf.float32, size=max_seq_len)
        state = initial_state
        for i in tf.range(max_seq_len):
            state = rnn_step(input_data[i], state)
            states = states.write(i, state)
        return tf.transpose(states.stack(), [1, 0, 2])

    data = tf.random.uniform([batch_size, seq_len, feature_size])
    out = dynamic_rnn(rnn_step, data, tf.zeros([batch_size, feature_size]))
    np.testing.assert_allclose(out.numpy(), np.cumsum(data.numpy(), axis=1), rtol=1e-6)
