"""NumPy's random functions handed a tensor draw as with the tensor's array.

Before, ``np.random.choice(n, p=np.squeeze(action_probs))`` (the actor-critic pattern)
raised "probabilities do not sum to 1" for float32 probabilities NumPy accepts as an
ndarray: NumPy checks the sum with p's own float tolerance only for an ndarray, and
``np.squeeze`` of a tensor is a tensor.
"""

import warnings

import numpy as np
import pytest

import gradtape as gt


def _float32_softmax() -> np.ndarray:
    """Float32 softmax probabilities whose float64 sum misses 1 by more than float64's
    tolerance (1.5e-8) and less than float32's (3.5e-4): NumPy accepts them as an
    ndarray and rejected them as anything else."""
    rng = np.random.default_rng(1)
    for _ in range(10_000):
        x = rng.normal(size=7).astype(np.float32)
        e = np.exp(x - x.max())
        p = (e / e.sum()).astype(np.float32)
        if 1e-7 < abs(p.astype(np.float64).sum() - 1.0) < 1e-4:
            return p
    raise AssertionError("no such probabilities found")


P = _float32_softmax()


def _logits() -> np.ndarray:
    return np.log(P)[None, :]  # softmax(log P) = P up to float32 rounding


@pytest.mark.parametrize("size, replace", [(None, True), (20, True), (4, False)])
def test_choice_with_tensor_probabilities_draws_as_the_array(size, replace):
    p = gt.constant(P)
    np.random.seed(3)
    expected = np.random.choice(7, size, replace, P)
    np.random.seed(3)
    drawn = np.random.choice(7, size=size, replace=replace, p=p)
    np.testing.assert_array_equal(drawn, expected)
    np.random.seed(3)
    np.testing.assert_array_equal(np.random.choice(7, size, replace, p), expected)


def test_choice_of_a_tensor_population_with_tensor_probabilities():
    population = gt.constant([10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0])
    np.random.seed(5)
    expected = np.random.choice(population.numpy(), 6, p=P)
    np.random.seed(5)
    drawn = np.random.choice(population, 6, p=gt.constant(P))
    assert isinstance(drawn, np.ndarray) and drawn.dtype == np.float32
    np.testing.assert_array_equal(drawn, expected)


def test_actor_critic_sampling_inside_a_tape_warns_at_the_users_line():
    """keras-io's actor-critic: the action is drawn from the model's output inside the
    tape; the draw drops no gradient the program needs, and the warning names the line."""
    logits = gt.Variable(_logits())
    np.random.seed(11)
    probs = gt.nn.softmax(gt.constant(_logits())).numpy()
    expected = np.random.choice(7, p=np.squeeze(probs))
    np.random.seed(11)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with gt.GradientTape() as tape:
            action_probs = gt.nn.softmax(logits)
            squeezed = np.squeeze(action_probs)
            action = np.random.choice(7, p=squeezed)  # the line the warning names
            loss = -gt.math.log(squeezed[action])
    assert isinstance(squeezed, gt.Tensor)
    assert action == expected
    drops = [w for w in caught if issubclass(w.category, gt.GradientDroppedWarning)]
    assert len(drops) == 1 and "np.random.choice converted" in str(drops[0].message)
    assert drops[0].filename == __file__
    line = open(__file__).read().splitlines()[drops[0].lineno - 1]
    assert "action = np.random.choice(7, p=squeezed)" in line
    grad = tape.gradient(loss, logits).numpy()
    onehot = np.eye(7)[action]
    np.testing.assert_allclose(grad[0], squeezed.numpy() - onehot, atol=1e-6)


def test_choice_raises_numpys_error_for_probabilities_the_array_fails_too():
    bad = np.array([0.5, 0.6], np.float32)
    with pytest.raises(ValueError, match="probabilities do not sum to 1"):
        np.random.choice(2, p=bad)
    with pytest.raises(ValueError, match="probabilities do not sum to 1"):
        np.random.choice(2, p=gt.constant(bad))


def test_choice_without_tensors_is_numpys_own():
    np.random.seed(2)
    expected = [np.random.mtrand._rand.choice(9, 3) for _ in range(2)]
    np.random.seed(2)
    drawn = [np.random.choice(9, 3) for _ in range(2)]
    np.testing.assert_array_equal(drawn, expected)
    assert np.random.choice.__doc__ == np.random.mtrand._rand.choice.__doc__


# The siblings: NumPy's random functions and methods that take an array and already drew
# as with the array (they convert with the array's values and check no dtype tolerance).
SIBLINGS = {
    "multinomial": lambda r, p: r.multinomial(10, p, size=3),
    "dirichlet": lambda r, p: r.dirichlet(p, size=2),
    "permutation": lambda r, p: r.permutation(p),
    "choice of a population": lambda r, p: r.choice(p, 5),
    "binomial": lambda r, p: r.binomial(10, p),
    "normal": lambda r, p: r.normal(p, 1.0),
}


@pytest.mark.parametrize("name", sorted(SIBLINGS))
@pytest.mark.parametrize("make", [np.random.RandomState, np.random.default_rng],
                         ids=["RandomState", "Generator"])
def test_random_methods_draw_as_with_the_array(name, make):
    draw = SIBLINGS[name]
    np.testing.assert_array_equal(draw(make(7), gt.constant(P)), draw(make(7), P))


@pytest.mark.parametrize("name", sorted(SIBLINGS))
def test_module_level_random_functions_draw_as_with_the_array(name):
    draw = SIBLINGS[name]
    np.random.seed(7)
    expected = draw(np.random, P)
    np.random.seed(7)
    np.testing.assert_array_equal(draw(np.random, gt.constant(P)), expected)


@pytest.mark.filterwarnings("ignore:you are shuffling:UserWarning")
def test_shuffle_of_a_tensor_raises_as_in_tf():
    """Tensors are immutable (TF's too): shuffling one in place raises TypeError."""
    with pytest.raises(TypeError, match="does not support item assignment"):
        np.random.default_rng(0).shuffle(gt.constant([1.0, 2.0, 3.0]))
