"""GAN- and VAE-shaped models on the convolution layers, as TF's tutorials write them
(DCGAN, WGAN-GP with its gradient penalty, a convolutional VAE), at small sizes: a few
training steps lower the loss, and the gradients match finite differences in float64
(for WGAN-GP: the gradient of a norm of a gradient, through Conv2D twice)."""

import numpy as np
import pytest

import gradtape as tf
from gradtape import keras

RNG = np.random.default_rng(11)
F64 = "float64"  # every layer: Keras layers compute in their own dtype


def _images(n, size=8):
    """Synthetic 'digits': a bright square at a random place on a dark image, in [-1, 1]."""
    x = -np.ones((n, size, size, 1))
    for i in range(n):
        r, c = RNG.integers(0, size - 3, 2)
        x[i, r:r + 3, c:c + 3] = 1.0
    return x


def functional(input_shape, layers):
    """A functional model (it keeps float64 inputs, where Sequential casts to float32)."""
    inputs = keras.Input(input_shape, dtype=F64)
    x = inputs
    for layer in layers:
        x = layer(x)
    return keras.Model(inputs, x)


def generator(latent=4):
    return functional((latent,), [
        keras.layers.Dense(2 * 2 * 8, use_bias=False, dtype=F64),
        keras.layers.Reshape((2, 2, 8), dtype=F64),
        keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu",
                                     dtype=F64),
        keras.layers.Conv2DTranspose(1, 3, strides=2, padding="same", activation="tanh",
                                     dtype=F64),
    ])


def critic():
    return functional((8, 8, 1), [
        keras.layers.Conv2D(4, 3, strides=2, padding="same", dtype=F64),
        keras.layers.LeakyReLU(0.2, dtype=F64),
        keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="tanh", dtype=F64),
        keras.layers.Flatten(dtype=F64),
        keras.layers.Dense(1, dtype=F64),
    ])


def directional_check(loss_fn, variables, eps=1e-6, rtol=1e-6):
    """``<grad loss, v> == (loss(w + eps v) - loss(w - eps v)) / 2 eps`` along a random v."""
    with tf.GradientTape() as tape:
        loss = loss_fn()
    grads = tape.gradient(loss, variables)
    assert all(g is not None for g in grads)
    directions = [RNG.standard_normal(v.shape) for v in variables]
    analytic = sum(float(np.sum(g.numpy() * d)) for g, d in zip(grads, directions))
    originals = [v.numpy() for v in variables]

    def shifted(sign):
        for v, w, d in zip(variables, originals, directions):
            v.assign(w + sign * eps * d)
        return float(loss_fn().numpy())

    numeric = (shifted(1) - shifted(-1)) / (2 * eps)
    for v, w in zip(variables, originals):
        v.assign(w)
    np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=1e-9)


# --- DCGAN ------------------------------------------------------------------------------------

def test_dcgan_trains_and_its_gradients_match_differences():
    gen, disc = generator(), critic()
    bce = keras.losses.BinaryCrossentropy(from_logits=True)
    real = _images(8)
    noise = RNG.normal(size=(8, 4))

    def disc_loss():
        fake = gen(noise, training=True)
        real_out, fake_out = disc(real, training=True), disc(fake, training=True)
        return bce(tf.ones_like(real_out), real_out) + bce(tf.zeros_like(fake_out), fake_out)

    def gen_loss():
        fake_out = disc(gen(noise, training=True), training=True)
        return bce(tf.ones_like(fake_out), fake_out)

    directional_check(gen_loss, gen.trainable_variables)
    directional_check(disc_loss, disc.trainable_variables)

    g_opt, d_opt = keras.optimizers.Adam(1e-2), keras.optimizers.Adam(1e-2)

    @tf.function
    def train_step():  # the tutorial's step: two tapes, one per network
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            fake = gen(noise, training=True)
            real_out, fake_out = disc(real, training=True), disc(fake, training=True)
            g_loss = bce(tf.ones_like(fake_out), fake_out)
            d_loss = bce(tf.ones_like(real_out), real_out) + bce(tf.zeros_like(fake_out),
                                                                  fake_out)
        g_opt.apply_gradients(zip(gen_tape.gradient(g_loss, gen.trainable_variables),
                                  gen.trainable_variables))
        d_opt.apply_gradients(zip(disc_tape.gradient(d_loss, disc.trainable_variables),
                                  disc.trainable_variables))
        return g_loss, d_loss

    losses = [train_step() for _ in range(5)]
    assert all(np.isfinite(float(g)) and np.isfinite(float(d)) for g, d in losses)
    # The discriminator alone against a fixed generator: its loss goes down.
    before = float(disc_loss())
    for _ in range(15):
        with tf.GradientTape() as tape:
            d_loss = disc_loss()
        d_opt.apply_gradients(zip(tape.gradient(d_loss, disc.trainable_variables),
                                  disc.trainable_variables))
    assert float(disc_loss()) < 0.7 * before


# --- WGAN-GP ----------------------------------------------------------------------------------

def _critic_loss(disc, real, fake, alpha, weight=10.0):
    """Wasserstein critic loss with the gradient penalty of Gulrajani et al.: the
    critic's gradient at images interpolated between real and fake, its norm pulled to 1."""
    interpolated = alpha * real + (1 - alpha) * fake
    with tf.GradientTape() as gp_tape:
        gp_tape.watch(interpolated)
        scores = disc(interpolated, training=True)
    grads = gp_tape.gradient(scores, interpolated)
    norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]) + 1e-12)
    penalty = tf.reduce_mean((norm - 1.0) ** 2)
    wasserstein = tf.reduce_mean(disc(fake, training=True)) - tf.reduce_mean(
        disc(real, training=True))
    return wasserstein + weight * penalty


def test_wgan_gp_penalty_gradient_matches_differences_and_the_critic_trains():
    gen, disc = generator(), critic()
    real = tf.constant(_images(6))
    fake = gen(RNG.normal(size=(6, 4)))
    alpha = tf.constant(RNG.uniform(size=(6, 1, 1, 1)))
    directional_check(lambda: _critic_loss(disc, real, fake, alpha),
                      disc.trainable_variables, rtol=1e-5)

    opt = keras.optimizers.Adam(5e-3)

    def step():
        with tf.GradientTape() as tape:
            loss = _critic_loss(disc, real, fake, alpha)
        opt.apply_gradients(zip(tape.gradient(loss, disc.trainable_variables),
                                disc.trainable_variables))
        return float(loss)

    compiled = tf.function(step_body := (lambda: _critic_loss(disc, real, fake, alpha)))
    np.testing.assert_allclose(float(compiled()), float(step_body()), rtol=1e-12)
    losses = [step() for _ in range(15)]
    assert losses[-1] < losses[0] - 0.1, losses


def test_wgan_gp_step_under_function_equals_eager():
    disc = critic()
    real = tf.constant(_images(4))
    fake = tf.constant(_images(4) * 0.5)
    alpha = tf.constant(RNG.uniform(size=(4, 1, 1, 1)))

    def grads():
        with tf.GradientTape() as tape:
            loss = _critic_loss(disc, real, fake, alpha)
        return loss, tape.gradient(loss, disc.trainable_variables)

    eager_loss, eager = grads()
    compiled = tf.function(grads)
    for _ in range(2):
        loss, got = compiled()
        np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-10)
        for a, b in zip(got, eager):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-8, atol=1e-12)


# --- a convolutional VAE -----------------------------------------------------------------------

class CVAE(keras.Model):
    """TF's CVAE tutorial, small: a strided Conv2D encoder to (mean, logvar), the
    reparameterisation z = mean + exp(logvar / 2) * eps, a Conv2DTranspose decoder."""

    def __init__(self, latent=2):
        super().__init__()
        self.latent = latent
        self.encoder = functional((8, 8, 1), [
            keras.layers.Conv2D(4, 3, strides=2, padding="same", activation="relu", dtype=F64),
            keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu", dtype=F64),
            keras.layers.Flatten(dtype=F64),
            keras.layers.Dense(2 * latent, dtype=F64),
        ])
        self.decoder = functional((latent,), [
            keras.layers.Dense(2 * 2 * 8, activation="relu", dtype=F64),
            keras.layers.Reshape((2, 2, 8), dtype=F64),
            keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu",
                                         dtype=F64),
            keras.layers.Conv2DTranspose(1, 3, strides=2, padding="same", dtype=F64),
        ])

    def elbo_loss(self, x, eps):
        mean, logvar = tf.split(self.encoder(x), num_or_size_splits=2, axis=1)
        z = mean + tf.exp(logvar * 0.5) * eps
        logits = self.decoder(z)
        cross_ent = tf.nn.sigmoid_cross_entropy_with_logits(logits=logits, labels=x)
        reconstruction = tf.reduce_sum(cross_ent, axis=[1, 2, 3])
        kl = -0.5 * tf.reduce_sum(1 + logvar - mean ** 2 - tf.exp(logvar), axis=1)
        return tf.reduce_mean(reconstruction + kl)


def test_cvae_trains_and_its_gradients_match_differences():
    model = CVAE()
    x = tf.constant((_images(16) + 1) / 2)  # pixels in [0, 1]
    eps = tf.constant(RNG.normal(size=(16, 2)))
    model.encoder(x)
    model.decoder(eps)
    variables = model.encoder.trainable_variables + model.decoder.trainable_variables
    for v in variables:  # the images' zero background would sit every ReLU on its kink
        if v.name == "bias":
            v.assign(RNG.normal(0, 0.1, v.shape))
    directional_check(lambda: model.elbo_loss(x, eps), variables)
    opt = keras.optimizers.Adam(1e-2)

    @tf.function
    def step(x, eps):
        with tf.GradientTape() as tape:
            loss = model.elbo_loss(x, eps)
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    losses = [float(step(x, tf.constant(RNG.normal(size=(16, 2))))) for _ in range(30)]
    assert np.mean(losses[-5:]) < 0.8 * np.mean(losses[:5]), losses


@pytest.mark.parametrize("strides", [1, 2])
def test_double_backward_through_conv2d_transpose(strides):
    """The generator side of a penalty: the gradient of a Conv2DTranspose output's
    input-gradient norm with respect to its kernel, against differences."""
    layer = keras.layers.Conv2DTranspose(2, 3, strides=strides, padding="same", dtype=F64)
    z = tf.constant(RNG.normal(size=(2, 3, 3, 3)))
    layer(z)

    def penalty():
        with tf.GradientTape() as inner:
            inner.watch(z)
            out = tf.reduce_sum(tf.sin(layer(z)))
        g = inner.gradient(out, z)
        return tf.reduce_sum(g * g)

    directional_check(penalty, layer.trainable_variables)


def test_sequential_keeps_its_input_layers_dtype():
    """Keras 3 converts a Sequential's inputs to its ``keras.Input``'s dtype: a float64
    model stays float64 (it was cast to the model's float32 first, losing 1e-10)."""
    model = keras.Sequential([keras.Input((3,), dtype=F64),
                              keras.layers.Dense(1, use_bias=False, kernel_initializer="ones",
                                                 dtype=F64)])
    x = np.full((1, 3), 1 + 1e-10)
    out = model(x)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), [[3 + 3e-10]], rtol=1e-15)
    np.testing.assert_allclose(model(tf.constant(x)).numpy(), [[3 + 3e-10]], rtol=1e-15)
    default = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    assert default(x).dtype == np.float32  # a float32 Input: float64 data is cast
