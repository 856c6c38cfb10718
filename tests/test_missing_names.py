"""A TF or Keras name gradtape does not have raises an AttributeError that says so and
what to use instead (before, a bare "has no attribute"); other names keep Python's
ordinary message, and dir()/hasattr are unchanged."""

import pytest

import gradtape as tf

GUIDE = "porting guide (docs/porting.md)"


def _message(get):
    with pytest.raises(AttributeError) as info:
        get()
    return str(info.value)


@pytest.mark.parametrize("get, name, substitute", [
    (lambda: tf.summary, "tf.summary", "logging"),
    (lambda: tf.saved_model, "tf.saved_model", "save_weights"),
    (lambda: tf.RaggedTensor, "tf.RaggedTensor", "masks"),
    (lambda: tf.keras.models.load_model, "tf.keras.models.load_model", "Checkpoint"),
    (lambda: tf.keras.utils.to_categorical, "tf.keras.utils.to_categorical", "one_hot"),
    (lambda: tf.random.poisson, "tf.random.poisson", "default_rng"),
    (lambda: tf.keras.callbacks.TensorBoard, "tf.keras.callbacks.TensorBoard", "logging"),
    (lambda: tf.train.CheckpointManager, "tf.train.CheckpointManager", "latest_checkpoint"),
    (lambda: tf.dtypes.bfloat16, "tf.dtypes.bfloat16", "float32"),
])
def test_a_missing_tf_name_names_its_substitute(get, name, substitute):
    message = _message(get)
    assert f"`{name}` is" in message and "gradtape does not have it" in message
    assert substitute in message


@pytest.mark.parametrize("get", [
    lambda: tf.keras.layers.ConvLSTM2D, lambda: tf.nn.atrous_conv2d,
    lambda: tf.math.polyval, lambda: tf.linalg.logm, lambda: tf.keras.losses.Tversky,
    lambda: tf.keras.metrics.R2Score, lambda: tf.keras.optimizers.Lion, lambda: tf.lite,
])
def test_a_missing_name_without_a_substitute_points_to_the_guide(get):
    assert GUIDE in _message(get)


def test_model_save_says_what_to_do():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    message = _message(lambda: model.save("m.keras"))
    assert message.startswith("'Sequential' object has no attribute 'save': ")
    assert "model.save_weights(path)" in message
    assert "gt.train.Checkpoint" in message
    assert GUIDE in _message(lambda: model.to_json())


@pytest.mark.parametrize("get, text", [
    (lambda: tf.no_such_function, "module 'gradtape' has no attribute 'no_such_function'"),
    (lambda: tf.keras.layers.Dense2, "module 'gradtape.keras.layers' has no attribute "
                                     "'Dense2'"),
    (lambda: tf.keras.Sequential().no_such_method, "'Sequential' object has no attribute "
                                                   "'no_such_method'"),
    (lambda: tf.train.no_such_thing, "namespace 'gt.train' has no attribute 'no_such_thing'"),
])
def test_a_name_that_is_not_tfs_is_an_ordinary_attribute_error(get, text):
    assert _message(get) == text


def test_hasattr_dir_and_imports_are_unchanged():
    assert not hasattr(tf, "summary") and not hasattr(tf.keras.layers, "ConvLSTM2D")
    assert "summary" not in dir(tf) and "__getattr__" not in dir(tf)
    assert getattr(tf, "summary", None) is None
    assert tf.keras.layers.Dense is not None and tf.nn.relu is tf.relu
    from gradtape import testing  # a submodule not yet imported still imports

    assert testing.check_grads


def test_the_table_is_written_by_tf_path():
    from gradtape.api.missing_names import MISSING

    assert all(key.startswith("tf.") for key in MISSING)
    assert MISSING["tf.keras.layers.Input"] == "use keras.Input(shape=...)"
