"""The files of gt.train checkpoints, tested as a database is: interrupted writes
(SIGKILL at random moments, exceptions mid-write) leave one complete save; damaged,
truncated, foreign or missing files raise DataLossError / NotFoundError naming the file,
never another exception and never a wrong value; the state file round-trips any path."""

import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradtape as gt
from gradtape.api import checkpoint_files, checkpoint_state

DATA = ".data-00000-of-00001"
SRC = str(Path(gt.__file__).resolve().parents[1])


def _checkpoint(value=1.0):
    return gt.train.Checkpoint(model={"w": gt.Variable(np.full((3, 2), value, np.float32)),
                                      "n": gt.Variable(np.int64(7))})


def _restored(path):
    model = {"w": gt.Variable(np.zeros((3, 2), np.float32)), "n": gt.Variable(np.int64(0))}
    gt.train.Checkpoint(model=model).restore(path)
    return model["w"].numpy(), int(model["n"].numpy())


def _leftovers(directory):
    return [p.name for p in Path(directory).iterdir() if "tempstate" in p.name]


# --- item 7: interrupted writes -------------------------------------------------------------

_WRITER = textwrap.dedent("""
    import sys
    import numpy as np
    import gradtape as gt
    from gradtape.api import checkpoint_state
    prefix, directory = sys.argv[1], sys.argv[2]
    a = gt.Variable(np.zeros(1 << 21, np.float32))
    b = gt.Variable(np.zeros(1 << 21, np.float32))
    ckpt = gt.train.Checkpoint(a=a, b=b)
    i = 0
    while True:
        i += 1
        a.assign(np.full(1 << 21, i, np.float32))
        b.assign(np.full(1 << 21, i, np.float32))
        ckpt.write(prefix)
        checkpoint_state.write_state(directory, directory + "/ckpt-" + str(i) + '"\\\\n' * i)
        print("saved", i, flush=True)
""")


def test_a_writer_killed_at_any_moment_leaves_one_complete_save(tmp_path):
    rng = np.random.default_rng(0)
    prefix = str(tmp_path / "big")
    env = dict(os.environ, PYTHONPATH=SRC)
    seen = set()
    for run in range(8):
        writer = subprocess.Popen([sys.executable, "-c", _WRITER, prefix, str(tmp_path)],
                                  stdout=subprocess.PIPE, env=env)
        # Killed after its 1st or its 5th complete save, a moment into the next: the
        # kills land at different saves however fast the machine writes.
        wait_for = 1 if run % 2 else 5
        for line in writer.stdout:  # b"saved 1\n", ...; it ends only if the writer died
            if line == b"saved %d\n" % wait_for:
                break
        else:
            raise AssertionError(f"the writer exited with {writer.wait()} before saving")
        time.sleep(rng.uniform(0.0, 0.05))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        a = gt.Variable(np.zeros(1 << 21, np.float32))
        b = gt.Variable(np.zeros(1 << 21, np.float32))
        gt.train.Checkpoint(a=a, b=b).restore(prefix).assert_consumed()
        i = a.numpy()[0]
        assert i >= 1 and (a.numpy() == i).all() and (b.numpy() == i).all()  # never a mix
        seen.add(int(i))
        state = checkpoint_state.parse_state(
            (tmp_path / "checkpoint").read_text(encoding="utf-8"))
        [name] = state["model_checkpoint_path"]
        n = int(name.split("ckpt-")[1].split('"')[0])
        assert name == "ckpt-" + str(n) + '"\\n' * n  # relative to its directory
    assert len(seen) > 1  # the kills did land at different saves


class _DiskFull:
    """Raises ENOSPC on the n-th call of what it replaces, after the real call wrote."""

    def __init__(self, real, after=0):
        self.real, self.calls, self.after = real, 0, after

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls > self.after:
            raise OSError(28, "No space left on device")
        return self.real(*args, **kwargs)


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt])
def test_a_failed_data_write_keeps_the_previous_checkpoint(tmp_path, monkeypatch, error):
    prefix = _checkpoint(1.0).write(str(tmp_path / "c"))
    real = np.lib.format.write_array

    def write_then_fail(f, array, *args, **kwargs):
        real(f, array, *args, **kwargs)
        raise error

    monkeypatch.setattr(np.lib.format, "write_array", write_then_fail)
    with pytest.raises((OSError, KeyboardInterrupt)):
        _checkpoint(2.0).write(prefix)
    monkeypatch.undo()
    w, n = _restored(prefix)
    np.testing.assert_array_equal(w, np.full((3, 2), 1.0))
    assert n == 7 and _leftovers(tmp_path) == []


def test_a_failed_index_write_leaves_the_new_complete_save(tmp_path, monkeypatch):
    # The data file is renamed first; if the index then fails, the data's own copy of
    # the index describes it: the new save is read whole, never half of each.
    prefix = _checkpoint(1.0).write(str(tmp_path / "c"))
    monkeypatch.setattr(os, "replace", _DiskFull(os.replace, after=1))
    with pytest.raises(OSError, match="No space"):
        _checkpoint(2.0).write(prefix)
    monkeypatch.undo()
    w, _ = _restored(prefix)
    np.testing.assert_array_equal(w, np.full((3, 2), 2.0))
    assert _leftovers(tmp_path) == []


def test_a_failed_fsync_keeps_the_previous_checkpoint_and_state(tmp_path, monkeypatch):
    ckpt = _checkpoint(1.0)
    first = ckpt.save(str(tmp_path / "ckpt"))
    monkeypatch.setattr(os, "fsync", _DiskFull(os.fsync))
    with pytest.raises(OSError, match="No space"):
        ckpt.save(str(tmp_path / "ckpt"))
    monkeypatch.undo()
    assert gt.train.latest_checkpoint(str(tmp_path)) == first
    assert _leftovers(tmp_path) == []


def test_a_failed_state_write_keeps_the_previous_state(tmp_path, monkeypatch):
    ckpt = _checkpoint(1.0)
    first = ckpt.save(str(tmp_path / "ckpt"))
    # data, index renamed; the state file's rename fails
    monkeypatch.setattr(os, "replace", _DiskFull(os.replace, after=2))
    with pytest.raises(OSError):
        ckpt.save(str(tmp_path / "ckpt"))
    monkeypatch.undo()
    assert gt.train.latest_checkpoint(str(tmp_path)) == first
    assert _leftovers(tmp_path) == []


# --- item 9: the state file -----------------------------------------------------------------

@pytest.mark.parametrize("content", [b"", b"\n", b"garbage", b"\xff\xfe\x00",
                                     b'model_checkpoint_path: "unterminated\n',
                                     b'model_checkpoint_path: 3\n', b"{}"])
def test_a_bad_state_file_gives_none_with_a_warning(tmp_path, content):
    _checkpoint().write(str(tmp_path / "ckpt-1"))
    (tmp_path / "checkpoint").write_bytes(content)
    with pytest.warns(UserWarning, match="checkpoint ignored"):
        assert gt.train.latest_checkpoint(str(tmp_path)) is None


def test_a_state_file_naming_a_missing_checkpoint_gives_none_with_a_warning(tmp_path):
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "ckpt-9"\n')
    with pytest.warns(UserWarning, match="Couldn't match files"):
        assert gt.train.latest_checkpoint(str(tmp_path)) is None
    assert gt.train.latest_checkpoint(str(tmp_path / "no such directory")) is None


@pytest.mark.parametrize("name", ['say "hi"', "back\\slash", "new\nline", "tab\tand'quote",
                                  "\\n not a newline", "ünï©ødé", "\x01\x7f"])
def test_any_prefix_round_trips_through_the_state_file(tmp_path, name):
    path = _checkpoint().save(str(tmp_path / name))
    assert os.path.exists(path + ".index")
    assert gt.train.latest_checkpoint(str(tmp_path)) == path


def test_a_state_file_written_by_tf_is_read(tmp_path):
    _checkpoint().write(str(tmp_path / 'ckpt-2"\xe9'))
    (tmp_path / "checkpoint").write_text(
        '# written by TF\nmodel_checkpoint_path: "ckpt-2\\"\\303\\251"\n'
        'all_model_checkpoint_paths: "ckpt-1"\nall_model_checkpoint_paths: "ckpt-2\\"\\xc3\\xa9"\n'
        "all_model_checkpoint_timestamps: 1700000000.5\n"
        "all_model_checkpoint_timestamps: 1.7e9\nlast_preserved_timestamp: 1699999999.25\n")
    assert gt.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / 'ckpt-2"\xe9')


def test_an_absolute_path_in_the_state_file_is_kept(tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    _checkpoint().write(str(other / "ckpt-1"))
    (tmp_path / "checkpoint").write_text(
        f'model_checkpoint_path: "{checkpoint_state.escape(str(other / "ckpt-1"))}"\n')
    assert gt.train.latest_checkpoint(str(tmp_path)) == str(other / "ckpt-1")


# --- item 9: damaged and foreign checkpoint files --------------------------------------------

def _expect_data_loss(prefix, file_suffix):
    with pytest.raises(gt.errors.DataLossError) as info:
        _restored(prefix)
    assert prefix + file_suffix in str(info.value)
    with pytest.raises(gt.errors.DataLossError):
        gt.train.list_variables(prefix)


def _index(prefix):
    return json.loads(Path(prefix + ".index").read_text())


def test_a_plain_npy_data_file_is_data_loss(tmp_path):
    prefix = _checkpoint().write(str(tmp_path / "c"))
    with open(prefix + DATA, "wb") as f:
        np.save(f, np.ones(3))
    _expect_data_loss(prefix, DATA)


def test_an_index_with_an_extra_entry_is_data_loss(tmp_path):
    prefix = _checkpoint().write(str(tmp_path / "c"))
    index = _index(prefix)
    index["entries"].append(dict(index["entries"][0], key="model/x/.ATTRIBUTES/VARIABLE_VALUE"))
    Path(prefix + ".index").write_text(json.dumps(index))
    _expect_data_loss(prefix, ".index")


@pytest.mark.parametrize("document", [
    {"model/w": [3, 2]}, 3, "text", None, [{"key": "k"}],
    {"format": "gradtape.checkpoint", "version": 99, "save_id": "", "entries": []},
])
def test_an_index_of_another_shape_is_data_loss(tmp_path, document):
    prefix = _checkpoint().write(str(tmp_path / "c"))
    Path(prefix + ".index").write_text(json.dumps(document))
    _expect_data_loss(prefix, ".index")


@pytest.mark.parametrize("field, value", [
    ("shape", "3"), ("shape", [3.0, 2]), ("shape", [-3, 2]), ("shape", [True, 2]),
    ("dtype", 5), ("dtype", "float99"), ("dtype", "|O"), ("dtype", "<U3"), ("key", 1),
    ("crc32", "0"), ("crc32", -1), ("crc32", None),
])
def test_wrong_types_inside_the_index_are_data_loss(tmp_path, field, value):
    prefix = _checkpoint().write(str(tmp_path / "c"))
    index = _index(prefix)
    index["entries"][0][field] = value
    Path(prefix + ".index").write_text(json.dumps(index))
    _expect_data_loss(prefix, ".index")


@pytest.mark.parametrize("suffix", [".index", DATA])
def test_truncated_files_are_data_loss(tmp_path, suffix):
    prefix = _checkpoint().write(str(tmp_path / "c"))
    whole = Path(prefix + suffix).read_bytes()
    for length in sorted({0, 1, 3, len(whole) // 3, len(whole) // 2, len(whole) - 1}):
        Path(prefix + suffix).write_bytes(whole[:length])
        _expect_data_loss(prefix, suffix)


@pytest.mark.parametrize("suffix", [".index", DATA])
def test_a_missing_file_is_not_found(tmp_path, suffix):
    prefix = _checkpoint().write(str(tmp_path / "c"))
    os.remove(prefix + suffix)
    with pytest.raises(gt.errors.NotFoundError, match=f"c{suffix}"):
        _restored(prefix)
    with pytest.raises(gt.errors.NotFoundError):
        gt.train.load_variable(prefix, "model/n/.ATTRIBUTES/VARIABLE_VALUE")


class _Boom:
    unpickled = False

    def __reduce__(self):
        return (_mark_unpickled, ())


def _mark_unpickled():
    _Boom.unpickled = True


def test_a_data_file_with_object_arrays_is_never_unpickled(tmp_path):
    # A version 1 (old format) checkpoint whose array is a pickled object.
    prefix = str(tmp_path / "c")
    with open(prefix + DATA, "wb") as f:
        np.savez(f, v0=np.array([_Boom()], dtype=object))
    Path(prefix + ".index").write_text(json.dumps(
        [{"key": "model/w/.ATTRIBUTES/VARIABLE_VALUE", "shape": [1], "dtype": "|O"}]))
    _expect_data_loss(prefix, ".index")
    Path(prefix + ".index").write_text(json.dumps(
        [{"key": "model/w/.ATTRIBUTES/VARIABLE_VALUE", "shape": [1], "dtype": "<f8"}]))
    _expect_data_loss(prefix, DATA)
    assert not _Boom.unpickled
    assert pickle.loads(pickle.dumps(_Boom())) is None and _Boom.unpickled  # it would have


def test_a_version_1_checkpoint_still_restores(tmp_path):
    # gradtape's files before checksums: a JSON list index and a plain np.savez.
    prefix = str(tmp_path / "old")
    w = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(3, 2))
    with open(prefix + DATA, "wb") as f:  # as gradtape wrote it
        np.savez(f, v0=np.int64(5), v1=w)
    Path(prefix + ".index").write_text(json.dumps([
        {"key": "model/n/.ATTRIBUTES/VARIABLE_VALUE", "shape": [], "dtype": "<i8"},
        {"key": "model/w/.ATTRIBUTES/VARIABLE_VALUE", "shape": [3, 2], "dtype": "<f4"}]))
    restored_w, n = _restored(prefix)
    np.testing.assert_array_equal(restored_w, w)
    assert n == 5


def test_an_old_index_beside_new_data_reads_the_new_save(tmp_path):
    # A writer stopped between the data's rename and the index's: the data file's own
    # copy of its index is read (also over a version 1 index, the first save after an
    # upgrade).
    prefix = _checkpoint(1.0).write(str(tmp_path / "c"))
    for old_index in (Path(prefix + ".index").read_bytes(), b"[]"):
        Path(prefix + ".index").write_bytes(old_index)
        _checkpoint(2.0).write(prefix)  # over old_index, which is then put back
        Path(prefix + ".index").write_bytes(old_index)
        w, _ = _restored(prefix)
        np.testing.assert_array_equal(w, np.full((3, 2), 2.0))


@pytest.mark.parametrize("how", ["copy", "symlink"])
def test_a_data_file_of_another_checkpoint_is_data_loss(tmp_path, how):
    # Same keys, shapes and dtypes: only the save ids tell that the data file was not
    # written over this index (it restored the other checkpoint's values before).
    prefix = _checkpoint(1.0).write(str(tmp_path / "c"))
    other = _checkpoint(2.0).write(str(tmp_path / "other"))
    data = Path(prefix + ".data-00000-of-00001")
    data.unlink()
    if how == "copy":
        data.write_bytes(Path(other + ".data-00000-of-00001").read_bytes())
    else:
        data.symlink_to(other + ".data-00000-of-00001")
    with pytest.raises(gt.errors.DataLossError, match="c.data-00000-of-00001.*another"):
        _restored(prefix)
    with pytest.raises(gt.errors.DataLossError):
        gt.train.list_variables(prefix)
    _checkpoint(3.0).write(prefix)  # a new save at the prefix is whole again
    np.testing.assert_array_equal(_restored(prefix)[0], np.full((3, 2), 3.0))
    np.testing.assert_array_equal(_restored(other)[0], np.full((3, 2), 2.0))  # kept


# Hypothesis: every corruption of either file gives DataLossError or the saved values.

_CORRUPTIONS = st.sampled_from(["flip", "truncate", "insert", "delete", "overwrite"])


def _corrupt(data: bytes, kind: str, position: int, byte: int) -> bytes:
    position %= max(len(data), 1)
    if kind == "flip":
        return data[:position] + bytes([data[position] ^ (byte or 1)]) + data[position + 1:]
    if kind == "truncate":
        return data[:position]
    if kind == "insert":
        return data[:position] + bytes([byte]) + data[position:]
    if kind == "delete":
        return data[:position] + data[position + 1:]
    return data[:position] + bytes([byte]) * 16 + data[position + 16:]


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(suffix=st.sampled_from([".index", DATA]), kind=_CORRUPTIONS,
       position=st.integers(0, 10**6), byte=st.integers(0, 255))
def test_every_corruption_is_data_loss_or_the_saved_values(tmp_path, suffix, kind,
                                                           position, byte):
    prefix = str(tmp_path / "fuzz")
    _checkpoint(1.5).write(prefix)
    path = Path(prefix + suffix)
    original = path.read_bytes()
    path.write_bytes(_corrupt(original, kind, position, byte))
    try:
        w, n = _restored(prefix)
    except gt.errors.DataLossError as error:
        assert str(path) in str(error)
    else:
        np.testing.assert_array_equal(w, np.full((3, 2), 1.5))
        assert n == 7
    try:
        listed = gt.train.list_variables(prefix)
    except gt.errors.DataLossError:
        pass
    else:
        assert listed[1:] == [("model/n/.ATTRIBUTES/VARIABLE_VALUE", []),
                              ("model/w/.ATTRIBUTES/VARIABLE_VALUE", [3, 2])]


def test_save_creates_its_directory_as_tf(tmp_path):
    path = _checkpoint(3.0).save(str(tmp_path / "new" / "dir" / "ckpt"))
    assert gt.train.latest_checkpoint(str(tmp_path / "new" / "dir")) == path
    np.testing.assert_array_equal(_restored(path)[0], np.full((3, 2), 3.0))


def test_the_data_file_is_an_npz_numpy_reads(tmp_path):
    prefix = _checkpoint(2.0).write(str(tmp_path / "c"))
    with np.load(prefix + DATA, allow_pickle=False) as data:
        np.testing.assert_array_equal(data["v1"], np.full((3, 2), 2.0))
    assert checkpoint_files.read_entries(prefix)[1].shape == (3, 2)
