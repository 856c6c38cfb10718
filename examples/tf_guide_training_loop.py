"""A training loop in the style of TF's "Basic training loops" guide, written as TF code:
only the import changes.

A ``tf.Module`` linear model learns W=3, b=2 from noisy ``tf.random`` data, with a
``tf.GradientTape`` training step and ``tf.keras.optimizers.SGD``.
"""

import gradtape as tf  # was: import tensorflow as tf

TRUE_W = 3.0
TRUE_B = 2.0
NUM_EXAMPLES = 201


class MyModel(tf.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Initialize the weights to `5.0` and the bias to `0.0`
        # In practice, these should be randomly initialized
        self.w = tf.Variable(5.0)
        self.b = tf.Variable(0.0)

    @tf.function
    def __call__(self, x):
        return self.w * x + self.b


def loss(target_y, predicted_y):
    return tf.reduce_mean(tf.square(target_y - predicted_y))


def make_data(seed=42):
    tf.random.set_seed(seed)
    x = tf.linspace(-2.0, 2.0, NUM_EXAMPLES)
    x = tf.cast(x, tf.float32)
    noise = tf.random.normal(shape=[NUM_EXAMPLES])
    y = x * TRUE_W + TRUE_B + noise
    return x, y


def train(epochs=10, learning_rate=0.1, log=True):
    x, y = make_data()
    model = MyModel()
    optimizer = tf.keras.optimizers.SGD(learning_rate=learning_rate)

    def train_step(x, y):
        with tf.GradientTape() as tape:
            current_loss = loss(y, model(x))
        grads = tape.gradient(current_loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return current_loss

    losses = []
    for epoch in range(epochs):
        current_loss = train_step(x, y)
        losses.append(float(current_loss))
        if log:
            print(f"Epoch {epoch:2d}: W={model.w.numpy():1.2f} b={model.b.numpy():1.2f}, "
                  f"loss={current_loss:2.5f}")
    final = loss(y, model(x))
    if log:
        print(f"Variables: {[v.name for v in model.variables]}")
        print(f"Final loss: {final:2.5f}")
    return {"model": model, "losses": losses, "final_loss": float(final)}


if __name__ == "__main__":
    train()
