"""Optimizers against their update formulas written out in NumPy, step by step.

The references below transcribe Keras 3's update rules (keras/src/optimizers/*.py) in
float64. Keras keeps a float learning rate in a float32 variable, so the references use
``float(np.float32(lr))``.
"""

import warnings

import numpy as np
import pytest

import gradtape as gt
from gradtape import optimizers
from gradtape.optimizers import schedules

RNG = np.random.default_rng(0)
W0 = RNG.standard_normal((3, 2))
GRADS = [RNG.standard_normal((3, 2)) for _ in range(5)]


def lr32(lr):
    return float(np.float32(lr))


def run(opt, grads=GRADS, w0=W0):
    """Apply ``grads`` one step at a time; the variable's value after each step."""
    w = gt.Variable(w0.copy())
    out = []
    for g in grads:
        opt.apply_gradients([(gt.constant(g), w)])
        out.append(w.numpy())
    return out


# --- NumPy references -------------------------------------------------------------------

def ref_sgd(lr, momentum=0.0, nesterov=False):
    lr, w, m, out = lr32(lr), W0.copy(), np.zeros_like(W0), []
    for g in GRADS:
        if momentum == 0:
            w = w - lr * g
        else:
            m = momentum * m - lr * g
            w = w + (momentum * m - lr * g if nesterov else m)
        out.append(w)
    return out


def ref_adam(lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False):
    lr, w = lr32(lr), W0.copy()
    m, v, v_hat, out = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w), []
    for t, g in enumerate(GRADS, start=1):
        alpha = lr * np.sqrt(1 - beta_2**t) / (1 - beta_1**t)
        m = m + (g - m) * (1 - beta_1)
        v = v + (g * g - v) * (1 - beta_2)
        if amsgrad:
            v_hat = np.maximum(v_hat, v)
            w = w - m * alpha / (np.sqrt(v_hat) + epsilon)
        else:
            w = w - m * alpha / (np.sqrt(v) + epsilon)
        out.append(w)
    return out


def ref_rmsprop(lr, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False):
    lr, w = lr32(lr), W0.copy()
    vel, avg, mom, out = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w), []
    for g in GRADS:
        vel = rho * vel + (1 - rho) * g * g
        if centered:
            avg = rho * avg + (1 - rho) * g
            denominator = vel - avg * avg + epsilon
        else:
            denominator = vel + epsilon
        increment = lr * g / np.sqrt(denominator)
        if momentum > 0:
            mom = momentum * mom + increment
            w = w - mom
        else:
            w = w - increment
        out.append(w)
    return out


def ref_adagrad(lr, initial_accumulator_value=0.1, epsilon=1e-7):
    lr, w, out = lr32(lr), W0.copy(), []
    acc = np.full_like(w, initial_accumulator_value)
    for g in GRADS:
        acc = acc + g * g
        w = w - lr * g / np.sqrt(acc + epsilon)
        out.append(w)
    return out


def assert_steps(got, expected):
    assert len(got) == len(expected)
    for step, (a, b) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=f"step {step}")


# --- update formulas ----------------------------------------------------------------------

@pytest.mark.parametrize("momentum,nesterov", [(0.0, False), (0.9, False), (0.9, True),
                                               (0.5, True)])
def test_sgd_matches_formula(momentum, nesterov):
    opt = optimizers.SGD(0.1, momentum=momentum, nesterov=nesterov)
    assert_steps(run(opt), ref_sgd(0.1, momentum, nesterov))


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_matches_formula(amsgrad):
    opt = optimizers.Adam(0.05, beta_1=0.8, beta_2=0.95, epsilon=1e-3, amsgrad=amsgrad)
    assert_steps(run(opt), ref_adam(0.05, 0.8, 0.95, 1e-3, amsgrad))


def test_adam_amsgrad_differs_from_adam():
    # Gradients that shrink make v fall below its running maximum: the variants part.
    grads = [GRADS[0] * 10, GRADS[1] * 0.1, GRADS[2] * 0.1]
    a = run(optimizers.Adam(0.1), grads)[-1]
    b = run(optimizers.Adam(0.1, amsgrad=True), grads)[-1]
    assert not np.allclose(a, b)


@pytest.mark.parametrize("momentum,centered", [(0.0, False), (0.0, True), (0.7, False),
                                               (0.7, True)])
def test_rmsprop_matches_formula(momentum, centered):
    opt = optimizers.RMSprop(0.01, rho=0.8, momentum=momentum, epsilon=1e-4, centered=centered)
    assert_steps(run(opt), ref_rmsprop(0.01, 0.8, momentum, 1e-4, centered))


def test_adagrad_matches_formula():
    opt = optimizers.Adagrad(0.3, initial_accumulator_value=0.5, epsilon=1e-5)
    assert_steps(run(opt), ref_adagrad(0.3, 0.5, 1e-5))


def test_default_hyperparameters_are_keras_defaults():
    assert_steps(run(optimizers.SGD()), ref_sgd(0.01))
    assert_steps(run(optimizers.Adam()), ref_adam(0.001))
    assert_steps(run(optimizers.RMSprop()), ref_rmsprop(0.001))
    assert_steps(run(optimizers.Adagrad()), ref_adagrad(0.001))


# Values published in Keras's own tests and docstrings: an independent check of the
# formulas transcribed above.

def test_keras_single_step_values():
    grads = gt.constant([1.0, 6.0, 7.0, 2.0])
    w = gt.Variable([1.0, 2.0, 3.0, 4.0])
    optimizers.Adam(learning_rate=0.5).apply_gradients(zip([grads], [w]))
    np.testing.assert_allclose(w.numpy(), [0.5, 1.5, 2.5, 3.5], rtol=1e-4, atol=1e-4)
    w = gt.Variable([1.0, 2.0, 3.0, 4.0])
    optimizers.RMSprop(learning_rate=0.5).apply_gradients(zip([grads], [w]))
    np.testing.assert_allclose(w.numpy(), [-0.5811, 0.4189, 1.4189, 2.4189], atol=1e-4)


def test_keras_golden_adam_amsgrad():
    opt = optimizers.Adam(amsgrad=True)
    x = gt.Variable(np.ones(10, np.float32))
    grads = gt.constant(np.arange(0.1, 1.1, 0.1).astype(np.float32))
    opt.apply_gradients(zip([gt.constant(np.full(10, 0.01, np.float32))], [x]))
    for expected in [0.999, 0.9982, 0.9974, 0.9965, 0.9955]:
        np.testing.assert_allclose(x.numpy(), np.full(10, expected), atol=5e-4)
        opt.apply_gradients(zip([grads], [x]))


def test_keras_rmsprop_minimize_docstring():
    opt = optimizers.RMSprop(learning_rate=0.1)
    var1 = gt.Variable(10.0)
    opt.minimize(lambda: (var1**2) / 2.0, [var1])
    assert var1.numpy() == pytest.approx(9.683772, abs=1e-5)


def test_float32_variables_stay_float32():
    w = gt.Variable(np.ones(3, np.float32))
    for opt in [optimizers.SGD(0.1, momentum=0.9), optimizers.Adam(), optimizers.RMSprop(
            centered=True, momentum=0.5), optimizers.Adagrad()]:
        # A float64 gradient is cast to the variable's dtype, as Keras does.
        opt.apply_gradients([(np.array([0.5, -1.0, 2.0]), w)])
        assert w.dtype == np.float32
        assert all(s.dtype == np.float32 for s in opt.variables[2:])


# --- apply_gradients --------------------------------------------------------------------

def test_iterations_count_updates():
    opt = optimizers.SGD(0.1)
    w = gt.Variable([1.0, 2.0])
    assert opt.iterations.numpy() == 0 and opt.iterations.dtype == np.int64
    result = opt.apply_gradients(zip([gt.constant([1.0, 1.0])], [w]))
    assert result is opt.iterations
    opt.apply_gradients(zip([gt.constant([1.0, 1.0])], [w]))
    assert opt.iterations.numpy() == 2
    np.testing.assert_allclose(w.numpy(), [1.0 - 2 * lr32(0.1), 2.0 - 2 * lr32(0.1)],
                               rtol=1e-6)


def test_none_gradients_are_skipped_with_a_warning():
    opt = optimizers.SGD(0.5, momentum=0.5)
    a, b = gt.Variable([1.0]), gt.Variable([2.0], name="unused")
    with pytest.warns(UserWarning, match="Gradients do not exist for variables.*unused"):
        opt.apply_gradients([(gt.constant([1.0]), a), (None, b)])
    assert b.numpy()[0] == 2.0
    assert a.numpy()[0] == pytest.approx(1.0 - lr32(0.5))
    assert opt.iterations.numpy() == 1


def test_all_none_gradients_raise():
    opt = optimizers.Adam()
    w = gt.Variable([1.0])
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, w)])
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([])
    opt.apply([], [])  # Keras 3: an empty apply is a no-op
    assert opt.iterations.numpy() == 0
    assert w.numpy()[0] == 1.0


def test_bad_arguments_raise():
    opt = optimizers.SGD()
    with pytest.raises(TypeError, match="gt.Variable"):
        opt.apply_gradients([(gt.constant(1.0), gt.constant(2.0))])
    with pytest.raises(ValueError, match="must match"):
        opt.apply_gradients([(gt.constant([1.0, 2.0]), gt.Variable([1.0, 2.0, 3.0]))])
    with pytest.raises(ValueError, match="pairs"):
        opt.apply_gradients([gt.constant(1.0)])
    with pytest.raises(ValueError, match="momentum"):
        optimizers.SGD(momentum=1.5)
    with pytest.raises(ValueError, match="learning_rate"):
        optimizers.Adam(learning_rate="fast")
    with pytest.raises(ValueError, match="rho"):
        optimizers.RMSprop(rho=2.0)
    with pytest.raises(ValueError, match="non-negative"):
        optimizers.Adagrad(initial_accumulator_value=-1.0)


def test_slots_are_created_for_variables_added_later():
    opt = optimizers.SGD(0.1, momentum=0.9)
    a = gt.Variable(W0.copy())
    opt.apply_gradients([(GRADS[0], a)])
    b = gt.Variable(W0.copy())
    for g in GRADS:
        opt.apply_gradients([(g, a), (g, b)])
    # b's momentum starts from zero when it joins; a's carried one extra step.
    np.testing.assert_allclose(b.numpy(), ref_sgd(0.1, 0.9)[-1], rtol=1e-12)
    assert not np.allclose(a.numpy(), b.numpy())
    assert opt.get_slot(b, "momentum").shape == b.shape


def test_build_creates_slots():
    opt = optimizers.Adam(amsgrad=True)
    w = gt.Variable(np.zeros((2, 3)))
    opt.build([w])
    assert {"momentum", "velocity", "velocity_hat"} == set(opt._slots[w._id])
    assert len(opt.variables) == 2 + 3
    with pytest.raises(KeyError, match="velocity_hat"):
        optimizers.Adam().get_slot(w, "velocity_hat")


def test_updates_never_mutate_arrays_a_live_tape_holds():
    w = gt.Variable([1.0, -2.0, 3.0])
    held = w._value
    snapshot = held.copy()
    opt = optimizers.Adam(0.1)
    with gt.GradientTape(persistent=True) as tape:
        loss = gt.reduce_sum(w * w * w)
    first = tape.gradient(loss, w).numpy()
    for _ in range(3):
        opt.apply_gradients([(first, w)])
    assert not np.allclose(w.numpy(), snapshot)
    np.testing.assert_array_equal(held, snapshot)  # the recorded array is untouched
    # The tape still differentiates at the values it recorded.
    np.testing.assert_array_equal(tape.gradient(loss, w).numpy(), first)
    np.testing.assert_allclose(first, 3 * snapshot**2)
    for slot in opt.variables[2:]:
        assert slot._value is not held


# --- learning rates ------------------------------------------------------------------------

def test_learning_rate_variable_and_setter():
    opt = optimizers.SGD(0.1)
    assert isinstance(opt.learning_rate, gt.Variable)
    assert opt.learning_rate.dtype == np.float32
    opt.learning_rate = 0.5
    w = gt.Variable([1.0])
    opt.apply_gradients([(np.array([1.0]), w)])
    assert w.numpy()[0] == pytest.approx(0.5)


def test_callable_of_the_step():
    seen = []

    def lr(step):
        seen.append(int(step))
        return 0.1 / (1.0 + float(step))

    opt = optimizers.SGD(lr)
    w = gt.Variable([0.0])
    for _ in range(3):
        opt.apply_gradients([(np.array([1.0]), w)])
    assert seen == [0, 1, 2]
    expected = -sum(lr32(0.1 / (1.0 + k)) for k in range(3))
    assert w.numpy()[0] == pytest.approx(expected, rel=1e-6)


def test_zero_argument_callable():
    opt = optimizers.SGD(lambda: 0.25)
    w = gt.Variable([0.0])
    opt.apply_gradients([(np.array([2.0]), w)])
    assert w.numpy()[0] == pytest.approx(-0.5)


def test_schedule_drives_the_updates():
    schedule = schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    opt = optimizers.SGD(schedule)
    w = gt.Variable([0.0])
    for _ in range(4):
        opt.apply_gradients([(np.array([1.0]), w)])
    expected = -sum(0.1 * 0.5 ** (k / 2) for k in range(4))
    assert w.numpy()[0] == pytest.approx(expected, rel=1e-6)
    assert float(opt.learning_rate) == pytest.approx(0.1 * 0.5**2, rel=1e-6)
    with pytest.raises(TypeError, match="not settable"):
        opt.learning_rate = 0.3


@pytest.mark.parametrize("step", [0, 1, 5, 7, 20])
def test_schedule_formulas(step):
    s = gt.Variable(step, dtype=np.int64)
    got = float(schedules.ExponentialDecay(0.2, 5, 0.3)(s))
    assert got == pytest.approx(0.2 * 0.3 ** (step / 5), rel=1e-6)
    got = float(schedules.ExponentialDecay(0.2, 5, 0.3, staircase=True)(s))
    assert got == pytest.approx(0.2 * 0.3 ** (step // 5), rel=1e-6)
    got = float(schedules.InverseTimeDecay(0.2, 5, 0.3)(s))
    assert got == pytest.approx(0.2 / (1 + 0.3 * step / 5), rel=1e-6)
    got = float(schedules.InverseTimeDecay(0.2, 5, 0.3, staircase=True)(s))
    assert got == pytest.approx(0.2 / (1 + 0.3 * (step // 5)), rel=1e-6)
    got = float(schedules.PiecewiseConstantDecay([1, 5], [1.0, 0.5, 0.1])(s))
    assert got == (1.0 if step <= 1 else 0.5 if step <= 5 else np.float32(0.1))
    got = float(schedules.CosineDecay(0.2, 10, alpha=0.1)(s))
    frac = min(step, 10) / 10
    assert got == pytest.approx(0.2 * (0.9 * 0.5 * (1 + np.cos(np.pi * frac)) + 0.1), rel=1e-5)


def test_cosine_decay_warmup():
    s = schedules.CosineDecay(0.0, 10, warmup_target=1.0, warmup_steps=4)
    assert [float(s(k)) for k in (0, 2, 4)] == pytest.approx([0.0, 0.5, 1.0])
    assert float(s(9)) == pytest.approx(0.5 * (1 + np.cos(np.pi * 0.5)), rel=1e-6)
    assert float(s(100)) == pytest.approx(0.0, abs=1e-7)


def test_schedule_arguments_checked():
    with pytest.raises(ValueError, match="decay_steps"):
        schedules.ExponentialDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="1 less than"):
        schedules.PiecewiseConstantDecay([1, 2], [1.0, 0.5])
    with pytest.raises(NotImplementedError):
        schedules.LearningRateSchedule()(0)


# --- minimize --------------------------------------------------------------------------------

def test_minimize_callable_loss():
    w = gt.Variable(W0.copy())
    target = gt.constant(np.ones((3, 2)))
    opt = optimizers.SGD(0.1, momentum=0.9)
    ref_w, m = W0.copy(), np.zeros_like(W0)
    for _ in range(4):
        opt.minimize(lambda: gt.reduce_sum((w - target) ** 2), [w])
        g = 2 * (ref_w - 1.0)
        m = 0.9 * m - lr32(0.1) * g
        ref_w = ref_w + m
    np.testing.assert_allclose(w.numpy(), ref_w, rtol=1e-12)
    assert opt.iterations.numpy() == 4


def test_minimize_var_list_callable_and_tensor_loss_with_tape():
    w = gt.Variable([3.0])
    opt = optimizers.SGD(0.25)
    opt.minimize(lambda: w * w, lambda: [w])
    assert w.numpy()[0] == pytest.approx(1.5)
    with gt.GradientTape() as tape:
        loss = w * w
    opt.minimize(loss, [w], tape=tape)
    assert w.numpy()[0] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="`tape` is required"):
        opt.minimize(w * w, [w])


def test_minimize_skips_unconnected_variables():
    a, b = gt.Variable([2.0]), gt.Variable([5.0], name="free")
    opt = optimizers.Adagrad(0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt.minimize(lambda: a * a, [a, b])
    assert any("free" in str(w.message) for w in caught)
    assert b.numpy()[0] == 5.0
    assert a.numpy()[0] < 2.0


def test_training_converges_on_a_quadratic():
    target = np.array([1.0, -2.0, 0.5])
    for opt in [optimizers.SGD(0.1, momentum=0.5, nesterov=True), optimizers.Adam(0.1),
                optimizers.RMSprop(0.05), optimizers.Adagrad(0.5)]:
        w = gt.Variable(np.zeros(3))
        for _ in range(300):
            opt.minimize(lambda w=w: gt.reduce_sum((w - target) ** 2), [w])
        np.testing.assert_allclose(w.numpy(), target, atol=2e-2, err_msg=repr(opt))
