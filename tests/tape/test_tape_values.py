"""A tape records values, as TF's does: a Variable assigned between two reads is read at
two values, a NumPy array the caller writes into after an op keeps the value it had,
and a Variable's snapshot (``convert_to_tensor(v)``, ``v[:]``...) does not follow later
assigns. Expected values are TF 2.21's. Runs compiled and interpreted (conftest)."""

import numpy as np
import pytest

import gradtape as gt


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


# --- a Variable assigned between two reads ---------------------------------------------

def _assign_between_reads(persistent=False, trainable=True, watch_accessed=True):
    x, v = gt.constant(1.0), gt.Variable(2.0, trainable=trainable)
    with gt.GradientTape(persistent=persistent,
                         watch_accessed_variables=watch_accessed) as tape:
        tape.watch(x)
        a = x * v
        v.assign(10.0)
        b = x * v
        z = a + b
    return tape, z, x, v


@pytest.mark.parametrize("trainable", [True, False])
@pytest.mark.parametrize("watch_accessed", [True, False])
def test_each_read_of_a_variable_is_its_own_value(trainable, watch_accessed):
    for _ in range(3):  # the cache must not serve the first read's value either
        tape, z, x, _ = _assign_between_reads(trainable=trainable,
                                              watch_accessed=watch_accessed)
        _close(tape.gradient(z, x), 12.0)  # TF: 2 + 10


def test_gradient_to_a_variable_sums_over_its_reads():
    x, v = gt.constant(3.0), gt.Variable(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        a = x * v
        v.assign(10.0)
        b = x * v * v
        z = a + b
    dx, dv = tape.gradient(z, [x, v])
    _close(dx, 2.0 + 100.0)
    _close(dv, 3.0 + 2 * 3.0 * 10.0)  # d(x v1)/dv1 + d(x v2^2)/dv2


def test_persistent_tape_repeats_and_jacobian_see_both_reads():
    tape, z, x, v = _assign_between_reads(persistent=True)
    for _ in range(3):
        _close(tape.gradient(z, x), 12.0)
    _close(tape.gradient(z, [x, v])[1], 2.0)
    _close(tape.jacobian(z, x), 12.0)


def test_stateful_loop_reads_each_step_value():
    for _ in range(2):
        x, s = gt.constant(1.0), gt.Variable(1.0)
        with gt.GradientTape() as tape:
            tape.watch(x)
            total = gt.constant(0.0)
            for _ in range(3):
                total = total + x * s
                s.assign_add(1.0)
        _close(tape.gradient(total, x), 6.0)  # TF: 1 + 2 + 3


def test_assign_under_stop_recording_still_splits_the_reads():
    x, v = gt.constant(1.0), gt.Variable(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        a = x * v
        with tape.stop_recording():
            v.assign(10.0)
        z = a + x * v
    _close(tape.gradient(z, x), 12.0)


def test_nested_tapes_differentiate_each_read():
    x, v = gt.constant(1.0), gt.Variable(2.0)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            a = x * x * v
            v.assign(10.0)
            z = a + x * x * v
        g = inner.gradient(z, x)  # 2x (2 + 10)
    _close(g, 24.0)
    _close(outer.gradient(g, x), 24.0)


def test_assign_inside_a_function_between_reads():
    v = gt.Variable(2.0)

    @gt.function
    def grad(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            a = x * v
            v.assign(10.0)
            z = a + x * v
        return tape.gradient(z, x)

    _close(grad(gt.constant(1.0)), 12.0)
    v.assign(3.0)
    _close(grad(gt.constant(1.0)), 13.0)


def test_a_variable_read_once_after_an_assign_is_differentiated_at_that_value():
    x, v = gt.constant(1.0), gt.Variable(2.0)
    with gt.GradientTape() as tape:
        tape.watch([x, v])
        v.assign(5.0)
        z = x * v * v
    dx, dv = tape.gradient(z, [x, v])
    _close(dx, 25.0)
    _close(dv, 10.0)


# --- NumPy operands are values ---------------------------------------------------------

def test_a_numpy_operand_written_after_the_op_keeps_its_recorded_value():
    for _ in range(2):
        x = gt.constant([1.0, 2.0, 3.0])
        a = np.array([1.0, 2.0, 3.0], np.float32)
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.reduce_sum(x * a)
        a *= 10
        _close(tape.gradient(y, x), [1.0, 2.0, 3.0])


def test_numpy_operands_of_matmul_and_persistent_repeats_keep_their_values():
    x = gt.constant(np.eye(2))
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.matmul(x, m) * m)
    m[:] = 0.0
    for _ in range(2):
        # d/dx sum((x m) * m) = m_original @ m_original.T
        want = np.array([[1.0, 2.0], [3.0, 4.0]])
        _close(tape.gradient(y, x), want @ want.T)


def test_constant_copies_the_array_it_is_made_from():
    a = np.array([1.0, 2.0])
    c = gt.constant(a)
    x = gt.constant([3.0, 4.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(x * c)
    a[:] = 100.0
    _close(c, [1.0, 2.0])
    _close(tape.gradient(y, x), [1.0, 2.0])


# --- a Variable's snapshot is a copy ---------------------------------------------------

SNAPSHOTS = {
    "convert_to_tensor": lambda v: gt.convert_to_tensor(v),
    "reshape to the same shape": lambda v: gt.reshape(v, (2, 2)),
    "np.reshape": lambda v: np.reshape(v, (2, 2)),
    "v[:]": lambda v: v[:],
    "squeeze": lambda v: gt.squeeze(v),
    "transpose by the identity": lambda v: gt.transpose(v, (0, 1)),
    "cast to its own dtype": lambda v: gt.cast(v, "float32"),
    "broadcast_to its own shape": lambda v: gt.broadcast_to(v, (2, 2)),
    "reduce_sum over no axes": lambda v: gt.reduce_sum(v, axis=[]),
    "roll by 0": lambda v: gt.roll(v, 0, 0),
    "np.positive": lambda v: np.positive(v),
}


@pytest.mark.parametrize("make", SNAPSHOTS.values(), ids=SNAPSHOTS.keys())
def test_a_snapshot_of_a_variable_does_not_follow_later_assigns(make):
    v = gt.Variable([[1.0, 2.0], [3.0, 4.0]])
    snapshot = make(v)
    assert not isinstance(snapshot, gt.Variable)
    v.assign_sub(np.ones((2, 2), np.float32))
    _close(snapshot, [[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("make", SNAPSHOTS.values(), ids=SNAPSHOTS.keys())
def test_a_snapshot_read_inside_a_tape_passes_the_gradient_to_the_variable(make):
    v = gt.Variable([[1.0, 2.0], [3.0, 4.0]])
    with gt.GradientTape() as tape:
        s = make(v)
        y = gt.reduce_sum(s * s)
    _close(tape.gradient(y, v), [[2.0, 4.0], [6.0, 8.0]])


def test_inspect_shows_each_read_of_a_variable_as_its_own_input():
    tape, z, x, _ = _assign_between_reads(persistent=True)
    shown = tape.inspect(z, x)
    assert "c_2:float32[] c_3:float32[]" in shown.forward_ir  # the two values read
    _close(tape.gradient(z, x), 12.0)


def test_a_function_captures_a_numpy_array_as_it_was_when_traced():
    a = np.array([1.0, 2.0, 3.0])

    @gt.function
    def value_and_gradient(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.reduce_sum(x * a)
        return y, tape.gradient(y, x)

    x = gt.constant(np.ones(3))
    for _ in range(2):  # TF embeds the array in the graph: later writes change nothing
        y, g = value_and_gradient(x)
        _close(y, 6.0)
        _close(g, [1.0, 2.0, 3.0])
        a *= 10
