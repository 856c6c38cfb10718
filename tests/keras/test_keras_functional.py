"""The functional Keras API as Keras 3 has it: keras.Input, KerasTensor arithmetic and
slicing, several inputs and outputs (lists, dicts), shared layers, nested models, a
Model subclass built functionally, compile/fit with per-output losses, summary()."""

import numpy as np
import pytest

import gradtape as tf
from gradient_checks import assert_vjp_matches_differences
from gradtape import keras
from gradtape.keras import ops

RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def _fresh_names():
    keras.backend.clear_session()


def test_input_signature_and_keras_tensor():
    x = keras.Input(shape=(3,), batch_size=8, dtype="float64", name="features")
    assert x.shape == (8, 3) and x.dtype == np.float64 and x.name == "features"
    assert keras.Input(batch_shape=(None, 2, 5)).shape == (None, 2, 5)
    assert keras.Input((4,)).ndim == 2
    wrapped = keras.Input(tensor=x)
    assert wrapped is x
    with pytest.raises(ValueError, match="KerasTensor"):
        keras.Input(tensor=np.ones((2, 3)))
    assert keras.layers.Input is keras.Input
    layer = keras.layers.InputLayer(shape=(2,), name="given")
    assert layer.output.shape == (None, 2) and layer.name == "given"


def test_operators_and_slicing_on_keras_tensors_compute_what_numpy_does():
    a, b = keras.Input(shape=(4,), dtype="float64"), keras.Input(shape=(4,), dtype="float64")
    out = ((a + b) * 2.0 - b / 4.0) ** 2 + abs(-a)[:, 1:2] + (1.0 - a) * (a > b)
    model = keras.Model([a, b], out)
    xa, xb = RNG.standard_normal((5, 4)), RNG.standard_normal((5, 4))
    expected = ((xa + xb) * 2 - xb / 4) ** 2 + np.abs(-xa)[:, 1:2] + (1 - xa) * (xa > xb)
    np.testing.assert_allclose(model([xa, xb]).numpy(), expected, rtol=1e-12)
    assert out.shape == (None, 4)
    assert a[:, 0].shape == (None,) and (a @ np.ones((4, 2))).shape == (None, 2)


def test_a_tf_function_on_a_keras_tensor_raises_as_keras_3_does():
    x = keras.Input(shape=(3,))
    for tf_call in (lambda: tf.reduce_sum(x), lambda: tf.concat([x, x], axis=1),
                    lambda: np.asarray(x)):
        with pytest.raises(ValueError, match="keras.layers.Lambda"):
            tf_call()
    # What works instead: keras.ops, or the TF function inside a Lambda layer.
    summed = ops.sum(x, axis=1)
    lam = keras.layers.Lambda(lambda t: tf.reduce_sum(t, axis=1))(x)
    model = keras.Model(x, [summed, lam])
    data = RNG.standard_normal((2, 3)).astype(np.float32)
    got = model(data)
    np.testing.assert_allclose(got[0].numpy(), data.sum(1), rtol=1e-6)
    np.testing.assert_allclose(got[1].numpy(), data.sum(1), rtol=1e-6)


def test_unknown_sizes_stay_unknown_through_layers():
    x = keras.Input(shape=(None, 6))
    h = keras.layers.Dense(3)(x)
    assert h.shape == (None, None, 3)
    assert keras.layers.Flatten()(keras.Input(shape=(2, 3))).shape == (None, 6)


def test_weights_exist_once_the_graph_is_built_with_keras_initializers_and_names():
    x = keras.Input(shape=(5,))
    dense = keras.layers.Dense(7)
    dense(x)
    assert [v.name for v in dense.weights] == ["kernel", "bias"]
    assert dense.kernel.path == "dense/kernel"
    limit = np.sqrt(6.0 / (5 + 7))  # glorot_uniform
    kernel = dense.kernel.numpy()
    assert kernel.shape == (5, 7) and np.all(np.abs(kernel) <= limit)
    assert kernel.std() > limit / 4  # drawn, not zeros
    np.testing.assert_array_equal(dense.bias.numpy(), np.zeros(7, np.float32))


def test_several_inputs_and_outputs_as_lists_and_dicts():
    a = keras.Input(shape=(3,), name="a")
    b = keras.Input(shape=(2,), name="b")
    d1, d2 = keras.layers.Dense(2, name="from_a"), keras.layers.Dense(2, name="from_b")
    total = d1(a) + d2(b)
    model = keras.Model(inputs={"a": a, "b": b}, outputs={"sum": total, "left": d1(a)},
                        name="two_ways")
    xa = RNG.standard_normal((4, 3)).astype(np.float32)
    xb = RNG.standard_normal((4, 2)).astype(np.float32)
    got = model({"b": xb, "a": xa})  # matched by key, not by order
    left = xa @ d1.kernel.numpy() + d1.bias.numpy()
    np.testing.assert_allclose(got["left"].numpy(), left, rtol=1e-6)
    np.testing.assert_allclose(got["sum"].numpy(),
                               left + xb @ d2.kernel.numpy() + d2.bias.numpy(), rtol=1e-6)
    assert model.name == "two_ways"
    assert model.input_shape == {"a": (None, 3), "b": (None, 2)}
    assert model.output_shape == {"sum": (None, 2), "left": (None, 2)}
    assert [t.name for t in model.inputs] == ["a", "b"]
    assert model.output_names == ["sum", "left"]
    listed = keras.Model([a, b], [total])
    assert listed.input_shape == [(None, 3), (None, 2)] and listed.output_shape == (None, 2)
    with pytest.raises(ValueError, match="missing"):
        model({"a": xa})


def test_a_shared_layer_shares_its_weights_and_gradients_add_up():
    a = keras.Input(shape=(3,), dtype="float64")
    b = keras.Input(shape=(3,), dtype="float64")
    shared = keras.layers.Dense(2, activation="tanh", dtype="float64")
    out = ops.sum(shared(a) * shared(b), axis=-1)
    model = keras.Model([a, b], out)
    assert model.weights == [shared.kernel, shared.bias]
    assert [layer.name for layer in model.layers] == ["input_layer", "input_layer_1", "dense"]
    xa, xb = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    with tf.GradientTape() as tape:
        y = model([xa, xb])
    u = RNG.standard_normal(4)
    grads = tape.gradient(y, [shared.kernel, shared.bias], output_gradients=tf.constant(u))

    def f(kernel, bias):
        h = lambda x: np.tanh(np.asarray(x) @ np.asarray(kernel) + np.asarray(bias))  # noqa: E731
        return tf.constant((h(xa) * h(xb)).sum(-1))

    assert_vjp_matches_differences(f, [shared.kernel.numpy(), shared.bias.numpy()], u,
                                   [g.numpy() for g in grads], RNG, rtol=1e-6)


def test_a_nested_model_is_a_layer_of_the_outer_one():
    x = keras.Input(shape=(3,))
    inner = keras.Model(x, keras.layers.Dense(2, name="inner_dense")(x), name="inner")
    z = keras.Input(shape=(3,))
    outer = keras.Model(z, keras.layers.Dense(1, name="head")(inner(z)), name="outer")
    assert [layer.name for layer in outer.layers] == ["input_layer_1", "inner", "head"]
    assert outer.get_layer("inner") is inner and len(outer.weights) == 4
    data = RNG.standard_normal((5, 3)).astype(np.float32)
    head = outer.get_layer("head")
    expected = inner(data).numpy() @ head.kernel.numpy() + head.bias.numpy()
    np.testing.assert_allclose(outer(data).numpy(), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="No such layer"):
        outer.get_layer("inner_dense")


class CountingModel(keras.Model):
    """keras-io's "customizing what happens in fit" pattern."""

    steps = 0

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        CountingModel.steps += 1
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def test_a_model_subclass_built_functionally_runs_its_own_train_step():
    inputs = keras.Input(shape=(4,))
    outputs = keras.layers.Dense(1)(inputs)
    model = CountingModel(inputs, outputs)
    assert isinstance(model, CountingModel) and isinstance(model, keras.Model)
    assert model.name == "counting_model" and model.inputs == [inputs]
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    x = RNG.standard_normal((64, 4)).astype(np.float32)
    y = x @ np.array([[1.0], [-1.0], [0.5], [2.0]], np.float32)
    history = model.fit(x, y, batch_size=16, epochs=5, verbose=0)
    assert CountingModel.steps == 20
    assert history.history["loss"][-1] < history.history["loss"][0] / 4
    assert set(history.history) == {"loss", "mae"}


def test_a_subclass_with_its_own_arguments_is_not_taken_for_functional():
    class Scaled(keras.Model):
        def __init__(self, units, scale):
            super().__init__()
            self.dense = keras.layers.Dense(units)
            self.scale = scale

        def call(self, inputs):
            return self.dense(inputs) * self.scale

    model = Scaled(3, 2.0)
    assert model(np.ones((1, 2), np.float32)).shape == (1, 3)


def _two_output_model():
    x = keras.Input(shape=(3,), name="x")
    h = keras.layers.Dense(4, activation="relu", name="body")(x)
    reg = keras.layers.Dense(1, name="reg")(h)
    cls = keras.layers.Dense(3, activation="softmax", name="cls")(h)
    return keras.Model(x, [reg, cls])


def test_per_output_losses_and_loss_weights_give_keras_total():
    model = _two_output_model()
    x = RNG.standard_normal((10, 3)).astype(np.float32)
    y_reg = RNG.standard_normal((10, 1)).astype(np.float32)
    y_cls = RNG.integers(0, 3, 10)
    reg, cls = (o.numpy().astype(np.float64) for o in model(x))
    mse = np.mean((reg - y_reg) ** 2)
    sce = np.mean(-np.log(np.clip(cls[np.arange(10), y_cls], 1e-7, 1 - 1e-7)))
    for loss, weights in (({"reg": "mse", "cls": "sparse_categorical_crossentropy"},
                           {"cls": 0.5, "reg": 2.0}),
                          (["mse", "sparse_categorical_crossentropy"], [2.0, 0.5])):
        model.compile(optimizer="sgd", loss=loss, loss_weights=weights)
        logs = model.evaluate(x, [y_reg, y_cls], batch_size=10, verbose=0, return_dict=True)
        assert logs["loss"] == pytest.approx(2.0 * mse + 0.5 * sce, rel=1e-5)
        assert logs["reg_loss"] == pytest.approx(mse, rel=1e-5)
        assert logs["cls_loss"] == pytest.approx(sce, rel=1e-5)
        by_name = model.evaluate(x, {"reg": y_reg, "cls": y_cls}, batch_size=10, verbose=0,
                                 return_dict=True)
        assert by_name["loss"] == pytest.approx(logs["loss"], rel=1e-6)
    model.compile(optimizer="sgd", loss="mse")  # one loss: every output
    both = model.evaluate(x, [y_reg, np.zeros((10, 3))], batch_size=10, verbose=0,
                          return_dict=True)
    assert both["loss"] == pytest.approx(mse + np.mean(cls ** 2), rel=1e-5)
    with pytest.raises(ValueError, match="Expected keys"):
        model.compile(optimizer="sgd", loss={"nope": "mse"})


def test_fit_and_predict_with_several_inputs_and_outputs():
    a, b = keras.Input(shape=(2,)), keras.Input(shape=(2,))
    h = keras.layers.Concatenate()([a, b])
    model = keras.Model([a, b], [keras.layers.Dense(1, name="p")(h),
                                 keras.layers.Dense(1, name="q")(h)])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss=["mse", "mae"])
    xa, xb = (RNG.standard_normal((32, 2)).astype(np.float32) for _ in range(2))
    target = (xa - xb).sum(1, keepdims=True)
    history = model.fit([xa, xb], [target, -target], epochs=20, batch_size=8, verbose=0)
    assert set(history.history) == {"loss", "p_loss", "q_loss"}
    assert history.history["loss"][-1] < history.history["loss"][0] / 2
    p, q = model.predict([xa, xb], batch_size=10, verbose=0)
    assert p.shape == (32, 1) and q.shape == (32, 1)
    np.testing.assert_allclose(p, model([xa, xb])[0].numpy(), rtol=1e-6)


def test_summary_of_a_graph_has_keras_3s_connected_to_column():
    a = keras.Input(shape=(3,), name="a")
    b = keras.Input(shape=(3,), name="b")
    shared = keras.layers.Dense(4, name="shared")
    merged = keras.layers.Concatenate(name="merge")([shared(a), shared(b)])
    model = keras.Model([a, b], merged + 1.0, name="siamese")
    lines = []
    model.summary(print_fn=lines.append)
    assert lines[0] == 'Model: "siamese"'
    header = lines[2]
    assert [c.strip() for c in header.strip("┃").split("┃")] == [
        "Layer (type)", "Output Shape", "Param #", "Connected to"]
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.strip("│").split("│")]
            for line in lines if line.startswith("│")}
    assert rows["a (InputLayer)"] == ["a (InputLayer)", "(None, 3)", "0", "-"]
    assert rows["shared (Dense)"] == ["shared (Dense)", "(None, 4)", "16",
                                      "a[0][0], b[0][0]"]
    assert rows["merge (Concatenate)"][1:] == ["(None, 8)", "0", "shared[0][0], shared[1][0]"]
    assert rows["add (Add)"][1:] == ["(None, 8)", "0", "merge[0][0]"]
    assert " Total params: 16 (64.00 B)" in lines
    assert " Trainable params: 16 (64.00 B)" in lines
    assert " Non-trainable params: 0 (0.00 B)" in lines


def test_summary_of_a_chain_has_three_columns():
    x = keras.Input(shape=(784,))
    h = keras.layers.Dense(256, activation="relu")(x)
    model = keras.Model(x, keras.layers.Dense(10)(h))
    lines = []
    model.summary(print_fn=lines.append)
    assert "Connected to" not in lines[2]
    assert any("dense (Dense)" in line and "(None, 256)" in line and "200,960" in line
               for line in lines)
    assert " Total params: 203,530 (795.04 KB)" in lines


def test_outputs_not_connected_to_the_inputs_say_which_input_is_missing():
    a, b = keras.Input(shape=(2,), name="a"), keras.Input(shape=(2,), name="b")
    with pytest.raises(ValueError, match="not connected"):
        keras.Model(a, keras.layers.Add()([a, b]))


def test_a_layer_called_with_keras_tensors_as_keywords_is_recorded():
    class Attend(keras.layers.Layer):
        def call(self, query, value):
            weights = ops.softmax(ops.matmul(query, ops.transpose(value, (0, 2, 1))))
            return ops.matmul(weights, value)

    q, v = keras.Input(shape=(2, 3)), keras.Input(shape=(4, 3))
    out = Attend()(query=q, value=v)
    assert out.shape == (None, 2, 3)
    model = keras.Model([q, v], out)
    xq = RNG.standard_normal((2, 2, 3)).astype(np.float32)
    xv = RNG.standard_normal((2, 4, 3)).astype(np.float32)
    scores = xq @ xv.transpose(0, 2, 1)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(model([xq, xv]).numpy(), weights @ xv, rtol=1e-5)


def test_logical_operators_record_ops_and_equality_stays_identity():
    a = keras.Input(shape=(3,), dtype="float64")
    mask = ((a > 0.0) & ~(a > 1.0)) | (a != a)
    model = keras.Model(a, [mask, round(a * 10.0, 1)])
    data = np.array([[-1.0, 0.5, 2.0]])
    got_mask, got_round = model(data)
    np.testing.assert_array_equal(got_mask.numpy(), [[False, True, False]])
    np.testing.assert_allclose(got_round.numpy(), np.round(data * 10.0, 1))
    assert (a == a) is True and a.reshape((-1, 3, 1)).shape == (None, 3, 1)
    with pytest.raises(TypeError, match="boolean"):
        bool(a > 0)
    with pytest.raises(NotImplementedError, match="Iterating"):
        list(a)
