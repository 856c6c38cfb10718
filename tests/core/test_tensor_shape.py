"""x.shape is TF's TensorShape (a tuple subclass); gt.shape, gt.size, gt.rank."""

import pickle

import numpy as np
import pytest

import gradtape as gt
from gradtape.core import tensor_shape


def test_shape_is_a_tensor_shape_that_is_a_tuple():
    x = gt.zeros([2, 3])
    s = x.shape
    assert isinstance(s, gt.TensorShape) and isinstance(s, tuple)
    assert s == (2, 3) and tuple(s) == (2, 3) and hash(s) == hash((2, 3))
    assert s.as_list() == [2, 3] and s.dims == [2, 3]
    assert s.rank == 2 and s.ndims == 2
    assert s.num_elements() == 6 and s.is_fully_defined()
    assert s[0] == 2 and s[-1] == 3 and s[1:] == (3,)
    rows, cols = s
    assert (rows, cols) == (2, 3)
    assert x.get_shape() == s


def test_repr_and_str_as_tf():
    s = gt.constant([[1.0, 2.0, 3.0]]).shape
    assert repr(s) == "TensorShape([1, 3])"
    assert str(s) == "(1, 3)" and f"{s}" == "(1, 3)"
    assert str(gt.constant([1]).shape) == "(1,)"
    assert repr(gt.constant(1.0).shape) == "TensorShape([])"
    # Tensor printing keeps showing the shape as a tuple.
    assert "shape=(1, 3)" in repr(gt.constant([[1.0, 2.0, 3.0]]))


def test_scalar_and_empty_shapes():
    s = gt.constant(3.0).shape
    assert s == () and s.rank == 0 and s.num_elements() == 1 and s.as_list() == []
    assert gt.zeros([0, 4]).shape.num_elements() == 0


def test_variables_have_one_too():
    v = gt.Variable([[1.0], [2.0]])
    assert isinstance(v.shape, gt.TensorShape) and v.shape.as_list() == [2, 1]


def test_constructor_and_methods():
    s = gt.TensorShape([2, 3])
    assert s == (2, 3) and gt.TensorShape(4) == (4,)
    assert s.concatenate([5]) == (2, 3, 5) and isinstance(s.concatenate([5]), gt.TensorShape)
    assert s.is_compatible_with([None, 3]) and not s.is_compatible_with([3, 3])
    with pytest.raises(ValueError, match="incompatible"):
        s.assert_is_compatible_with([2])
    assert pickle.loads(pickle.dumps(s)) == s
    assert type(pickle.loads(pickle.dumps(s))) is gt.TensorShape


def test_shapes_are_shared_not_rebuilt():
    a, b = gt.zeros([7, 5]), gt.ones([7, 5])
    assert a.shape is b.shape


def test_shapes_are_shared_after_the_cache_filled_up():
    for n in range(tensor_shape._CACHE_LIMIT + 1):  # more distinct shapes than it holds
        tensor_shape.shape_of((n, 11, 13))
    a, b = gt.zeros([3, 11, 17]), gt.ones([3, 11, 17])
    assert a.shape is b.shape and a.shape == (3, 11, 17)


def test_shape_size_rank_are_int32_tensors():
    x = gt.zeros([2, 3, 4])
    shape = gt.shape(x)
    assert isinstance(shape, gt.Tensor) and shape.dtype == np.int32
    assert shape.numpy().tolist() == [2, 3, 4]
    assert gt.shape(x, out_type=gt.int64).dtype == np.int64
    size = gt.size(x)
    assert size.dtype == np.int32 and size.shape == () and int(size) == 24
    rank = gt.rank(x)
    assert rank.dtype == np.int32 and int(rank) == 3
    assert gt.shape(3.0).numpy().tolist() == [] and int(gt.rank([[1, 2]])) == 2
    with pytest.raises(TypeError, match="int32 or int64"):
        gt.shape(x, out_type=gt.float32)
