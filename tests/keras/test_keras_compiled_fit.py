"""`fit`, `evaluate` and `predict` run their step compiled with `@gt.function`, as Keras 3
runs it in a `tf.function` (unless `compile(run_eagerly=True)`). Compiled and eager give
the same weights, logs and outputs; nothing the step read goes stale when the
variables, `trainable`, the learning rate, the batch shape or the model's Python state
change between calls; a step that cannot be compiled runs eagerly with one warning."""

import warnings

import numpy as np
import pytest

import gradtape as gt

K = gt.keras
RNG = np.random.default_rng(0)
X = RNG.standard_normal((70, 6)).astype(np.float32)  # 70 = 2 x 32 + a last batch of 6
LABELS = RNG.integers(0, 3, 70)
TARGETS = RNG.standard_normal((70, 1)).astype(np.float32)


def _classifier(run_eagerly, optimizer=None, metrics=("accuracy",), batch_norm=True):
    gt.random.set_seed(7)
    layers = [K.layers.Dense(16, activation="relu")]
    if batch_norm:
        layers.append(K.layers.BatchNormalization())
    layers += [K.layers.Dropout(0.25), K.layers.Dense(3)]
    model = K.Sequential(layers)
    model.compile(optimizer=optimizer() if optimizer else K.optimizers.Adam(0.01),
                  loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=list(metrics), run_eagerly=run_eagerly)
    return model


def _weights(model):
    return [w.numpy() for w in model.weights]


def _assert_same_weights(a, b, atol=1e-6):
    for wa, wb in zip(_weights(a), _weights(b), strict=True):
        np.testing.assert_allclose(wa, wb, rtol=0, atol=atol)


def _traces(model, attribute="train_function"):
    runner = getattr(model, attribute)
    assert runner.compiled is not None, "the step ran eagerly"
    return runner.compiled.experimental_get_tracing_count()


def _fit_both(fit, **kwargs):
    """``fit(model)`` eagerly, then compiled, each right after seeding (the weights are
    drawn when the model builds, on its first step)."""
    eager = _classifier(True, **kwargs)
    eager_result = fit(eager)
    compiled = _classifier(False, **kwargs)
    return eager, compiled, eager_result, fit(compiled)


# --- the same numbers compiled and eager -------------------------------------------------

def test_fit_gives_the_same_weights_logs_and_statistics_compiled_and_eager():
    eager, compiled, h_eager, h_compiled = _fit_both(
        lambda m: m.fit(X, LABELS, batch_size=32, epochs=3, shuffle=False, verbose=0))
    # Bitwise here: the compiled step runs the same NumPy calls in the same order.
    _assert_same_weights(eager, compiled, atol=0)
    assert h_compiled.history == h_eager.history
    # The full and the last (6-sample) batch each traced once.
    assert _traces(compiled) == 2
    # BatchNormalization's moving statistics moved at every step, as eagerly.
    moving_mean = compiled.layers[1].moving_mean.numpy()
    assert np.abs(moving_mean).max() > 0


def test_fit_over_a_dataset_matches_fit_over_arrays_compiled():
    _, arrays, _, h_arrays = _fit_both(
        lambda m: m.fit(X, LABELS, batch_size=32, epochs=2, shuffle=False, verbose=0))
    over_dataset = _classifier(False)
    dataset = gt.data.Dataset.from_tensor_slices((X, LABELS)).batch(32)
    h_dataset = over_dataset.fit(dataset, epochs=2, verbose=0)
    _assert_same_weights(arrays, over_dataset, atol=0)
    assert h_dataset.history == h_arrays.history


def test_shuffled_fit_matches_eager_under_one_seed():
    eager, compiled, h_eager, h_compiled = _fit_both(
        lambda m: m.fit(X, LABELS, batch_size=16, epochs=2, verbose=0))
    _assert_same_weights(eager, compiled)
    np.testing.assert_allclose(h_compiled.history["loss"], h_eager.history["loss"],
                               rtol=1e-6)
    assert _traces(compiled) == 2  # batches of 16 and the last 6


def test_metrics_are_running_means_over_the_epoch():
    model = _classifier(False, optimizer=lambda: K.optimizers.SGD(0.0), batch_norm=False)
    model.layers[1].rate = 0.0  # no dropout: the epoch's numbers are those of predict
    history = model.fit(X, LABELS, batch_size=32, epochs=1, shuffle=False, verbose=0)
    logits = model.predict(X, verbose=0)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -log_p[np.arange(70), LABELS].mean()
    accuracy = (logits.argmax(axis=1) == LABELS).mean()
    assert history.history["loss"][0] == pytest.approx(loss, rel=1e-5)
    assert history.history["accuracy"][0] == pytest.approx(accuracy, abs=1e-7)
    logs = model.evaluate(X, LABELS, batch_size=32, verbose=0, return_dict=True)
    assert logs["loss"] == pytest.approx(loss, rel=1e-5)
    assert _traces(model, "test_function") >= 1


def test_steps_per_execution_runs_every_step():
    eager = _classifier(True)
    eager.fit(X, LABELS, batch_size=8, epochs=2, shuffle=False, verbose=0)
    grouped = _classifier(False)
    grouped.compile(optimizer=K.optimizers.Adam(0.01),
                    loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
                    metrics=["accuracy"], steps_per_execution=4)
    grouped.fit(X, LABELS, batch_size=8, epochs=2, shuffle=False, verbose=0)
    assert int(grouped.optimizer.iterations.numpy()) == 2 * 9
    _assert_same_weights(eager, grouped, atol=0)
    batches = iter([(X[:8], LABELS[:8])] * 5)
    assert isinstance(grouped.train_function(batches), dict)  # the 4th step's logs
    assert len(list(batches)) == 1  # one call ran steps_per_execution = 4 steps


def test_predict_and_evaluate_are_compiled_and_match_eager():
    eager, compiled, _, _ = _fit_both(
        lambda m: m.fit(X, LABELS, batch_size=32, epochs=1, shuffle=False, verbose=0))
    np.testing.assert_array_equal(compiled.predict(X, batch_size=32, verbose=0),
                                  eager.predict(X, batch_size=32, verbose=0))
    assert _traces(compiled, "predict_function") == 2  # 32 and the last 6
    assert compiled.evaluate(X, LABELS, verbose=0) == eager.evaluate(X, LABELS, verbose=0)


# --- nothing stale -----------------------------------------------------------------------

def test_trainable_toggled_between_fits():
    def fit(model):
        model.layers[0].trainable = False
        model.fit(X, LABELS, batch_size=32, epochs=1, shuffle=False, verbose=0)
        frozen = model.layers[0].kernel.numpy().copy()
        model.layers[0].trainable = True
        model.fit(X, LABELS, batch_size=32, epochs=1, shuffle=False, verbose=0)
        return frozen

    eager, compiled, frozen_eager, frozen_compiled = _fit_both(fit)
    np.testing.assert_array_equal(frozen_compiled, frozen_eager)
    assert not np.array_equal(compiled.layers[0].kernel.numpy(), frozen_compiled)
    _assert_same_weights(eager, compiled, atol=0)
    assert _traces(compiled) == 4  # two batch shapes for each set of trainable weights


def test_learning_rate_changed_between_epochs_and_a_schedule():
    def fit(model):
        for lr in (0.1, 0.01, 0.0):
            model.optimizer.learning_rate = lr
            before = _weights(model)
            model.fit(X, LABELS, batch_size=32, epochs=1, shuffle=False, verbose=0)
        # The last epoch ran at lr 0: the trainable weights did not move.
        np.testing.assert_array_equal(model.layers[-1].kernel.numpy(), before[-2])

    eager, compiled, _, _ = _fit_both(fit, optimizer=lambda: K.optimizers.SGD(0.1))
    _assert_same_weights(eager, compiled, atol=0)
    assert _traces(compiled) == 2  # the learning rate is a variable the trace reads

    schedule = K.optimizers.schedules.ExponentialDecay(0.5, decay_steps=1, decay_rate=0.5)
    eager, compiled, _, _ = _fit_both(
        lambda m: m.fit(X, LABELS, batch_size=16, epochs=2, shuffle=False, verbose=0),
        optimizer=lambda: K.optimizers.SGD(schedule))
    _assert_same_weights(eager, compiled, atol=0)


class _Scaled(K.Sequential):
    """A custom train_step reading a Python attribute (changed between fits)."""

    scale = 1.0

    def train_step(self, data):
        x, y = data
        with gt.GradientTape() as tape:
            loss = self.scale * self.compute_loss(y=y, y_pred=self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"scaled": loss}


def _scaled(run_eagerly):
    gt.random.set_seed(3)
    model = _Scaled([K.layers.Dense(1)])
    model.compile(optimizer=K.optimizers.SGD(0.05), loss="mse", run_eagerly=run_eagerly)
    return model


def test_a_python_attribute_the_custom_step_reads_changed_between_fits():
    histories = []
    for run_eagerly in (True, False):
        model = _scaled(run_eagerly)
        logs = [model.fit(X, TARGETS, batch_size=32, epochs=1, shuffle=False,
                          verbose=0).history["scaled"][0]]
        model.scale = 0.0  # an instance attribute now: the loss is zero
        logs.append(model.fit(X, TARGETS, batch_size=32, epochs=1, shuffle=False,
                              verbose=0).history["scaled"][0])
        histories.append((logs, _weights(model)))
    assert _traces(model) == 4  # per value of `scale`: batches of 32 and the last 6
    (eager_logs, eager_w), (compiled_logs, compiled_w) = histories
    assert compiled_logs == eager_logs and compiled_logs[1] == 0.0
    for a, b in zip(eager_w, compiled_w):
        np.testing.assert_array_equal(a, b)


def test_train_function_gets_one_iterator_per_epoch():
    # Keras 3 hands `train_function` the epoch's iterator at every step. gradtape handed
    # it a new one per step, so the compiled step re-read the model's state each step.
    class Watched(K.Sequential):
        def make_train_function(self, force=False):
            runner = super().make_train_function(force)

            def train_function(iterator):
                seen.append(iterator)
                return runner(iterator)
            return train_function

    seen = []
    model = Watched([K.layers.Dense(1)])
    model.compile(optimizer=K.optimizers.SGD(0.05), loss="mse")
    dataset = gt.data.Dataset.from_tensor_slices((X, TARGETS)).batch(16)  # 5 batches
    model.fit(dataset, epochs=2, verbose=0)
    assert len(seen) == 10 and seen[0] is not seen[5]
    assert all(it is seen[0] for it in seen[:5]) and all(it is seen[5] for it in seen[5:])


def test_the_state_is_read_per_epoch_unless_a_callback_has_batch_hooks(monkeypatch):
    from gradtape.keras import step_functions

    reads = []
    read = step_functions.state_key
    monkeypatch.setattr(step_functions, "state_key", lambda m: reads.append(1) or read(m))

    def reads_in_fit(callbacks):
        model = _scaled(False)
        model.fit(X, TARGETS, batch_size=4, epochs=2, shuffle=False, verbose=1,
                  callbacks=callbacks)  # 18 steps an epoch
        reads.clear()
        model.fit(X, TARGETS, batch_size=4, epochs=2, shuffle=False, verbose=1,
                  callbacks=callbacks)  # warm: no trace, no eager step
        return len(reads)

    early = K.callbacks.EarlyStopping(monitor="scaled", mode="min")
    assert reads_in_fit([early]) == 2  # once an epoch
    every_step = K.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: None)
    assert reads_in_fit([every_step]) == 2 * 18  # before every step

    model = _scaled(False)
    model.predict(X, batch_size=4, verbose=0)
    reads.clear()
    model.predict(X, batch_size=4, verbose=1)  # 18 batches
    assert len(reads) == 1


def test_predict_function_gets_one_iterator_per_predict_and_one_batch_a_call():
    class Watched(K.Sequential):
        def make_predict_function(self, force=False):
            runner = super().make_predict_function(force)

            def predict_function(iterator):
                seen.append(iterator)
                return runner(iterator)
            return predict_function

    seen = []
    model = Watched([K.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse", steps_per_execution=3)
    out = model.predict(X, batch_size=16, verbose=0)  # 5 batches, each its own call
    np.testing.assert_allclose(out, X @ model.layers[0].kernel.numpy()
                               + model.layers[0].bias.numpy(), rtol=1e-6, atol=1e-6)
    assert len(seen) == 5 and all(it is seen[0] for it in seen)


def test_a_callback_changing_the_step_s_python_state_mid_epoch_is_seen_next_step():
    # A batch hook runs between two compiled steps: the next one reads the new state.
    def freeze_after(step):
        def hook(batch, logs):
            if batch == step:
                model.scale = 0.0  # the loss, and so every later update, is zero
        return K.callbacks.LambdaCallback(on_train_batch_end=hook)

    results = []
    for run_eagerly in (True, False):
        model = _scaled(run_eagerly)
        model.fit(X, TARGETS, batch_size=8, epochs=1, shuffle=False, verbose=0)
        model.scale = 1.0
        before = _weights(model)
        history = model.fit(X, TARGETS, batch_size=8, epochs=1, shuffle=False,
                            verbose=0, callbacks=[freeze_after(1)])
        results.append((history.history["scaled"][0], _weights(model)))
        assert not np.array_equal(before[0], results[-1][1][0])
    (eager_loss, eager_w), (compiled_loss, compiled_w) = results
    assert compiled_loss == eager_loss
    for a, b in zip(eager_w, compiled_w, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_layer_frozen_by_a_callback_mid_epoch_stops_training_at_the_next_step():
    def fit(model):
        def freeze(batch, logs):
            if batch == 0:
                model.layers[0].trainable = False
                snapshots.extend(w.numpy().copy() for w in (model.layers[0].kernel,
                                                             model.layers[-1].kernel))
        snapshots = []
        model.fit(X, LABELS, batch_size=16, epochs=1, shuffle=False, verbose=0,
                  callbacks=[K.callbacks.LambdaCallback(on_train_batch_end=freeze)])
        return snapshots

    eager, compiled, _, (first, last) = _fit_both(fit, batch_norm=False)
    np.testing.assert_array_equal(compiled.layers[0].kernel.numpy(), first)  # 4 steps
    assert not np.array_equal(compiled.layers[-1].kernel.numpy(), last)  # still trains
    _assert_same_weights(eager, compiled, atol=0)


def test_a_step_that_changes_python_state_runs_eagerly_with_one_warning():
    class Counting(_Scaled):
        def train_step(self, data):
            self.seen = getattr(self, "seen", 0) + 1
            return super().train_step(data)

    gt.random.set_seed(3)
    model = Counting([K.layers.Dense(1)])
    model.compile(optimizer=K.optimizers.SGD(0.05), loss="mse")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, TARGETS, batch_size=8, epochs=2, shuffle=False, verbose=0)
    messages = [str(w.message) for w in caught if "runs eagerly" in str(w.message)]
    assert len(messages) == 1 and "`self.seen`" in messages[0]
    assert model.seen == 2 * 9  # every step ran the Python line
    reference = _scaled(True)
    reference.fit(X, TARGETS, batch_size=8, epochs=2, shuffle=False, verbose=0)
    for a, b in zip(_weights(reference), _weights(model)):
        np.testing.assert_array_equal(a, b)


def test_a_step_that_cannot_be_traced_runs_eagerly_with_one_warning():
    @gt.custom_gradient
    def doubled_gradient(v):
        return v, lambda dy: 2.0 * dy

    class Custom(_Scaled):
        def call(self, x):
            return doubled_gradient(super().call(x))

    results = []
    for run_eagerly in (True, False):
        gt.random.set_seed(3)
        model = Custom([K.layers.Dense(1)])
        model.compile(optimizer=K.optimizers.SGD(0.05), loss="mse",
                      run_eagerly=run_eagerly)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(X, TARGETS, batch_size=32, epochs=2, shuffle=False, verbose=0)
        results.append((_weights(model), [str(w.message) for w in caught
                                          if "runs eagerly" in str(w.message)]))
    (eager_w, eager_warned), (compiled_w, compiled_warned) = results
    assert eager_warned == [] and len(compiled_warned) == 1
    assert "custom_gradient" in compiled_warned[0]
    for a, b in zip(eager_w, compiled_w):
        np.testing.assert_array_equal(a, b)


def test_dropout_draws_a_new_mask_each_compiled_step():
    class Masks(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = K.layers.Dense(1)
            self.drop = K.layers.Dropout(0.5)

        def call(self, x, training=False):
            return self.dense(self.drop(x, training=training))

        def train_step(self, data):
            x, _ = data
            kept = gt.reduce_sum(gt.cast(self.drop(gt.ones_like(x), training=True) > 0,
                                         "float32"))
            return {"kept": kept}

    model = Masks()
    model(X)  # built: a model with trainable weights compiles its step
    model.compile(optimizer="sgd", loss="mse")
    kept = [model.train_on_batch(X, TARGETS, return_dict=True)["kept"] for _ in range(6)]
    assert _traces(model) == 1
    assert len(set(kept)) > 1
    assert all(0 < k < X.size for k in kept)


def test_a_wgan_gp_style_step_returning_tensors():
    class GP(K.Model):
        """A critic with a gradient penalty (a tape inside the step's tape) and a
        generator, two optimizers; the step returns its tensors."""

        def __init__(self):
            super().__init__()
            self.critic = K.Sequential([K.layers.Dense(8, activation="tanh"),
                                        K.layers.Dense(1)])
            self.generator = K.Sequential([K.layers.Dense(6)])

        def compile(self, run_eagerly):
            super().compile(run_eagerly=run_eagerly)
            self.d_optimizer = K.optimizers.Adam(1e-3)
            self.g_optimizer = K.optimizers.Adam(1e-3)

        def train_step(self, real):
            noise = gt.random.normal((gt.shape(real)[0], 4))
            with gt.GradientTape() as tape:
                fake = self.generator(noise)
                alpha = gt.random.uniform((gt.shape(real)[0], 1))
                mixed = alpha * real + (1.0 - alpha) * fake
                with gt.GradientTape() as gp_tape:
                    gp_tape.watch(mixed)
                    score = self.critic(mixed)
                norms = gt.sqrt(gt.reduce_sum(gp_tape.gradient(score, mixed) ** 2, axis=1))
                d_loss = (gt.reduce_mean(self.critic(fake)) - gt.reduce_mean(
                    self.critic(real)) + 10.0 * gt.reduce_mean((norms - 1.0) ** 2))
            grads = tape.gradient(d_loss, self.critic.trainable_variables)
            self.d_optimizer.apply_gradients(zip(grads, self.critic.trainable_variables))
            with gt.GradientTape() as tape:
                g_loss = -gt.reduce_mean(self.critic(self.generator(noise)))
            grads = tape.gradient(g_loss, self.generator.trainable_variables)
            self.g_optimizer.apply_gradients(zip(grads,
                                                 self.generator.trainable_variables))
            return {"d_loss": d_loss, "g_loss": g_loss}

    runs = []
    for run_eagerly in (True, False):
        gt.random.set_seed(11)
        model = GP()
        model.compile(run_eagerly=run_eagerly)
        dataset = gt.data.Dataset.from_tensor_slices(X).batch(32)
        history = model.fit(dataset, epochs=3, verbose=0)
        runs.append((model, history.history))
    (eager, h_eager), (compiled, h_compiled) = runs
    assert _traces(compiled) == 2
    for key in ("d_loss", "g_loss"):
        np.testing.assert_allclose(h_compiled[key], h_eager[key], rtol=1e-6)
        assert len(set(h_compiled[key])) == 3  # a new value each epoch, never stale
    _assert_same_weights(eager, compiled)


# --- compile's options and the step functions --------------------------------------------

def test_compile_options_and_the_step_function_attributes():
    model = _classifier(False)
    # Keras 3 on TF without a GPU resolves "auto" to no XLA; the step is compiled anyway.
    assert model.run_eagerly is False and model.jit_compile is False
    assert model.train_function is None and model.steps_per_execution == 1
    train_function = model.make_train_function()
    assert model.train_function is train_function
    assert model.make_train_function() is train_function
    assert model.make_train_function(force=True) is not train_function
    model.fit(X, LABELS, batch_size=32, epochs=1, verbose=0)
    assert model.make_test_function() is model.test_function
    model.compile(optimizer="sgd", loss="mse", run_eagerly=True)
    assert model.run_eagerly is True and model.jit_compile is False
    assert model.train_function is None  # compile drops the old step functions
    with pytest.warns(UserWarning, match="Disabling `jit_compile`"):
        model.compile(optimizer="sgd", loss="mse", run_eagerly=True, jit_compile=True)
    with pytest.raises(ValueError, match="steps_per_execution"):
        model.compile(optimizer="sgd", loss="mse", steps_per_execution=0)
    model.run_eagerly = False
    assert model.run_eagerly is False and model.train_function is None


def test_the_step_functions_call_the_overrides():
    class Custom(K.Sequential):
        def predict_step(self, data):
            return super().predict_step(data) * 0.0 + 1.0

    model = Custom([K.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    np.testing.assert_array_equal(model.predict(X, verbose=0), np.ones((70, 2)))
    assert _traces(model, "predict_function") == 2
    np.testing.assert_array_equal(model.predict_on_batch(X[:5]), np.ones((5, 2)))


def test_a_frozen_model_warns_at_the_fit_line():
    model = _classifier(False)
    model.build((None, 6))
    model.trainable = False
    before = _weights(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        model.fit(X, LABELS, batch_size=8, epochs=2, shuffle=False, verbose=0)
        line = __import__("sys")._getframe().f_lineno - 1
    frozen = [w for w in caught if "trainable weights" in str(w.message)]
    assert frozen and {(w.filename, w.lineno) for w in frozen} == {(__file__, line)}
    for a, b in zip(before[:2], _weights(model)[:2]):  # the frozen Dense kernel and bias
        np.testing.assert_array_equal(a, b)


def test_weights_set_or_restored_between_fits_are_what_the_next_fit_reads(tmp_path):
    def fit(model):
        model.fit(X, LABELS, batch_size=32, epochs=1, shuffle=False, verbose=0)
        checkpoint = gt.train.Checkpoint(model=model, optimizer=model.optimizer)
        path = checkpoint.save(str(tmp_path / f"eager_{model.run_eagerly}"))
        saved = model.get_weights()
        model.fit(X, LABELS, batch_size=32, epochs=1, shuffle=False, verbose=0)
        checkpoint.restore(path)
        for a, b in zip(saved, model.get_weights()):
            np.testing.assert_array_equal(a, b)
        model.fit(X, LABELS, batch_size=32, epochs=1, shuffle=False, verbose=0)
        model.set_weights([v * 0.5 for v in model.get_weights()])
        model.fit(X, LABELS, batch_size=32, epochs=1, shuffle=False, verbose=0)

    eager, compiled, _, _ = _fit_both(fit)
    _assert_same_weights(eager, compiled, atol=0)
    assert _traces(compiled) == 2  # assigned and restored values are inputs, not retraces
