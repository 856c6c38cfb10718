"""gt.train.Checkpoint of Keras layers saves every weight add_weight made, as Keras 3's
layers are checkpointed: one that no attribute holds (a counter, a list built in
build) was silently left out of the file and kept its initial value on restore."""

import numpy as np

import gradtape as gt

K = gt.keras


class Counting(K.layers.Layer):
    """Keeps `scale` as an attribute and two weights only add_weight knows."""

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones",
                                     name="scale")
        self.add_weight(shape=(3,), initializer="zeros", name="offsets")
        self.add_weight(shape=(), initializer="zeros", name="calls", trainable=False)

    def call(self, x):
        return x * self.scale


def _model():
    return K.Sequential([K.layers.Dense(2), Counting()])


def _trained(tmp_path):
    model = _model()
    model(np.ones((1, 2), np.float32))
    model.set_weights([np.full(w.shape, i + 1.0, np.float32)
                       for i, w in enumerate(model.weights)])
    return model, gt.train.Checkpoint(model=model).write(str(tmp_path / "c"))


def _assert_same_weights(restored, saved):
    assert [w.name for w in restored.weights] == ["kernel", "bias", "scale", "offsets",
                                                  "calls"]
    for got, want in zip(restored.get_weights(), saved.get_weights()):
        np.testing.assert_array_equal(got, want)


def test_weights_no_attribute_holds_round_trip(tmp_path):
    saved, path = _trained(tmp_path)
    model = _model()
    model(np.ones((1, 2), np.float32))
    gt.train.Checkpoint(model=model).restore(path).assert_consumed()
    _assert_same_weights(model, saved)  # offsets and calls were 0 before
    np.testing.assert_array_equal(model.layers[1].weights[1].numpy(), [4.0, 4.0, 4.0])


def test_weights_no_attribute_holds_wait_for_build(tmp_path):
    saved, path = _trained(tmp_path)
    model = _model()
    status = gt.train.Checkpoint(model=model).restore(path)
    assert len(status.deferred) == 5
    model(np.ones((1, 2), np.float32))
    status.assert_consumed()
    _assert_same_weights(model, saved)


def test_attributes_keep_their_names(tmp_path):
    # Checkpoints written before keep restoring: a weight an attribute holds is saved
    # under the attribute, the others under `_added_weights/<index in add_weight order>`.
    _, path = _trained(tmp_path)
    keys = [key for key, _ in gt.train.list_variables(path)][1:]
    layers = "model/_sequential_layers"
    assert keys == [f"{layers}/0/bias/.ATTRIBUTES/VARIABLE_VALUE",
                    f"{layers}/0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                    f"{layers}/1/_added_weights/1/.ATTRIBUTES/VARIABLE_VALUE",
                    f"{layers}/1/_added_weights/2/.ATTRIBUTES/VARIABLE_VALUE",
                    f"{layers}/1/scale/.ATTRIBUTES/VARIABLE_VALUE"]


def test_a_sequential_inside_a_module_round_trips(tmp_path):
    class Agent(gt.Module):
        def __init__(self):
            super().__init__()
            self.policy = _model()

    saved = Agent()
    saved.policy(np.ones((1, 2), np.float32))
    saved.policy.set_weights([np.full(w.shape, -i - 0.5, np.float32)
                              for i, w in enumerate(saved.policy.weights)])
    path = gt.train.Checkpoint(agent=saved).write(str(tmp_path / "c"))
    agent = Agent()
    status = gt.train.Checkpoint(agent=agent).restore(path)
    agent.policy(np.ones((1, 2), np.float32))
    status.assert_consumed()
    _assert_same_weights(agent.policy, saved.policy)
