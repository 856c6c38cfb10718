"""The load status of gt.train.Checkpoint.restore asserts what TF's asserts: a variable
the checkpoint has no value for fails assert_existing_objects_matched and
assert_consumed (it silently kept its initial value before), a saved value without a
variable fails only assert_consumed (loading part of a larger checkpoint), and
restore(None) fails every assertion (a run that found no checkpoint must not pass
assert_consumed and train from scratch in silence)."""

import gc
import weakref

import numpy as np
import pytest

import gradtape as gt


class Lazy(gt.Module):
    """Creates its variables on the first call, as a Keras layer in build."""

    def __init__(self, extra=False):
        super().__init__()
        self.extra = extra
        self.w = None

    def __call__(self, x):
        if self.w is None:
            self.w = gt.Variable(np.full((x.shape[-1], 2), 3.0, np.float32), name="w")
            if self.extra:
                self.b = gt.Variable(np.zeros(2, np.float32), name="b")
        return x @ self.w


def _write(tmp_path, **roots):
    return gt.train.Checkpoint(**roots).write(str(tmp_path / "c"))


def test_a_variable_without_a_saved_value_fails_both_assertions(tmp_path):
    path = _write(tmp_path, a=gt.Variable([1.0, 2.0]))
    a, b = gt.Variable([0.0, 0.0]), gt.Variable([5.0])
    status = gt.train.Checkpoint(a=a, b=b).restore(path)
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(b.numpy(), [5.0])  # untouched: nothing to restore
    with pytest.raises(AssertionError, match=r"not bound.*'b/\.ATTRIBUTES/VARIABLE_VALUE'"):
        status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match=r"not bound.*'b/\.ATTRIBUTES"):
        status.assert_consumed()
    assert status.expect_partial() is status


def test_loading_part_of_a_larger_checkpoint_matches_the_existing_objects(tmp_path):
    # TF's documented use: a training checkpoint (model and optimizer state) loaded
    # into a program that has only the model.
    model = Lazy()
    model(gt.ones((1, 3)))
    path = _write(tmp_path, model=model, optimizer_state=[gt.Variable([7.0])])
    fresh = Lazy()
    fresh(gt.ones((1, 3)))
    fresh.w.assign(np.zeros((3, 2), np.float32))
    status = gt.train.Checkpoint(model=fresh).restore(path)
    assert status.assert_existing_objects_matched() is status  # raised before
    np.testing.assert_array_equal(fresh.w.numpy(), np.full((3, 2), 3.0))
    with pytest.raises(AssertionError, match="optimizer_state/0"):
        status.assert_consumed()


def test_a_variable_created_after_the_restore_is_checked_when_asked(tmp_path):
    saved = Lazy()
    saved(gt.ones((1, 3)))
    path = _write(tmp_path, model=saved)
    model = Lazy(extra=True)  # its build also makes `b`, which the file lacks
    checkpoint = gt.train.Checkpoint(model=model)
    status = checkpoint.restore(path)
    status.assert_existing_objects_matched()  # nothing built yet: nothing unmatched
    model(gt.ones((1, 3)))
    np.testing.assert_array_equal(model.w.numpy(), np.full((3, 2), 3.0))
    with pytest.raises(AssertionError, match="model/b/"):
        status.assert_existing_objects_matched()


def test_a_status_keeps_no_model_alive(tmp_path):
    saved = Lazy()
    saved(gt.ones((1, 3)))
    path = _write(tmp_path, model=saved)
    model = Lazy()
    status = gt.train.Checkpoint(model=model).restore(path)
    model_ref = weakref.ref(model)
    del model
    gc.collect()
    assert model_ref() is None
    with pytest.raises(AssertionError, match="Unresolved"):
        status.assert_consumed()
    status.assert_existing_objects_matched()  # what existed at the restore matched


def test_a_checkpoint_written_without_its_save_counter_is_consumed(tmp_path):
    # write() before any save() does not save the counter (TF's); restoring creates
    # it, and the checkpoint's own counter is not a variable of the user's program.
    path = _write(tmp_path, v=gt.Variable([1.0]))
    v = gt.Variable([0.0])
    checkpoint = gt.train.Checkpoint(v=v)
    checkpoint.restore(path).assert_consumed()
    assert checkpoint.save_counter.numpy() == 0


def test_restore_none_fails_every_assertion_as_tf():
    checkpoint = gt.train.Checkpoint(v=gt.Variable([1.0]))
    status = checkpoint.restore(None)
    message = r"No checkpoint specified \(save_path=None\); nothing is being restored"
    for assertion in (status.assert_consumed, status.assert_existing_objects_matched,
                      status.assert_nontrivial_match):
        with pytest.raises(AssertionError, match=message):
            assertion()
    assert status.expect_partial() is status
    status.initialize_or_restore()  # eager: nothing to run
    np.testing.assert_array_equal(checkpoint._roots["v"].numpy(), [1.0])


def test_latest_checkpoint_of_an_empty_directory_fails_assert_consumed(tmp_path):
    checkpoint = gt.train.Checkpoint(v=gt.Variable([1.0]))
    with pytest.raises(AssertionError, match="No checkpoint specified"):
        checkpoint.restore(gt.train.latest_checkpoint(str(tmp_path))).assert_consumed()


def test_assert_nontrivial_match_needs_one_restored_value(tmp_path):
    path = gt.train.Checkpoint(other=gt.Variable([1.0])).save(str(tmp_path / "c"))
    status = gt.train.Checkpoint(v=gt.Variable([0.0])).restore(path)
    with pytest.raises(AssertionError, match="Nothing except the root object matched"):
        status.assert_nontrivial_match()  # only save_counter matched
    v = gt.Variable([0.0])
    gt.train.Checkpoint(other=v).restore(path).assert_nontrivial_match()
    np.testing.assert_array_equal(v.numpy(), [1.0])


def test_optimizer_variables_saved_as_a_list_still_round_trip(tmp_path):
    # The way the previous release's error message gave keeps Adam's moments and step.
    model = gt.keras.Sequential([gt.keras.layers.Dense(2)])
    model(np.ones((1, 3), np.float32))
    opt = gt.keras.optimizers.Adam(0.1)
    opt.build(model.trainable_variables)
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(model(np.ones((1, 3), np.float32)))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                            model.trainable_variables))
    path = gt.train.Checkpoint(model=model, optimizer_variables=opt.variables).write(
        str(tmp_path / "c"))
    fresh = gt.keras.Sequential([gt.keras.layers.Dense(2)])
    fresh(np.ones((1, 3), np.float32))
    fresh_opt = gt.keras.optimizers.Adam(0.1)
    fresh_opt.build(fresh.trainable_variables)
    gt.train.Checkpoint(model=fresh, optimizer_variables=fresh_opt.variables).restore(
        path).assert_consumed()
    assert int(fresh_opt.iterations.numpy()) == 1
    for got, want in zip(fresh_opt.variables, opt.variables):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
