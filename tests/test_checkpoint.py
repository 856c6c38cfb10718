"""gt.train.Checkpoint restores exactly what it saved or raises as TF does: dtypes and
shapes, the save counter, names that would collide, deferred values that die with their
module. (The files themselves: test_checkpoint_files.py.)"""

import gc
import weakref

import numpy as np
import pytest

import gradtape as gt
from gradtape.api import module as module_state


class Lazy(gt.Module):
    """Creates its variable on the first call, as a Keras layer in build."""

    def __init__(self):
        super().__init__()
        self.w = None

    def __call__(self, x):
        if self.w is None:
            self.w = gt.Variable(np.zeros((x.shape[-1], 4), np.float32), name="w")
        return x @ self.w


# --- item 5: dtypes and shapes --------------------------------------------------------------

@pytest.mark.parametrize("saved, restored_dtype", [
    (np.int64(2**40), np.int32),            # was restored as 0
    (np.array([1.5, -2.7]), np.int32),      # was restored as [1, -2]
    (np.float64(1e5), np.float16),          # was restored as inf
    (np.array([1.0, 2.0], np.float32), np.float64),  # widening is refused too (TF)
    (np.array([1, 2], np.int32), np.float32),
])
def test_restore_into_another_dtype_raises_naming_both(tmp_path, saved, restored_dtype):
    path = gt.train.Checkpoint(v=gt.Variable(saved)).write(str(tmp_path / "c"))
    target = gt.Variable(np.zeros(np.shape(saved), restored_dtype))
    with pytest.raises(gt.errors.InvalidArgumentError) as info:
        gt.train.Checkpoint(v=target).restore(path)
    message = str(info.value)
    assert np.dtype(restored_dtype).name in message and saved.dtype.name in message
    assert "v/.ATTRIBUTES/VARIABLE_VALUE" in message
    np.testing.assert_array_equal(target.numpy(), np.zeros(np.shape(saved)))


def test_restore_into_another_shape_raises_naming_both(tmp_path):
    path = gt.train.Checkpoint(v=gt.Variable(np.ones((2, 3)))).write(str(tmp_path / "c"))
    target = gt.Variable(np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"shape \(2, 3\).*shape \(3, 2\)"):
        gt.train.Checkpoint(v=target).restore(path)


def test_a_refused_restore_assigns_nothing(tmp_path):
    # "a" is restored before "b" in key order: "b"'s dtype must stop both.
    path = gt.train.Checkpoint(a=gt.Variable([1.0, 2.0]),
                               b=gt.Variable(np.int64(7))).write(str(tmp_path / "c"))
    a, b = gt.Variable([0.0, 0.0]), gt.Variable(np.int32(0))
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.train.Checkpoint(a=a, b=b).restore(path)
    np.testing.assert_array_equal(a.numpy(), [0.0, 0.0])


def test_a_deferred_value_of_another_dtype_raises_when_the_variable_is_made(tmp_path):
    class Float64Lazy(gt.Module):
        def build(self):
            self.w = gt.Variable(np.zeros((3, 4), np.float64), name="w")

    saved = Lazy()
    saved(gt.ones((2, 3)))
    path = gt.train.Checkpoint(model=saved).write(str(tmp_path / "c"))
    fresh = Float64Lazy()
    gt.train.Checkpoint(model=fresh).restore(path)
    with pytest.raises(gt.errors.InvalidArgumentError, match="float64.*float32"):
        fresh.build()


def test_restored_values_are_exact(tmp_path):
    values = {"i8": np.int8(-128), "u64": np.uint64(2**64 - 1), "f16": np.float16(65504),
              "c128": np.complex128(1 + 2j), "b": np.array([True, False]),
              "f64": np.array([[1e300, -0.0], [np.nan, np.inf]])}
    path = gt.train.Checkpoint(**{k: gt.Variable(v) for k, v in values.items()}).write(
        str(tmp_path / "c"))
    targets = {k: gt.Variable(np.zeros_like(v)) for k, v in values.items()}
    gt.train.Checkpoint(**targets).restore(path).assert_consumed()
    for k, v in values.items():
        assert targets[k].numpy().dtype == np.asarray(v).dtype
        np.testing.assert_array_equal(targets[k].numpy(), v)


# --- item 6: save_counter -------------------------------------------------------------------

def test_save_after_restoring_the_latest_continues_the_numbering(tmp_path):
    prefix = str(tmp_path / "ckpt")
    v = gt.Variable([1.0])
    ckpt = gt.train.Checkpoint(v=v)
    for i in range(3):
        v.assign([float(i + 1)])
        ckpt.save(prefix)
    new_v = gt.Variable([0.0])
    new = gt.train.Checkpoint(v=new_v)
    new.restore(gt.train.latest_checkpoint(str(tmp_path))).assert_consumed()
    assert int(new.save_counter.numpy()) == 3
    new_v.assign([40.0])
    assert new.save(prefix) == prefix + "-4"  # was ckpt-1, over the first save
    assert gt.train.latest_checkpoint(str(tmp_path)) == prefix + "-4"
    key = "v/.ATTRIBUTES/VARIABLE_VALUE"
    np.testing.assert_array_equal(gt.train.load_variable(prefix + "-1", key), [1.0])
    np.testing.assert_array_equal(gt.train.load_variable(prefix + "-4", key), [40.0])


def test_save_counter_is_saved_once_it_exists(tmp_path):
    ckpt = gt.train.Checkpoint(v=gt.Variable(1.0))
    keys = [k for k, _ in gt.train.list_variables(ckpt.write(str(tmp_path / "w")))]
    assert "save_counter/.ATTRIBUTES/VARIABLE_VALUE" not in keys  # as TF's write
    path = ckpt.save(str(tmp_path / "s"))
    assert ("save_counter/.ATTRIBUTES/VARIABLE_VALUE", []) in gt.train.list_variables(path)
    assert gt.train.load_variable(path, "save_counter/.ATTRIBUTES/VARIABLE_VALUE") == 1
    with pytest.raises(ValueError, match="save_counter"):
        gt.train.Checkpoint(save_counter=gt.Variable(1))


# --- item 8: names that collide -------------------------------------------------------------

def test_int_and_str_keys_of_one_name_raise(tmp_path):
    ckpt = gt.train.Checkpoint(d={0: gt.Variable(1.0), "0": gt.Variable(2.0)})
    with pytest.raises(ValueError, match="non-string key 0"):
        ckpt.write(str(tmp_path / "c"))
    with pytest.raises(ValueError, match="non-string key"):
        ckpt.save(str(tmp_path / "c"))
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("structure", [
    {1: gt.Variable(1.0)},
    {"layers": {(1, 2): [gt.Variable(1.0)]}},
    {"x": {None: gt.Variable(1.0)}},
])
def test_non_string_keys_on_the_way_to_a_variable_raise_as_tf(tmp_path, structure):
    with pytest.raises(ValueError, match="non-string key"):
        gt.train.Checkpoint(d=structure).write(str(tmp_path / "c"))


def test_keys_with_slashes_and_dots_do_not_collide(tmp_path):
    values = {"a/b": 1.0, "a.Sb": 2.0, ".ATTRIBUTES": 3.0, "a": {"b": 4.0}, "a.": 5.0}

    def variables(scale):
        return {k: ({"b": gt.Variable(v["b"] * scale)} if isinstance(v, dict)
                    else gt.Variable(v * scale)) for k, v in values.items()}

    saved = variables(1.0)
    path = gt.train.Checkpoint(d=saved).write(str(tmp_path / "c"))
    assert len(gt.train.list_variables(path)) == 1 + 5
    restored = variables(0.0)
    gt.train.Checkpoint(d=restored).restore(path).assert_consumed()
    assert float(restored["a/b"].numpy()) == 1.0 and float(restored["a.Sb"].numpy()) == 2.0
    assert float(restored[".ATTRIBUTES"].numpy()) == 3.0
    assert float(restored["a"]["b"].numpy()) == 4.0 and float(restored["a."].numpy()) == 5.0


# --- item 10: deferred values die with their module -----------------------------------------

def _pending_arrays():
    """The arrays the table of deferred restores holds (whatever its layout)."""
    found, stack = [], list(module_state.deferred_restores.values())
    while stack:
        obj = stack.pop()
        if isinstance(obj, np.ndarray):
            found.append(obj)
        elif isinstance(obj, (tuple, list)):
            stack.extend(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif getattr(obj, "array", None) is not None:
            stack.append(obj.array)
    return found


def test_deferred_values_die_with_the_model_and_checkpoint(tmp_path):
    saved = Lazy()
    saved(gt.ones((1, 256 * 256)))  # a 1 MiB kernel
    path = gt.train.Checkpoint(model=saved).write(str(tmp_path / "c"))
    before = len(module_state.deferred_restores)
    statuses, arrays = [], []
    for _ in range(20):
        model = Lazy()
        statuses.append(gt.train.Checkpoint(model=model).restore(path))
        arrays += [weakref.ref(a) for a in _pending_arrays()]
        del model
    gc.collect()
    assert len(module_state.deferred_restores) == before  # was +20 entries
    assert arrays and all(ref() is None for ref in arrays)
    with pytest.raises(AssertionError, match="Unresolved"):  # their models are gone
        statuses[0].assert_consumed()


def test_a_deferred_value_waits_for_the_model_after_its_checkpoint_is_gone(tmp_path):
    saved = Lazy()
    x = gt.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    saved.w = gt.Variable(np.arange(12, dtype=np.float32).reshape(3, 4))
    path = gt.train.Checkpoint(model=saved).write(str(tmp_path / "c"))
    model = Lazy()
    status = gt.train.Checkpoint(model=model).restore(path)
    gc.collect()
    np.testing.assert_array_equal(model(x).numpy(), saved(x).numpy())
    status.assert_consumed()
    assert id(model) not in module_state.deferred_restores


def test_a_deferred_value_is_not_lost_to_a_non_variable_assignment(tmp_path):
    saved = Lazy()
    saved.w = gt.Variable(np.full((3, 4), 2.0, np.float32))
    path = gt.train.Checkpoint(model=saved).write(str(tmp_path / "c"))
    model = Lazy.__new__(Lazy)
    gt.Module.__init__(model)
    status = gt.train.Checkpoint(model=model).restore(path)
    model.w = None  # e.g. a placeholder set in __init__, before build
    with pytest.raises(AssertionError, match="Unresolved"):
        status.assert_consumed()
    model(gt.ones((1, 3)))
    np.testing.assert_array_equal(model.w.numpy(), np.full((3, 4), 2.0))
    status.assert_consumed()
