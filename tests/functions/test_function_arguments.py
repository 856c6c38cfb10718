"""gt.function takes TF 2.21's `tf.function` arguments: `gt.function(f, jit_compile=True)`
raised TypeError. The flags that mean nothing here (gradtape compiles every trace, has
no AutoGraph or XLA attributes) are accepted and change nothing; the deprecated
aliases warn as TF's."""

import inspect

import numpy as np
import pytest

import gradtape as gt

# tf.function's parameters in TF 2.21, in order.
TF_PARAMETERS = ["func", "input_signature", "autograph", "jit_compile", "reduce_retracing",
                 "experimental_implements", "experimental_autograph_options",
                 "experimental_attributes", "experimental_relax_shapes",
                 "experimental_compile", "experimental_follow_type_hints"]

FLAGS = [
    {"jit_compile": True}, {"jit_compile": False}, {"autograph": False},
    {"reduce_retracing": True}, {"experimental_implements": "embedded_matmul"},
    {"experimental_autograph_options": ()},
    {"experimental_attributes": {"api_implements": "my_f"}},
    {"experimental_follow_type_hints": True},
    {"jit_compile": True, "reduce_retracing": True, "autograph": True},
]


def _f(x):
    return gt.reduce_sum(x * x * x)


X = np.array([1.5, -2.0, 0.5])


def _check_value_and_gradient(f):
    x = gt.constant(X)
    for _ in range(3):  # traced once, then the compiled trace
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        np.testing.assert_allclose(y.numpy(), np.sum(X ** 3), rtol=1e-12)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), 3 * X ** 2, rtol=1e-12)


def test_the_signature_is_tfs():
    assert list(inspect.signature(gt.function).parameters)[:len(TF_PARAMETERS)] == \
        TF_PARAMETERS


@pytest.mark.parametrize("flags", FLAGS, ids=lambda flags: ",".join(flags))
def test_tf_flags_are_accepted_in_every_form(flags):
    _check_value_and_gradient(gt.function(_f, **flags))

    @gt.function(**flags)
    def decorated(x):
        return _f(x)

    _check_value_and_gradient(decorated)
    _check_value_and_gradient(gt.function(**flags)(_f))


def test_flags_reach_methods():
    class Model(gt.Module):
        @gt.function(jit_compile=True, reduce_retracing=True)
        def __call__(self, x):
            return _f(x)

    _check_value_and_gradient(Model())


def test_input_signature_may_be_positional_as_in_tf():
    f = gt.function(_f, [gt.TensorSpec([None], gt.float64)], jit_compile=True)
    _check_value_and_gradient(f)
    with pytest.raises(TypeError):
        f(gt.constant([1.0, 2.0], gt.float32))


@pytest.mark.parametrize("argument, replacement, value", [
    ("experimental_relax_shapes", "reduce_retracing", True),
    ("experimental_compile", "jit_compile", True),
])
def test_deprecated_aliases_warn_and_work(argument, replacement, value):
    with pytest.warns(DeprecationWarning, match=f"`{argument}` is deprecated.*`{replacement}`"):
        f = gt.function(_f, **{argument: value})
    _check_value_and_gradient(f)


def test_relax_shapes_stands_for_reduce_retracing():
    with pytest.warns(DeprecationWarning):
        f = gt.function(_f, experimental_relax_shapes=True)
    assert f.reduce_retracing is True
    assert gt.function(_f, reduce_retracing=True).reduce_retracing is True
