"""gt.train.Checkpoint of optimizers, as TF's: `Checkpoint(optimizer=opt, model=model)`
(what nearly every TF training program writes) raised before. The optimizer's
iterations, learning rate and slots are saved, each slot under the path of the
variable it belongs to (`<variable>/.OPTIMIZER_SLOT/<optimizer>/<slot>`), so a resumed
run continues exactly: N steps, save, restore into a fresh model and optimizer, M more
steps give bitwise the weights of N + M steps uninterrupted."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.api import checkpoint_files

K = gt.keras
X = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(6, 4)
Y = np.stack([np.sin(3 * X[:, 0]), X[:, 1] * X[:, 2]], axis=1).astype(np.float32)
SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"

OPTIMIZERS = {
    "adam": lambda: K.optimizers.Adam(0.02),
    "sgd_momentum": lambda: K.optimizers.SGD(0.05, momentum=0.9),
    "rmsprop_centered": lambda: K.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
    "adagrad": lambda: K.optimizers.Adagrad(0.1),
    "adam_amsgrad": lambda: K.optimizers.Adam(0.02, amsgrad=True),
}


def _model(seed=3):
    gt.random.set_seed(seed)  # the same initial weights in every program
    return K.Sequential([K.layers.Dense(5, activation="tanh"), K.layers.Dense(2)])


def _tape_step(model, optimizer):
    with gt.GradientTape() as tape:
        loss = gt.reduce_mean((model(X) - Y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


def _function_step(model, optimizer):
    @gt.function
    def step(x, y):
        with gt.GradientTape() as tape:
            loss = gt.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return lambda: step(X, Y)


def _fit_steps(model, optimizer):
    model.compile(optimizer=optimizer, loss="mse")
    return lambda: model.fit(X, Y, batch_size=3, epochs=1, shuffle=False, verbose=0)


LOOPS = {"tape": lambda m, o: (lambda: _tape_step(m, o)), "function": _function_step,
         "fit": _fit_steps}


def _assert_bitwise_equal(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_a_resumed_run_continues_bitwise(tmp_path, optimizer, loop):
    n, m = 3, 4
    reference = _model()
    reference_optimizer = OPTIMIZERS[optimizer]()
    step = LOOPS[loop](reference, reference_optimizer)
    for _ in range(n + m):
        step()

    model, opt = _model(), OPTIMIZERS[optimizer]()
    step = LOOPS[loop](model, opt)
    for _ in range(n):
        step()
    manager_dir = str(tmp_path / "run")
    gt.train.Checkpoint(optimizer=opt, model=model).save(manager_dir + "/ckpt")

    fresh, fresh_opt = _model(seed=11), OPTIMIZERS[optimizer]()  # other initial weights
    status = gt.train.Checkpoint(optimizer=fresh_opt, model=fresh).restore(
        gt.train.latest_checkpoint(manager_dir))
    step = LOOPS[loop](fresh, fresh_opt)
    for _ in range(m):
        step()
    status.assert_consumed()
    assert int(fresh_opt.iterations.numpy()) == int(reference_optimizer.iterations.numpy())
    _assert_bitwise_equal(fresh.get_weights(), reference.get_weights())
    _assert_bitwise_equal([v.numpy() for v in fresh_opt.variables],
                          [v.numpy() for v in reference_optimizer.variables])


def _trained(optimizer=None, steps=2):
    model, optimizer = _model(), optimizer or K.optimizers.Adam(0.02)
    for _ in range(steps):
        _tape_step(model, optimizer)
    return model, optimizer


def test_slots_are_keyed_by_their_variables_path(tmp_path):
    model, optimizer = _trained()
    path = gt.train.Checkpoint(optimizer=optimizer, model=model).write(str(tmp_path / "c"))
    keys = [key for key, _ in gt.train.list_variables(path)]
    kernel = "model/_sequential_layers/0/kernel"
    assert f"{kernel}{SUFFIX}" in keys
    assert f"{kernel}/.OPTIMIZER_SLOT/optimizer/momentum{SUFFIX}" in keys
    assert f"{kernel}/.OPTIMIZER_SLOT/optimizer/velocity{SUFFIX}" in keys
    assert f"optimizer/iterations{SUFFIX}" in keys
    assert f"optimizer/learning_rate{SUFFIX}" in keys
    assert len(keys) == 1 + 4 * 3 + 2  # the graph entry; 4 weights with 2 slots; 2
    np.testing.assert_array_equal(
        gt.train.load_variable(path, f"{kernel}/.OPTIMIZER_SLOT/optimizer/momentum{SUFFIX}"),
        optimizer.get_slot(model.layers[0].kernel, "momentum").numpy())
    assert gt.train.load_variable(path, f"optimizer/iterations{SUFFIX}") == 2


def test_slots_map_to_their_variables_when_created_in_another_order(tmp_path):
    # The new program updates the variables in the reverse order, so its optimizer
    # creates the slots in the reverse order: each still gets its own variable's values.
    model, optimizer = _trained()
    path = gt.train.Checkpoint(optimizer=optimizer, model=model).write(str(tmp_path / "c"))
    fresh, fresh_opt = _model(), K.optimizers.Adam(0.02)
    status = gt.train.Checkpoint(optimizer=fresh_opt, model=fresh).restore(path)
    fresh(X)
    reversed_vars = fresh.trainable_variables[::-1]
    fresh_opt.build(reversed_vars)
    status.assert_consumed()
    for saved, restored in zip(model.trainable_variables, fresh.trainable_variables):
        for slot in ("momentum", "velocity"):
            np.testing.assert_array_equal(fresh_opt.get_slot(restored, slot).numpy(),
                                          optimizer.get_slot(saved, slot).numpy())


def test_slots_made_on_the_first_step_get_their_values_then(tmp_path):
    model, optimizer = _trained(K.optimizers.SGD(0.05, momentum=0.9))
    path = gt.train.Checkpoint(optimizer=optimizer, model=model).write(str(tmp_path / "c"))
    fresh, fresh_opt = _model(), K.optimizers.SGD(0.05, momentum=0.9)
    fresh(X)  # built: the weights are restored at once, the slots do not exist yet
    status = gt.train.Checkpoint(optimizer=fresh_opt, model=fresh).restore(path)
    status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match=r"Unresolved.*OPTIMIZER_SLOT/optimizer/momentum"):
        status.assert_consumed()  # TF's: slots are restored when the first step makes them
    kernel = fresh.layers[0].kernel
    fresh_opt.build([kernel])
    np.testing.assert_array_equal(fresh_opt.get_slot(kernel, "momentum").numpy(),
                                  optimizer.get_slot(model.layers[0].kernel,
                                                     "momentum").numpy())
    with pytest.raises(AssertionError, match="Unresolved"):
        status.assert_consumed()  # three weights' slots still wait
    fresh_opt.build(fresh.trainable_variables)
    status.assert_consumed()


def test_an_existing_slot_missing_from_the_file_fails_assert_existing_objects_matched(
        tmp_path):
    model = _model()
    model(X)
    path = gt.train.Checkpoint(optimizer=K.optimizers.Adam(0.02), model=model).write(
        str(tmp_path / "c"))  # saved before any step: no slots in the file
    fresh, fresh_opt = _model(), K.optimizers.Adam(0.02)
    fresh(X)
    fresh_opt.build(fresh.trainable_variables)
    status = gt.train.Checkpoint(optimizer=fresh_opt, model=fresh).restore(path)
    with pytest.raises(AssertionError, match=r"not bound.*OPTIMIZER_SLOT/optimizer/momentum"):
        status.assert_existing_objects_matched()


SLOT_KEY = f"v/.OPTIMIZER_SLOT/optimizer/momentum{SUFFIX}"


def _file_with_slot(tmp_path, slot_value):
    """A checkpoint of a float32 `v` whose momentum slot holds ``slot_value``."""
    prefix = str(tmp_path / "c")
    checkpoint_files.write_arrays(prefix, {
        f"v{SUFFIX}": np.full(3, 2.0, np.float32), SLOT_KEY: slot_value,
        f"optimizer/iterations{SUFFIX}": np.array(5, np.int64)})
    return prefix


@pytest.mark.parametrize("slot_value, error, message", [
    (np.ones(3, np.float64), gt.errors.InvalidArgumentError,
     r"expected dtype float32 does not equal original dtype float64"),
    (np.ones(4, np.float32), ValueError, r"incompatible tensor with shape \(4,\)"),
])
def test_an_existing_slot_of_another_dtype_or_shape_is_refused(tmp_path, slot_value,
                                                                error, message):
    path = _file_with_slot(tmp_path, slot_value)
    v = gt.Variable(np.zeros(3, np.float32))
    optimizer = K.optimizers.SGD(0.1, momentum=0.5)
    optimizer.build([v])
    with pytest.raises(error, match=message):
        gt.train.Checkpoint(v=v, optimizer=optimizer).restore(path)
    # All or nothing: neither the variable nor the step was assigned.
    np.testing.assert_array_equal(v.numpy(), np.zeros(3))
    assert int(optimizer.iterations.numpy()) == 0


@pytest.mark.parametrize("slot_value, error, message", [
    (np.ones(3, np.float64), gt.errors.InvalidArgumentError,
     r"momentum.*expected dtype float32 does not equal original dtype float64"),
    (np.ones(4, np.float32), ValueError, r"incompatible tensor with shape \(4,\)"),
])
def test_a_slot_made_later_of_another_dtype_or_shape_raises_when_made(tmp_path, slot_value,
                                                                      error, message):
    path = _file_with_slot(tmp_path, slot_value)
    v = gt.Variable(np.zeros(3, np.float32))
    optimizer = K.optimizers.SGD(0.1, momentum=0.5)
    gt.train.Checkpoint(v=v, optimizer=optimizer).restore(path)
    np.testing.assert_array_equal(v.numpy(), np.full(3, 2.0))
    with pytest.raises(error, match=message):
        optimizer.apply_gradients([(gt.ones(3), v)])


def test_a_slot_value_waits_for_its_variable_and_then_for_the_slot(tmp_path):
    class Lazy(gt.Module):
        def build(self):
            self.w = gt.Variable(np.ones(3), name="w")

    saved = Lazy()
    saved.build()
    optimizer = K.optimizers.Adam(0.1)
    for _ in range(2):
        optimizer.apply_gradients([(gt.constant([1.0, -2.0, 3.0]), saved.w)])
    path = gt.train.Checkpoint(model=saved, optimizer=optimizer).write(str(tmp_path / "c"))
    fresh, fresh_opt = Lazy(), K.optimizers.Adam(0.1)
    status = gt.train.Checkpoint(model=fresh, optimizer=fresh_opt).restore(path)
    assert len(status.deferred) == 3  # w, its momentum and velocity
    fresh.build()
    with pytest.raises(AssertionError, match="velocity"):
        status.assert_consumed()
    fresh_opt.apply_gradients([(gt.constant([1.0, -2.0, 3.0]), fresh.w)])
    optimizer.apply_gradients([(gt.constant([1.0, -2.0, 3.0]), saved.w)])
    status.assert_consumed()
    np.testing.assert_array_equal(fresh.w.numpy(), saved.w.numpy())
    for slot in ("momentum", "velocity"):
        np.testing.assert_array_equal(fresh_opt.get_slot(fresh.w, slot).numpy(),
                                      optimizer.get_slot(saved.w, slot).numpy())


def test_an_optimizer_held_by_a_compiled_model_is_saved_with_it(tmp_path):
    model = _model()
    model.compile(optimizer=K.optimizers.Adam(0.02), loss="mse")
    model.fit(X, Y, batch_size=3, epochs=1, shuffle=False, verbose=0)
    path = gt.train.Checkpoint(model=model).write(str(tmp_path / "c"))
    keys = [key for key, _ in gt.train.list_variables(path)]
    assert f"model/optimizer/iterations{SUFFIX}" in keys
    assert ("model/_sequential_layers/1/bias/.OPTIMIZER_SLOT/model/optimizer/velocity"
            + SUFFIX) in keys
    # Given as a root too, the optimizer is named by its root (TF names it by the
    # shortest path): the keys do not depend on whether the model was compiled.
    path = gt.train.Checkpoint(model=model, optimizer=model.optimizer).write(
        str(tmp_path / "d"))
    keys = [key for key, _ in gt.train.list_variables(path)]
    assert f"optimizer/iterations{SUFFIX}" in keys
    assert not any("model/optimizer" in key for key in keys)


def test_slots_of_variables_outside_the_checkpoint_are_not_lost_in_silence(tmp_path):
    model, optimizer = _trained()
    with pytest.warns(UserWarning, match=r"does not save 8 optimizer slots.*Pass the model"):
        path = gt.train.Checkpoint(optimizer=optimizer).write(str(tmp_path / "c"))
    keys = [key for key, _ in gt.train.list_variables(path)][1:]
    assert keys == [f"optimizer/iterations{SUFFIX}", f"optimizer/learning_rate{SUFFIX}"]


def test_a_schedule_has_no_learning_rate_variable(tmp_path):
    schedule = K.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    model, optimizer = _trained(K.optimizers.SGD(schedule, momentum=0.9), steps=3)
    path = gt.train.Checkpoint(optimizer=optimizer, model=model).write(str(tmp_path / "c"))
    keys = [key for key, _ in gt.train.list_variables(path)]
    assert f"optimizer/learning_rate{SUFFIX}" not in keys
    fresh_opt = K.optimizers.SGD(schedule, momentum=0.9)
    gt.train.Checkpoint(optimizer=fresh_opt).restore(path).expect_partial()
    assert int(fresh_opt.iterations.numpy()) == 3  # the schedule resumes at step 3
    np.testing.assert_allclose(float(fresh_opt.learning_rate.numpy()), 0.1 * 0.5 ** 1.5,
                               rtol=1e-6)


def test_the_learning_rate_variable_is_restored(tmp_path):
    optimizer = K.optimizers.Adam(0.02)
    optimizer.learning_rate = 0.125
    path = gt.train.Checkpoint(optimizer=optimizer).write(str(tmp_path / "c"))
    fresh = K.optimizers.Adam(0.5)
    gt.train.Checkpoint(optimizer=fresh).restore(path).assert_consumed()
    assert float(fresh.learning_rate.numpy()) == 0.125


def test_the_dcgan_tutorials_checkpoint_resumes_both_models_and_optimizers(tmp_path):
    def programs():
        gt.random.set_seed(5)
        generator = K.Sequential([K.layers.Dense(4, activation="relu"), K.layers.Dense(4)])
        discriminator = K.Sequential([K.layers.Dense(3, activation="tanh"),
                                      K.layers.Dense(1)])
        return generator, discriminator, K.optimizers.Adam(1e-2), K.optimizers.Adam(2e-2)

    def train_step(generator, discriminator, g_opt, d_opt):
        with gt.GradientTape() as g_tape, gt.GradientTape() as d_tape:
            fake = generator(X)
            real_out, fake_out = discriminator(X), discriminator(fake)
            g_loss = gt.reduce_mean((fake_out - 1.0) ** 2)
            d_loss = gt.reduce_mean((real_out - 1.0) ** 2) + gt.reduce_mean(fake_out ** 2)
        g_opt.apply_gradients(zip(g_tape.gradient(g_loss, generator.trainable_variables),
                                  generator.trainable_variables))
        d_opt.apply_gradients(zip(d_tape.gradient(d_loss, discriminator.trainable_variables),
                                  discriminator.trainable_variables))

    def checkpoint(generator, discriminator, g_opt, d_opt):
        return gt.train.Checkpoint(generator_optimizer=g_opt, discriminator_optimizer=d_opt,
                                   generator=generator, discriminator=discriminator)

    reference = programs()
    for _ in range(5):
        train_step(*reference)
    first = programs()
    for _ in range(2):
        train_step(*first)
    checkpoint_dir = str(tmp_path / "training_checkpoints")
    checkpoint(*first).save(file_prefix=checkpoint_dir + "/ckpt")
    resumed = programs()
    status = checkpoint(*resumed).restore(gt.train.latest_checkpoint(checkpoint_dir))
    for _ in range(3):
        train_step(*resumed)
    status.assert_consumed()
    for got, want in zip(resumed, reference):
        _assert_bitwise_equal([v.numpy() for v in got.variables],
                              [v.numpy() for v in want.variables])


def test_a_model_built_inside_a_function_after_a_restore_keeps_the_restored_weights(
        tmp_path):
    # Sibling of the slots made in a trace: the deferred value was assigned inside the
    # trace of the first call, which rolled the variable back to its initial value.
    saved = _model()
    saved(X)
    path = gt.train.Checkpoint(model=saved).write(str(tmp_path / "c"))
    model = _model(seed=11)
    status = gt.train.Checkpoint(model=model).restore(path)
    predict = gt.function(lambda x: model(x))
    for _ in range(2):
        np.testing.assert_array_equal(predict(X).numpy(), saved(X).numpy())
    status.assert_consumed()
    _assert_bitwise_equal(model.get_weights(), saved.get_weights())


# --- restores still waiting: a second restore, a write -----------------------------------

def _saved_run(tmp_path, name="c", steps=2):
    model, optimizer = _trained(K.optimizers.SGD(0.05, momentum=0.9), steps=steps)
    checkpoint = gt.train.Checkpoint(optimizer=optimizer, model=model)
    return model, optimizer, checkpoint.write(str(tmp_path / name))


def _fresh():
    return _model(seed=11), K.optimizers.SGD(0.05, momentum=0.9)


def _assert_same_state(model, optimizer, saved_model, saved_optimizer):
    _assert_bitwise_equal(model.get_weights(), saved_model.get_weights())
    _assert_bitwise_equal([v.numpy() for v in optimizer.variables],
                          [v.numpy() for v in saved_optimizer.variables])


def test_a_value_waiting_for_a_second_restore_counts_for_both_statuses(tmp_path):
    _, _, first_path = _saved_run(tmp_path, "first", steps=1)
    saved_model, saved_optimizer, second_path = _saved_run(tmp_path, "second", steps=3)
    model, optimizer = _fresh()
    checkpoint = gt.train.Checkpoint(optimizer=optimizer, model=model)
    first = checkpoint.restore(first_path)
    second = gt.train.Checkpoint(optimizer=optimizer, model=model).restore(second_path)
    model(X)
    optimizer.build(model.trainable_variables)
    second.assert_consumed()
    first.assert_consumed()  # TF counts a value a later restore satisfied
    # The latest restore's values win, as in TF.
    _assert_same_state(model, optimizer, saved_model, saved_optimizer)


def test_a_value_waiting_for_the_same_restore_twice_counts_for_both(tmp_path):
    class Lazy(gt.Module):
        def build(self):
            self.w = gt.Variable(np.zeros(2, np.float32), name="w")

    path = gt.train.Checkpoint(model={"w": gt.Variable([1.5, 2.5])}).write(
        str(tmp_path / "c"))
    model = Lazy()
    checkpoint = gt.train.Checkpoint(model=model)
    statuses = [checkpoint.restore(path), checkpoint.restore(path)]
    model.build()
    for status in statuses:
        status.assert_consumed()
    np.testing.assert_array_equal(model.w.numpy(), [1.5, 2.5])


@pytest.mark.parametrize("built", [False, True], ids=["unbuilt", "built"])
def test_a_write_keeps_the_values_still_waiting(tmp_path, built):
    # Restore, then save before the first step (an unbuilt model's weights and every
    # slot still wait): the new file holds them, also when it replaces the restored one.
    saved_model, saved_optimizer, path = _saved_run(tmp_path)
    model, optimizer = _fresh()
    if built:
        model(X)
    checkpoint = gt.train.Checkpoint(optimizer=optimizer, model=model)
    checkpoint.restore(path)
    assert checkpoint.write(path) == path  # over the checkpoint it restored
    written = {key for key, _ in gt.train.list_variables(path)}
    expected = gt.train.Checkpoint(optimizer=saved_optimizer, model=saved_model)._tracked()
    assert written == {*expected, "_CHECKPOINTABLE_OBJECT_GRAPH",
                       "save_counter/.ATTRIBUTES/VARIABLE_VALUE"}
    again, again_opt = _fresh()
    gt.train.Checkpoint(optimizer=again_opt, model=again).restore(path)
    again(X)
    again_opt.build(again.trainable_variables)
    _assert_same_state(again, again_opt, saved_model, saved_optimizer)


def test_a_write_over_the_restored_file_keeps_an_unbuilt_models_weights(tmp_path):
    # No optimizer: the model's weights alone were left out of the new file, which
    # replaced the only copy of them.
    saved = _model()
    saved(X)
    path = gt.train.Checkpoint(model=saved).write(str(tmp_path / "c"))
    model = _model(seed=11)
    checkpoint = gt.train.Checkpoint(model=model)
    checkpoint.restore(path)
    checkpoint.write(path)
    again = _model(seed=12)
    again(X)
    gt.train.Checkpoint(model=again).restore(path).assert_consumed()
    _assert_bitwise_equal(again.get_weights(), saved.get_weights())


def test_a_value_a_second_restore_satisfied_counts_for_the_first_status(tmp_path):
    saved = _model()
    saved(X)
    first_path = gt.train.Checkpoint(model=saved).write(str(tmp_path / "first"))
    saved.set_weights([w * 2 for w in saved.get_weights()])
    second_path = gt.train.Checkpoint(model=saved).write(str(tmp_path / "second"))
    model = _model(seed=11)
    first = gt.train.Checkpoint(model=model).restore(first_path)
    second = gt.train.Checkpoint(model=model).restore(second_path)
    model(X)
    second.assert_consumed()
    first.assert_consumed()
    _assert_bitwise_equal(model.get_weights(), saved.get_weights())  # the latest wins
