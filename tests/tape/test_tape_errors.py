"""Misuse of GradientTape raises what TensorFlow raises, with a message saying what to do."""

import numpy as np
import pytest

import gradtape as gt


def recorded(persistent=False, shape=()):
    """A tape that recorded y = x * x for a watched x."""
    x = gt.constant(np.full(shape, 3.0, np.float32))
    tape = gt.GradientTape(persistent=persistent)
    with tape:
        tape.watch(x)
        y = x * x
    return tape, x, y


# --- gradient ----------------------------------------------------------------------------

def test_second_gradient_on_a_non_persistent_tape():
    tape, x, y = recorded()
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="only be used to compute one set of gradients"
                       r"(.|\n)*persistent=True"):
        tape.gradient(y, x)


def test_jacobian_after_gradient_on_a_non_persistent_tape():
    tape, x, y = recorded()
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.jacobian(y, x)


def test_batch_jacobian_after_gradient_on_a_non_persistent_tape():
    tape, x, y = recorded(shape=(2, 2))
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.batch_jacobian(y, x)


@pytest.mark.parametrize("method", ["gradient", "jacobian", "batch_jacobian"])
def test_asking_a_tape_that_never_recorded(method):
    x = gt.constant(np.ones((2, 2), np.float32))
    with pytest.raises(RuntimeError, match="has not recorded anything.*with tape:"):
        getattr(gt.GradientTape(persistent=True), method)(x, x)


@pytest.mark.parametrize("method", ["gradient", "inspect"])
def test_inspect_refuses_a_tape_just_as_gradient_does(method):
    x = gt.constant(np.ones(2, np.float32))
    with pytest.raises(RuntimeError, match="has not recorded anything"):
        getattr(gt.GradientTape(), method)(x, x)
    tape, x, y = recorded()
    assert "def backward(" in tape.inspect(y, x).source  # inspect does not use it up
    assert tape.gradient(y, x).numpy() == 6.0
    with pytest.raises(RuntimeError, match="only be used to compute one set of gradients"):
        getattr(tape, method)(y, x)


def test_dict_sources_with_keys_that_do_not_sort():
    # TF's nest sorts dict keys and raises TypeError for keys that do not compare.
    a, b = gt.Variable(2.0), gt.Variable(3.0)
    with gt.GradientTape() as tape:
        z = a * b
    with pytest.raises(TypeError, match="sortable keys.*int, str"):
        tape.gradient(z, {"a": a, 1: b})
    grads = tape.gradient(z, {"b": b, "a": a})  # the failed call did not use the tape up
    assert list(grads) == ["b", "a"] and grads["a"].numpy() == 3.0


def test_target_none():
    tape, x, _ = recorded()
    with pytest.raises(TypeError, match="target.*received None"):
        tape.gradient(None, x)


def test_a_failed_call_does_not_use_the_tape_up():
    tape, x, y = recorded()
    with pytest.raises(TypeError):
        tape.gradient(None, x)
    with pytest.raises(ValueError):
        tape.gradient(y, x, unconnected_gradients="bad")
    assert tape.gradient(y, x).numpy() == 6.0


@pytest.mark.parametrize("target", [3.0, np.ones(2), [None]])
def test_non_tensor_targets(target):
    tape, x, _ = recorded()
    with pytest.raises(TypeError, match="Targets must be gradtape Tensors.*inside the tape"):
        tape.gradient(target, x)


@pytest.mark.parametrize("sources", [None, 3.0, np.ones(3), [None]])
def test_non_tensor_sources(sources):
    tape, _, y = recorded()
    with pytest.raises(TypeError, match="Sources must be gradtape Tensors.*Pass the tensors"):
        tape.gradient(y, sources)


@pytest.mark.parametrize("mode", ["zeros", "ZERO", None, 1])
def test_bad_unconnected_gradients(mode):
    tape, x, y = recorded()
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients.*'zero'"):
        tape.gradient(y, x, unconnected_gradients=mode)


def test_output_gradients_of_the_wrong_shape():
    tape, x, y = recorded(shape=(2,))
    with pytest.raises(ValueError, match=r"shape \(3,\).*target of shape \(2,\)"):
        tape.gradient(y, x, output_gradients=gt.constant([1.0, 2.0, 3.0]))


def test_output_gradients_of_the_wrong_count():
    tape, x, y = recorded()
    with pytest.raises(ValueError, match="one output gradient .* per target"):
        tape.gradient([y, y], x, output_gradients=[gt.constant(1.0)])


def test_complex_output_gradient_for_a_real_target():
    tape, x, y = recorded()
    with pytest.raises(TypeError, match="real output gradient"):
        tape.gradient(y, x, output_gradients=gt.constant(1j))


# --- the tape's context ----------------------------------------------------------------

def test_re_entering_an_active_tape():
    tape = gt.GradientTape()
    with tape:
        with pytest.raises(ValueError, match="re-enter an already-active tape.*second"):
            with tape:
                pass


@pytest.mark.parametrize("value", [3.0, np.float32(3.0), None, np.ones(2)])
def test_watching_a_non_tensor(value):
    with gt.GradientTape() as tape:
        with pytest.raises(ValueError, match="not a gradtape Tensor.*gt.constant"):
            tape.watch(value)


def test_watching_a_structure_with_a_non_tensor():
    with gt.GradientTape() as tape:
        with pytest.raises(ValueError, match="of type 'float'"):
            tape.watch([gt.constant(1.0), 2.0])


def test_stop_recording_on_a_tape_never_entered():
    with pytest.raises(RuntimeError, match="not recording.*inside the tape's `with` block"):
        with gt.GradientTape().stop_recording():
            pass


def test_stop_recording_after_the_context_exited():
    tape = gt.GradientTape()
    with tape:
        pass
    with pytest.raises(ValueError, match="Tape is not recording.*inside the tape's `with`"):
        with tape.stop_recording():
            pass


def test_stop_recording_twice():
    with gt.GradientTape() as tape:
        with tape.stop_recording():
            with pytest.raises(ValueError, match="Tape is not recording"):
                with tape.stop_recording():
                    pass


def test_stop_recording_after_the_one_gradient_was_taken():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.gradient(y, x)
        with pytest.raises(RuntimeError, match="stop recording a tape which is not recording"):
            with tape.stop_recording():
                pass


@pytest.mark.parametrize("when", ["never entered", "after exit", "while stopped"])
def test_reset_when_not_recording(when):
    tape = gt.GradientTape()
    if when == "never entered":
        with pytest.raises(ValueError, match="Tape is not recording"):
            tape.reset()
        return
    if when == "after exit":
        with tape:
            pass
        with pytest.raises(ValueError, match="Tape is not recording"):
            tape.reset()
        return
    with tape:
        with tape.stop_recording():
            with pytest.raises(ValueError, match="Tape is not recording"):
                tape.reset()


def test_reset_after_a_non_persistent_gradient_inside_the_context():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.gradient(y, x)  # the used-up tape stops recording
        with pytest.raises(ValueError, match="Tape is not recording"):
            tape.reset()


def test_stop_recording_restores_the_tape_after_an_exception():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(KeyError):
            with tape.stop_recording():
                raise KeyError("boom")
        y = x * x
    assert tape.gradient(y, x).numpy() == 6.0


# --- jacobian and batch_jacobian -----------------------------------------------------------

def test_jacobian_with_pfor_off_on_a_non_persistent_tape():
    tape, x, y = recorded(shape=(2,))
    with pytest.raises(RuntimeError, match="persistent=True to compute the jacobian with "
                       "experimental_use_pfor set to False"):
        tape.jacobian(y, x, experimental_use_pfor=False)


def test_batch_jacobian_with_pfor_off_on_a_non_persistent_tape():
    tape, x, y = recorded(shape=(2, 2))
    with pytest.raises(RuntimeError, match="persistent=True to compute the batch_jacobian"):
        tape.batch_jacobian(y, x, experimental_use_pfor=False)


@pytest.mark.parametrize("target", [None, "list"])
def test_jacobian_needs_one_tensor_target(target):
    tape, x, y = recorded(shape=(2,))
    with pytest.raises(TypeError, match="one Tensor as target.*gt.stack"):
        tape.jacobian([y, y] if target == "list" else None, x)


def test_jacobian_bad_unconnected_gradients():
    tape, x, y = recorded(shape=(2,))
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients"):
        tape.jacobian(y, x, unconnected_gradients="bad")


@pytest.mark.parametrize("target_shape, source_shape, which", [
    ((2,), (2, 2), "target"),
    ((2, 2), (2,), "source"),
])
def test_batch_jacobian_rank(target_shape, source_shape, which):
    x = gt.constant(np.ones(source_shape, np.float32))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reshape(gt.reduce_sum(x) * np.ones(target_shape, np.float32), target_shape)
    with pytest.raises(ValueError, match=f"must have rank at least 2.*{which} of shape "
                       r"\[batch, ...\].*jacobian"):
        tape.batch_jacobian(y, x)


def test_batch_jacobian_first_dimension_mismatch():
    x = gt.constant(np.ones((2, 2), np.float32))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.concatenate([x, x], axis=0)
    with pytest.raises(ValueError, match=r"Need first dimension of target shape \(\(4, 2\)\) "
                       r"and source shape \(\(2, 2\)\) to match"):
        tape.batch_jacobian(y, x)


def test_batch_jacobian_rank_is_checked_before_pfor():
    # TF checks shapes first: the ValueError wins over the persistence RuntimeError.
    tape, x, y = recorded(shape=(2,))
    with pytest.raises(ValueError, match="rank at least 2"):
        tape.batch_jacobian(y, x, experimental_use_pfor=False)


def test_batch_jacobian_source_must_be_a_tensor():
    tape, x, y = recorded(shape=(2, 2))
    with pytest.raises(TypeError, match="Sources must be gradtape Tensors"):
        tape.batch_jacobian(y, [x])
