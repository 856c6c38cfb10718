"""Cells of TF's "Introduction to modules, layers, and models" guide
(tensorflow.org/guide/intro_to_modules), run with ``import gradtape as tf``; each checks
the values the guide prints. Keras, SavedModel and TensorBoard cells are left out."""

import numpy as np
import pytest

import gradtape as tf


class SimpleModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.a_variable = tf.Variable(5.0, name="train_me")
        self.non_trainable_variable = tf.Variable(5.0, trainable=False, name="do_not_train_me")

    def __call__(self, x):
        return self.a_variable * x + self.non_trainable_variable


class Dense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(
            tf.random.normal([in_features, out_features]), name='w')
        self.b = tf.Variable(tf.zeros([out_features]), name='b')

    def __call__(self, x):
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


class SequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = Dense(in_features=3, out_features=3)
        self.dense_2 = Dense(in_features=3, out_features=2)

    def __call__(self, x):
        x = self.dense_1(x)
        return self.dense_2(x)


class FlexibleDenseModule(tf.Module):
    # Note: No need for `in_features`
    def __init__(self, out_features, name=None):
        super().__init__(name=name)
        self.is_built = False
        self.out_features = out_features

    def __call__(self, x):
        # Create variables on first call.
        if not self.is_built:
            self.w = tf.Variable(
                tf.random.normal([x.shape[-1], self.out_features]), name='w')
            self.b = tf.Variable(tf.zeros([self.out_features]), name='b')
            self.is_built = True
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


def _relu_dense(x, *layers):
    out = np.asarray(x, np.float32)
    for layer in layers:
        out = np.maximum(out @ layer.w.numpy() + layer.b.numpy(), 0)
    return out


def test_simple_module():
    simple_module = SimpleModule(name="simple")
    assert simple_module(tf.constant(5.0)).numpy() == 30.0
    assert [v.name for v in simple_module.trainable_variables] == ["train_me:0"]
    # By attribute name, as TF's: a_variable, then non_trainable_variable.
    assert [v.name for v in simple_module.variables] == ["train_me:0", "do_not_train_me:0"]
    assert simple_module.name == "simple"


def test_sequential_module_and_its_submodules():
    my_model = SequentialModule(name="the_model")
    x = [[2.0, 2.0, 2.0]]
    out = my_model(tf.constant(x))
    np.testing.assert_allclose(out.numpy(), _relu_dense(x, my_model.dense_1, my_model.dense_2),
                               rtol=1e-6)
    assert my_model.submodules == (my_model.dense_1, my_model.dense_2)
    assert [v.name for v in my_model.variables] == ["b:0", "w:0", "b:0", "w:0"]


def test_flexible_module_builds_on_first_call():
    class MySequentialModule(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.dense_1 = FlexibleDenseModule(out_features=3)
            self.dense_2 = FlexibleDenseModule(out_features=2)

        def __call__(self, x):
            x = self.dense_1(x)
            return self.dense_2(x)

    my_model = MySequentialModule(name="the_model")
    x = [[2.0, 2.0, 2.0]]
    out = my_model(tf.constant(x))
    np.testing.assert_allclose(out.numpy(), _relu_dense(x, my_model.dense_1, my_model.dense_2),
                               rtol=1e-6)
    assert len(my_model.trainable_variables) == 4


def test_saving_functions_module():
    class MySequentialModule(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.dense_1 = Dense(in_features=3, out_features=3)
            self.dense_2 = Dense(in_features=3, out_features=2)

        @tf.function
        def __call__(self, x):
            x = self.dense_1(x)
            return self.dense_2(x)

    my_model = MySequentialModule(name="the_model")
    x = [[2.0, 2.0, 2.0]]
    out = my_model(x)
    np.testing.assert_allclose(out.numpy(), _relu_dense(x, my_model.dense_1, my_model.dense_2),
                               rtol=1e-6)
    out3 = my_model([[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]])
    assert out3.shape == (1, 2, 2)
    np.testing.assert_allclose(out3.numpy()[0, 1], out.numpy()[0], rtol=1e-6)


class MySequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = FlexibleDenseModule(out_features=3)
        self.dense_2 = FlexibleDenseModule(out_features=2)

    def __call__(self, x):
        x = self.dense_1(x)
        return self.dense_2(x)


def test_checkpoints(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    my_model = MySequentialModule(name="the_model")
    expected = my_model(tf.constant([[2.0, 2.0, 2.0]])).numpy()
    chkp_path = "my_checkpoint"
    checkpoint = tf.train.Checkpoint(model=my_model)
    assert checkpoint.write(chkp_path) == "my_checkpoint"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "my_checkpoint.data-00000-of-00001", "my_checkpoint.index"]
    assert tf.train.list_variables(chkp_path) == [
        ('_CHECKPOINTABLE_OBJECT_GRAPH', []),
        ('model/dense_1/b/.ATTRIBUTES/VARIABLE_VALUE', [3]),
        ('model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE', [3, 3]),
        ('model/dense_2/b/.ATTRIBUTES/VARIABLE_VALUE', [2]),
        ('model/dense_2/w/.ATTRIBUTES/VARIABLE_VALUE', [3, 2])]
    np.testing.assert_array_equal(
        tf.train.load_variable(chkp_path, 'model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE'),
        my_model.dense_1.w.numpy())
    # The new model builds its variables on its first call: the checkpoint's values
    # wait for them (TF's deferred restoration).
    new_model = MySequentialModule()
    new_checkpoint = tf.train.Checkpoint(model=new_model)
    status = new_checkpoint.restore("my_checkpoint")
    with pytest.raises(AssertionError, match="Unresolved"):
        status.assert_consumed()
    # Should be the same result as above
    np.testing.assert_array_equal(new_model(tf.constant([[2.0, 2.0, 2.0]])).numpy(), expected)
    status.assert_consumed()


def test_checkpoint_restores_built_modules_and_save_counts(tmp_path):
    model = SequentialModule()
    path = tf.train.Checkpoint(model=model).save(str(tmp_path / "ckpt"))
    assert path.endswith("ckpt-1")
    assert tf.train.latest_checkpoint(str(tmp_path)) == path
    other = SequentialModule()
    tf.train.Checkpoint(model=other).restore(tf.train.latest_checkpoint(str(tmp_path)))
    for a, b in zip(model.variables, other.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    wrong = tf.Variable(tf.zeros([4]))
    with pytest.raises(ValueError, match="shape"):
        tf.train.Checkpoint(model={"dense_1": {"b": wrong}}).restore(path)
    with pytest.raises(ValueError, match="trackable"):
        tf.train.Checkpoint(model=3)
