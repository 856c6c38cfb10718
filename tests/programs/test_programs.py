"""Public TF programs, run as written with ``import gradtape as tf`` (each file's header
says where it comes from and what stands in for downloads and gym): each runs its own
training for a few steps, then the test checks real numbers from what it left behind."""

import os
import runpy
import sys

import numpy as np
import pytest

import gradtape as gt

HERE = os.path.dirname(os.path.abspath(__file__))


def run_program(name: str) -> dict:
    """The module globals the program left, run as ``__main__`` from its own folder."""
    sys.path.insert(0, HERE)
    try:
        gt.random.set_seed(0)
        np.random.seed(0)
        return runpy.run_path(os.path.join(HERE, f"{name}.py"), run_name="__main__")
    finally:
        sys.path.remove(HERE)


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_custom_training_walkthrough_gradient_matches_the_hand_computation():
    g = run_program("custom_training_walkthrough")
    losses = [float(v) for v in g["train_loss_results"]]
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]
    model, x, y = g["model"], g["features"].numpy(), g["labels"].numpy()
    loss_value, grads = g["grad"](model, g["features"], g["labels"])
    # the last Dense: d(mean cross-entropy)/d(bias) = mean(softmax - one_hot)
    hidden = x
    for layer in model.layers[:-1]:
        hidden = np.maximum(hidden @ layer.kernel.numpy() + layer.bias.numpy(), 0)
    logits = hidden @ model.layers[-1].kernel.numpy() + model.layers[-1].bias.numpy()
    probs = _softmax(logits.astype(np.float64))
    one_hot = np.eye(3)[y]
    np.testing.assert_allclose(float(loss_value),
                               -np.mean(np.log(probs[np.arange(len(y)), y])), rtol=1e-5)
    np.testing.assert_allclose(grads[-1].numpy(), (probs - one_hot).mean(axis=0),
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads[-2].numpy(), hidden.T @ (probs - one_hot) / len(y),
                               rtol=1e-4, atol=1e-6)


def test_advanced_quickstart_trains_its_conv_model():
    g = run_program("advanced_quickstart")
    first, last = g["epoch_losses"]
    assert np.isfinite(first) and last < first
    assert float(g["test_accuracy"].result()) > 0.5  # ten bars, one row per label


def test_fgsm_perturbation_raises_the_loss():
    g = run_program("adversarial_fgsm")
    image, label, pert = g["image"], g["label"], g["perturbations"].numpy()
    assert pert.shape == (1, 224, 224, 3) and set(np.unique(pert)) <= {-1.0, 0.0, 1.0}
    loss = g["loss_object"]
    model = g["pretrained_model"]
    before = float(loss(label, model(image)))
    after = float(loss(label, model(image + 1e-3 * pert)))
    assert after > before  # the signed gradient is an ascent direction


def test_dcgan_trains_and_restores_its_checkpoint():
    g = run_program("dcgan")
    for model in (g["generator"], g["discriminator"]):
        assert all(np.isfinite(v.numpy()).all() for v in model.trainable_variables)
    assert int(g["generator_optimizer"].iterations.numpy()) == 2  # 32 images, batch 16
    noise = g["seed"]
    fake = g["generator"](noise, training=False)
    real_out = g["discriminator"](g["train_images"][:16], training=False)
    assert np.isfinite(float(g["discriminator_loss"](real_out, g["discriminator"](fake))))


def test_cvae_elbo_is_finite():
    g = run_program("cvae")
    assert len(g["elbos"]) == 2 and all(np.isfinite(g["elbos"])) and max(g["elbos"]) < 0


@pytest.mark.slow  # a gradient penalty through four 5x5 convolutions, four steps of it
def test_wgan_gp_fit_with_its_gradient_penalty():
    g = run_program("wgan_gp")
    history = g["history"].history
    assert np.isfinite(history["d_loss"][0]) and np.isfinite(history["g_loss"][0])
    wgan, real = g["wgan"], g["train_images"][:4]
    fake = wgan.generator(gt.random.normal((4, g["noise_dim"])), training=False)
    assert np.isfinite(float(wgan.gradient_penalty(4, real, fake)))


def test_actor_critic_runs_its_episodes():
    g = run_program("actor_critic")
    rewards = list(g["episodes_reward"])
    assert len(rewards) == 3 and all(1 <= r <= 40 for r in rewards)
    assert int(g["optimizer"].iterations.numpy()) == 3


def test_actor_critic_expected_return_matches_numpy():
    g = run_program("actor_critic")
    rewards = gt.constant([1, 1, 1, 1], dtype=gt.int32)
    returns = g["get_expected_return"](rewards, 0.5, standardize=False).numpy()
    np.testing.assert_allclose(returns, [1.875, 1.75, 1.5, 1.0])


def test_ddpg_keeps_float32_weights_and_learns():
    g = run_program("ddpg_pendulum")
    assert len(g["ep_reward_list"]) == 2 and np.all(np.isfinite(g["ep_reward_list"]))
    for model in (g["actor_model"], g["critic_model"]):
        assert all(v.dtype == np.float32 for v in model.trainable_variables)
    assert int(g["critic_optimizer"].iterations.numpy()) == 24  # one update per step
    assert os.path.exists(os.path.join(g["weights_dir"], "pendulum_actor.h5.index"))


def test_ppo_policy_updates_are_finite():
    pytest.importorskip("scipy")  # the program's own discounted sums use scipy.signal
    g = run_program("ppo_cartpole")
    assert g["kls"] and all(np.isfinite(g["kls"]))
    assert int(g["value_optimizer"].iterations.numpy()) == 8  # 4 per epoch, 2 epochs


def test_pinn_derivatives_match_finite_differences_and_lbfgs_lowers_the_loss():
    pytest.importorskip("scipy")  # the program trains with scipy.optimize's L-BFGS
    g = run_program("pinn_burgers")
    network = g["network"]
    tx = np.array([[0.3, 0.2], [0.7, -0.5]], np.float32)
    u, du_dt, du_dx, d2u_dx2 = g["GradientLayer"](network)(gt.constant(tx))
    h = np.float32(1e-2)

    def net(points):
        return network(points).numpy()[:, 0].astype(np.float64)

    step_t, step_x = np.array([h, 0], np.float32), np.array([0, h], np.float32)
    np.testing.assert_allclose(du_dt.numpy()[:, 0], (net(tx + step_t) - net(tx - step_t))
                               / (2 * h), rtol=2e-2, atol=2e-3)
    np.testing.assert_allclose(du_dx.numpy()[:, 0], (net(tx + step_x) - net(tx - step_x))
                               / (2 * h), rtol=2e-2, atol=2e-3)
    second = (net(tx + step_x) - 2 * net(tx) + net(tx - step_x)) / h**2
    np.testing.assert_allclose(d2u_dx2.numpy()[:, 0], second, rtol=5e-2, atol=5e-2)
    lbfgs = g["lbfgs"]
    final_loss, grads = lbfgs.evaluate(np.concatenate(
        [w.flatten() for w in lbfgs.model.get_weights()]))
    assert np.isfinite(final_loss) and np.isfinite(grads).all() and grads.any()


def test_text_generation_trains_and_samples():
    # needs `super().__init__(self)` in a keras.Model subclass (the tutorial's MyModel)
    g = run_program("text_generation")
    assert np.isfinite(g["history"].history["loss"][0])
    assert g["generated"].startswith("ROMEO:") and len(g["generated"]) == 11
    assert g["custom_losses"] and all(np.isfinite(g["custom_losses"]))


def test_keras_io_vae_trains_with_its_own_metrics():
    g = run_program("vae_keras_io")
    history = g["history"].history
    assert set(history) == {"loss", "reconstruction_loss", "kl_loss"}
    for values in history.values():
        assert len(values) == 2 and np.all(np.isfinite(values))
    np.testing.assert_allclose(history["loss"], np.add(history["reconstruction_loss"],
                                                       history["kl_loss"]), rtol=1e-5)
    assert g["digit"].shape == (28, 28) and g["z_mean"].shape == (8, 2)
