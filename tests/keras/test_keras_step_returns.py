"""A custom `train_step` / `test_step` must return a dict of metric values. One that
returned None, a list or a bare tensor made fit fail with `AttributeError: ... no
attribute 'items'` from inside gradtape; Keras 3 crashes the same way (its
`_pythonify_logs` calls `logs.items()`), so gradtape raises a TypeError saying what to
return. A mapping that is not a dict is logged as Keras logs it."""

import types

import numpy as np
import pytest

import gradtape as gt

K = gt.keras
X = np.arange(8, dtype=np.float32).reshape(4, 2) / 8
Y = np.array([[1.0], [0.0], [1.0], [0.5]], np.float32)

RETURNS = {
    "None": (lambda loss: None, r"returned None"),
    "list": (lambda loss: [loss], r"returned a list"),
    "tuple": (lambda loss: (loss, loss), r"returned a tuple"),
    "tensor": (lambda loss: loss, r"returned a bare tensor \(float32, shape \(\)\)"),
}


def _model(make_logs):
    class Custom(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = K.layers.Dense(1, kernel_initializer="ones")

        def call(self, x):
            return self.dense(x)

        def _loss(self, data):
            x, y = data
            return gt.reduce_mean((self(x) - y) ** 2)

        def train_step(self, data):
            with gt.GradientTape() as tape:
                loss = self._loss(data)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return make_logs(loss)

        def test_step(self, data):
            return make_logs(self._loss(data))

    model = Custom()
    model.compile(optimizer=K.optimizers.SGD(0.1), loss="mse")
    return model


@pytest.mark.parametrize("kind", sorted(RETURNS))
@pytest.mark.parametrize("method, step", [
    ("fit", "train_step"), ("evaluate", "test_step"), ("train_on_batch", "train_step"),
    ("test_on_batch", "test_step")])
def test_a_step_that_returns_no_dict_raises_saying_what_to_return(kind, method, step):
    make_logs, returned = RETURNS[kind]
    model = _model(make_logs)
    kwargs = {"verbose": 0} if method in ("fit", "evaluate") else {}
    with pytest.raises(TypeError, match=rf"`{step}` {returned}.*must "
                       r"return a dict of metric values.*compute_metrics"):
        getattr(model, method)(X, Y, **kwargs)


def test_the_message_names_what_was_returned():
    with pytest.raises(TypeError, match=r"^`train_step` returned None; it must return"):
        _model(lambda loss: None).fit(X, Y, verbose=0)


def test_a_mapping_that_is_not_a_dict_is_logged():
    # (Not named "loss": returned names equal to the metrics' log the metrics, as Keras.)
    model = _model(lambda loss: types.MappingProxyType({"value": loss}))
    history = model.fit(X, Y, batch_size=4, epochs=2, verbose=0)
    # One step per epoch from kernel ones, bias zero: the loss of the weights before it.
    first = float(np.mean((X.sum(axis=1, keepdims=True) - Y) ** 2))
    assert history.history["value"][0] == pytest.approx(first, rel=1e-6)
    assert history.history["value"][1] < first
    logs = model.evaluate(X, Y, verbose=0, return_dict=True)
    assert logs["value"] == pytest.approx(float(np.mean((model.predict(X) - Y) ** 2)),
                                          rel=1e-6)
