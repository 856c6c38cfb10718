"""Python reading a random draw inside @gt.function: a call returns the values of one
draw. gt.cond / gt.while_loop / gt.switch_case on a draw take the path of the draw the
call returns; a plain ``if``, ``float()``, ``int()`` or ``.numpy()`` of a draw is TF's
OperatorNotAllowedInGraphError, naming gt.cond and gt.while_loop. Every test runs
compiled and interpreted (``compile_mode``)."""

import numpy as np
import pytest

import gradtape as gt

R = gt.random


@pytest.fixture(autouse=True)
def _unseed():
    yield
    R.set_seed(None)


def _cond_step(x):
    u = R.uniform([])
    return u, gt.cond(u > 0.9, lambda: x * 10.0, lambda: x - 10.0)


def test_cond_on_a_draw_takes_the_branch_of_the_returned_draw(compile_mode):
    """The issue's program: u = 0.6251 came back with the u > 0.9 branch."""
    x = gt.constant(1.0)
    R.set_seed(7)
    eager = [tuple(float(t) for t in _cond_step(x)) for _ in range(30)]
    R.set_seed(7)
    f = gt.function(_cond_step)
    traced = [tuple(float(t) for t in f(x)) for _ in range(30)]
    for u, y in traced:
        assert y == (10.0 if u > 0.9 else -9.0), (u, y)
    assert traced == eager  # the draws eager calls make, in their order
    assert {y for _, y in traced} == {10.0, -9.0}  # both branches were taken


def test_while_loop_on_draws_stops_on_the_returned_draw(compile_mode):
    """Rejection sampling: draw until u >= 0.7; the count and the u returned are one
    draw's, as eagerly."""
    def sample():
        return gt.while_loop(lambda n, u: u < 0.7, lambda n, u: (n + 1, R.uniform([])),
                             (gt.constant(0), R.uniform([])))

    R.set_seed(3)
    eager = [(int(n), float(u)) for n, u in (sample() for _ in range(12))]
    R.set_seed(3)
    f = gt.function(sample)
    traced = [(int(n), float(u)) for n, u in (f() for _ in range(12))]
    assert all(u >= 0.7 for _, u in traced)
    assert traced == eager
    assert len({n for n, _ in traced}) > 1


def test_switch_case_on_a_drawn_index(compile_mode):
    def pick(x):
        k = R.uniform([], 0, 3, dtype=gt.int32)
        return k, gt.switch_case(k, [lambda: x, lambda: x * 2.0, lambda: x * 3.0])

    x = gt.constant(5.0)
    R.set_seed(11)
    f = gt.function(pick)
    for _ in range(15):
        k, y = f(x)
        assert float(y) == 5.0 * (int(k) + 1)


def _raises_naming_cond(f, *args):
    with pytest.raises(gt.errors.OperatorNotAllowedInGraphError) as info:
        f(*args)
    message = str(info.value)
    assert "gt.cond" in message and "gt.while_loop" in message
    assert "random draw" in message
    assert __file__ in message  # the user's line
    return message


def test_python_if_on_a_draw_raises_tf_error(compile_mode):
    @gt.function(autograph=False)  # converted, the if is a gt.cond (test_autograph.py)
    def f(x):
        u = R.uniform([])
        if u > 0.5:
            return x * 10.0
        return x - 10.0

    message = _raises_naming_cond(f, gt.constant(1.0))
    assert message.startswith("@gt.function 'f': bool(t)")
    assert issubclass(gt.errors.OperatorNotAllowedInGraphError, TypeError)  # as TF's


def test_int_of_a_count_of_a_drawn_mask_raises(compile_mode):
    @gt.function
    def f():
        mask = R.uniform([10]) > 0.5
        n = int(gt.reduce_sum(gt.cast(mask, gt.int32)))
        return mask, gt.constant(n)

    assert "int(t)" in _raises_naming_cond(f)


@pytest.mark.parametrize("read", [
    lambda t: float(t),
    lambda t: t.numpy(),
    lambda t: np.asarray(t),
    lambda t: t.numpy().tolist(),
])
def test_every_value_read_of_a_draw_raises(compile_mode, read):
    @gt.function
    def f():
        u = R.normal([]) * 2.0 + 1.0
        return u, gt.constant(read(u))

    _raises_naming_cond(f)


@pytest.mark.parametrize("draw", [
    lambda: R.Generator.from_seed(1).normal([]),
    lambda: R.truncated_normal([]),
    lambda: gt.cast(R.categorical(gt.constant([[0.0, 1.0]]), 1)[0, 0], gt.float32),
    lambda: gt.reduce_sum(gt.nn.dropout(gt.ones([4]), rate=0.5)),
    lambda: gt.cast(R.shuffle(gt.constant([1, 2, 3]))[0], gt.float32),
], ids=["generator", "truncated_normal", "categorical", "dropout", "shuffle"])
def test_reads_of_every_stateful_random_op_raise(compile_mode, draw):
    @gt.function
    def f():
        return gt.constant(float(draw()))

    _raises_naming_cond(f)


def test_a_stateless_draw_is_pure_and_may_be_read(compile_mode):
    """Its value is fixed by the seed: a guard, as any value read."""
    @gt.function
    def f(x):
        u = R.stateless_uniform([], seed=[1, 2])
        return x * 10.0 if float(u) > 0.5 else x - 10.0

    expected = 10.0 if float(R.stateless_uniform([], seed=[1, 2])) > 0.5 else -9.0
    assert [float(f(gt.constant(1.0))) for _ in range(3)] == [expected] * 3
    assert f.experimental_get_tracing_count() == 1


def test_reads_of_inputs_are_still_guards(compile_mode):
    """A read of a value not drawn (an argument) keeps guard-and-retrace."""
    @gt.function(autograph=False)  # converted, the conditional expression is a cond
    def f(x):
        noise = R.uniform([])
        return (x * 2.0 if x > 0 else -x) + 0.0 * noise

    assert float(f(gt.constant(3.0))) == 6.0
    assert float(f(gt.constant(-3.0))) == 3.0
    assert f.experimental_get_tracing_count() == 2


def test_a_variable_assigned_a_draw_reads_as_a_draw(compile_mode):
    v = gt.Variable(0.0)

    @gt.function
    def f():
        v.assign(R.uniform([]))
        return gt.constant(float(v))

    _raises_naming_cond(f)
