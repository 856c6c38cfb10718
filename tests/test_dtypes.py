"""gt.float32 & co.: TF's DType objects, equal to NumPy's dtypes and accepted by NumPy."""

import pickle
import warnings

import numpy as np
import pytest

import gradtape as gt

# name, size, is_floating, is_integer, is_complex, is_bool, is_unsigned (TF's values)
TABLE = [
    ("float16", 2, True, False, False, False, False),
    ("float32", 4, True, False, False, False, False),
    ("float64", 8, True, False, False, False, False),
    ("int8", 1, False, True, False, False, False),
    ("int16", 2, False, True, False, False, False),
    ("int32", 4, False, True, False, False, False),
    ("int64", 8, False, True, False, False, False),
    ("uint8", 1, False, True, False, False, True),
    ("uint16", 2, False, True, False, False, True),
    ("uint32", 4, False, True, False, False, True),
    ("uint64", 8, False, True, False, False, True),
    ("bool", 1, False, False, False, True, False),
    ("complex64", 8, False, False, True, False, False),
    ("complex128", 16, False, False, True, False, False),
]


@pytest.mark.parametrize("row", TABLE, ids=[r[0] for r in TABLE])
def test_properties_match_tf(row):
    name, size, floating, integer, complex_, boolean, unsigned = row
    d = getattr(gt, name)
    assert isinstance(d, gt.DType)
    assert d.name == name and d.size == size
    assert (d.is_floating, d.is_integer, d.is_complex, d.is_bool, d.is_unsigned) == (
        floating, integer, complex_, boolean, unsigned)
    assert d.as_numpy_dtype is np.dtype(name).type
    assert d.base_dtype is d
    assert repr(d) == f"gt.{name}" and str(d) == f"<dtype: '{name}'>"
    assert gt.dtypes.__dict__[name] is d and gt.as_dtype(name) is d


def test_limits_match_tf():
    assert (gt.int32.min, gt.int32.max) == (-2147483648, 2147483647)
    assert (gt.uint8.min, gt.uint8.max) == (0, 255)
    assert gt.float16.max == 65504.0 and gt.float16.min == -65504.0
    assert gt.float32.max == np.float32(3.4028235e38)
    assert gt.float64.min == -np.finfo(np.float64).max
    for d in (gt.bool, gt.complex64):
        with pytest.raises(TypeError, match="minimum or maximum"):
            d.min  # noqa: B018


def test_real_dtype_and_aliases():
    assert gt.complex64.real_dtype is gt.float32 and gt.complex128.real_dtype is gt.float64
    assert gt.float32.real_dtype is gt.float32
    assert gt.half is gt.float16 and gt.double is gt.float64
    assert gt.as_dtype("half") is gt.float16 and gt.as_dtype("double") is gt.float64
    assert gt.as_dtype(float) is gt.float32  # TF reads Python's float as float32
    assert gt.as_dtype("float") is gt.float32 and gt.float32 == "float" != gt.float64
    assert gt.float32.as_datatype_enum == 1 and gt.int64.as_datatype_enum == 9


@pytest.mark.parametrize("other", [np.dtype("float32"), np.float32, "float32"])
def test_equal_to_numpy_names_both_ways(other):
    assert gt.float32 == other and other == gt.float32
    assert not (gt.float32 != other) and not (other != gt.float32)
    assert gt.float64 != other and other != gt.float64


@pytest.mark.parametrize("other", [None, "no_such_dtype", object(), gt.int32, 3.5])
def test_not_equal_to_other_things(other):
    assert gt.float32 != other
    assert not gt.float32 == other


def test_hashes_like_numpy_dtype():
    assert hash(gt.float32) == hash(np.dtype("float32"))
    assert {np.dtype("float32"): "a"}[gt.float32] == "a"
    assert {gt.int64: "b"}[np.dtype("int64")] == "b"
    assert len({gt.float32, np.dtype("float32")}) == 1


def test_numpy_accepts_it_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.zeros(3, gt.float32).dtype == np.float32
        assert np.dtype(gt.int16) == np.dtype("int16")
        assert np.arange(3).astype(gt.float16).dtype == np.float16
        assert np.array([1, 2], dtype=gt.uint8).dtype == np.uint8
        assert np.issubdtype(gt.float32, np.floating)
        assert not np.issubdtype(gt.int32, np.floating)
        assert np.finfo(gt.float32).eps == np.finfo(np.float32).eps
        assert np.iinfo(gt.int8).max == 127
        assert np.result_type(gt.float32, np.float64) == np.float64


def test_accepted_wherever_gradtape_takes_a_dtype():
    x = gt.constant([1.0, 2.0])
    assert gt.constant([1, 2], dtype=gt.float64).dtype == np.float64
    assert gt.cast(x, gt.int32).numpy().tolist() == [1, 2]
    assert gt.Variable(1.0, dtype=gt.float64).dtype == np.float64
    assert gt.zeros([2], gt.int8).dtype == np.int8
    assert gt.ones([2], dtype=gt.float16).dtype == np.float16
    assert gt.zeros_like(x, dtype=gt.int64).dtype == np.int64
    assert gt.ones_like(x, dtype=gt.complex64).dtype == np.complex64
    assert gt.one_hot([0, 1], 2, dtype=gt.float64).dtype == np.float64
    assert gt.range(3, dtype=gt.float64).dtype == np.float64
    assert gt.eye(2, dtype=gt.int32).dtype == np.int32
    assert gt.random.normal([2], dtype=gt.float64).dtype == np.float64
    assert gt.convert_to_tensor(x, dtype=gt.float32) is x
    with pytest.raises(ValueError, match="requested dtype float64"):
        gt.convert_to_tensor(x, dtype=gt.float64)


def test_tensor_dtype_stays_a_numpy_dtype_that_equals_the_dtype_object():
    x = gt.constant([1.0])
    assert isinstance(x.dtype, np.dtype)  # the library's internal uses stay NumPy's
    assert x.dtype == gt.float32 and gt.float32 == x.dtype
    assert gt.as_dtype(x.dtype).is_floating
    assert gt.as_dtype(x.dtype) is gt.float32


@pytest.mark.parametrize("compile_", [True, False])
def test_cast_with_a_dtype_object_differentiates(compile_):
    x = gt.constant([0.5, -1.25, 3.0], dtype=gt.float32)
    with gt.config(compile=compile_):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.reduce_sum(gt.cast(x, gt.float64) ** 3)
        g = tape.gradient(y, x)
    assert y.dtype == np.float64 and g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), 3 * np.array([0.5, -1.25, 3.0]) ** 2, rtol=1e-6)


def test_as_dtype_rejects_what_tf_rejects():
    for bad in (None, "no_such_dtype", object()):
        with pytest.raises(TypeError, match="Cannot convert value"):
            gt.as_dtype(bad)
    assert gt.as_dtype(np.dtype("int32")) is gt.int32 and gt.as_dtype(np.uint16) is gt.uint16
    assert gt.as_dtype(gt.bool) is gt.bool


def test_dtypes_namespace_and_pickle():
    assert gt.dtypes.DType is gt.DType and gt.dtypes.as_dtype is gt.as_dtype
    assert gt.dtypes.cast is gt.cast
    assert pickle.loads(pickle.dumps(gt.complex64)) is gt.complex64
    assert gt.float32.is_compatible_with(np.float32)
