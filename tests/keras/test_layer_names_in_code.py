"""Generated code names the Keras layer an op came from: a whole model is one user
statement (``predictions = model(images)``), so each block's comment says which layer's
ops follow (``# hidden (Dense): predictions = model(images)   (file:line)``). Names are
cosmetic: models differing only in layer names share compiled code."""

import numpy as np

import gradtape as gt

keras = gt.keras


def _sequential(first: str, second: str) -> keras.Model:
    model = keras.Sequential([keras.layers.Dense(4, activation="relu", name=first),
                              keras.layers.Dense(2, name=second)])
    model.build((None, 3))
    return model


def _functional(first: str, second: str) -> keras.Model:
    inputs = keras.Input(shape=(3,))
    hidden = keras.layers.Dense(4, activation="tanh", name=first)(inputs)
    outputs = keras.layers.Dense(2, name=second)(hidden)
    return keras.Model(inputs, outputs)


def _data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((8, 3)).astype(np.float32),
            rng.standard_normal((8, 2)).astype(np.float32))


def _step(model):
    @gt.function
    def train_step(images, targets):
        with gt.GradientTape() as tape:
            predictions = model(images)
            loss = gt.reduce_mean(gt.square(predictions - targets))
        return loss, tape.gradient(loss, model.trainable_variables)
    return train_step


def _comments(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines() if line.strip().startswith("#")]


def _check_named_step(model, first: str, second: str, kind: str) -> None:
    images, targets = _data()
    step = _step(model)
    loss, grads = step(images, targets)
    source = step.get_concrete_function(images, targets).source
    comments = _comments(source)
    for name in (first, second):
        label = f"# {name} ({kind}): predictions = model(images)   (test_layer_names_in_code.py:"
        # The forward's block and the backward's block of each layer.
        assert sum(label in c for c in comments) >= 2, (name, source)
    # The loss is no layer's: its comment quotes the statement alone.
    assert any(c.startswith("# loss = gt.reduce_mean(") for c in comments)
    # The compiled step computes what the eager one does.
    with gt.GradientTape() as tape:
        eager_loss = gt.reduce_mean(gt.square(model(images) - targets))
    eager_grads = tape.gradient(eager_loss, model.trainable_variables)
    np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-6)
    for g, e in zip(grads, eager_grads):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)


def test_a_sequential_models_step_names_each_layer():
    _check_named_step(_sequential("hidden", "head"), "hidden", "head", "Dense")


def test_a_functional_models_step_names_each_layer():
    _check_named_step(_functional("encoder", "decoder"), "encoder", "decoder", "Dense")


def test_the_innermost_layer_is_named_for_its_ops():
    """An Activation layer's op is the Activation's, not the Sequential's."""
    model = keras.Sequential([keras.layers.Dense(2, name="proj"),
                              keras.layers.Activation("sigmoid", name="squash")])
    model.build((None, 3))
    images, _ = _data()

    @gt.function
    def predict(images):
        predictions = model(images)
        return predictions

    np.testing.assert_allclose(predict(images).numpy(), model(images).numpy(), rtol=1e-6)
    comments = _comments(predict.get_concrete_function(images).source)
    assert any(c.startswith("# proj (Dense): predictions = model(images)") for c in comments)
    assert any(c.startswith("# squash (Activation): predictions = model(images)")
               for c in comments)
    assert not any("(Sequential)" in c for c in comments)


def test_models_differing_only_in_layer_names_share_compiled_code():
    images, targets = _data()
    gt.clear_cache()

    def gradient(model):
        with gt.GradientTape() as tape:
            predictions = model(images)
            loss = gt.reduce_mean(gt.square(predictions - targets))
        return tape.gradient(loss, model.trainable_variables)

    first, second = _sequential("alpha", "beta"), _sequential("gamma", "delta")
    second.set_weights(first.get_weights())
    expected = gradient(first)
    before = gt.cache_info()
    got = gradient(second)
    after = gt.cache_info()
    # Found in the compile cache, not built again.
    assert (after.hits, after.misses, after.entries) == \
        (before.hits + 1, before.misses, before.entries)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6)


def test_a_location_is_its_file_and_line_for_lookups_and_keys():
    from gradtape.core.state import Location

    pair = ("train.py", 12)
    located = Location(pair, "dense_1 (Dense)")
    assert located == pair and hash(located) == hash(pair)
    assert {pair: "statement"}[located] == "statement"
    assert located.layer == "dense_1 (Dense)" and tuple(located) == pair


def test_an_eager_tapes_backward_names_each_layer():
    model = _sequential("hidden", "head")
    images, _ = _data()
    with gt.GradientTape() as tape:
        predictions = model(images)
        loss = gt.reduce_sum(predictions)
    source = tape.inspect(loss, model.trainable_variables).source
    comments = _comments(source)
    for name in ("hidden", "head"):
        assert any(c.startswith(f"# {name} (Dense): predictions = model(images)")
                   for c in comments), source
    # d loss / d head_bias is the batch size for every output unit.
    grads = tape.gradient(loss, model.trainable_variables)
    np.testing.assert_allclose(grads[3].numpy(), np.full(2, 8.0), rtol=0)
