"""What a primitive is on other array libraries is declared with it (``kind_neutral``,
``index_operands``), not kept by name in ``core/backends.py``: a primitive declared
anywhere, a user's included, gets the behaviour by its flag."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.ir.nodes import Aval
from gradtape.ops.registry import Primitive, bind, operand

da = pytest.importorskip("dask.array")


def _numpy_zeros_of_shape(x):
    """Takes no data from ``x``: NumPy zeros of its shape (as a random draw does)."""
    return np.zeros(x.shape)


def _zeros_primitive(name, **flags):
    return Primitive(name, _numpy_zeros_of_shape,
                     shape_rule=lambda x: Aval(tuple(x.shape), np.dtype(np.float64)),
                     **flags)


def test_a_kind_neutral_primitive_runs_its_implementation_as_it_is_on_dask_arrays():
    neutral = _zeros_primitive("test_zeros_of_shape_neutral", kind_neutral=True)
    x = gt.constant(da.ones((3,), chunks=2))
    out = bind(neutral, operand(x))
    np.testing.assert_array_equal(out.numpy(), np.zeros(3))


def test_without_the_flag_a_numpy_result_from_dask_arrays_is_refused():
    checked = _zeros_primitive("test_zeros_of_shape_checked")
    x = gt.constant(da.ones((3,), chunks=2))
    with pytest.raises(NotImplementedError, match="turned dask.array arrays into NumPy"):
        bind(checked, operand(x))


def test_the_kind_facts_of_gradtapes_own_primitives_are_their_flags():
    from gradtape.functions.call import function_call_p
    from gradtape.functions.checkpoints import guard_check_p
    from gradtape.ops.index import getitem_p, scatter_add_p
    from gradtape.ops.random import random_draw_p, stateless_random_draw_p
    from gradtape.ops.shape import identity_p, stop_gradient_p
    from gradtape.tape.custom_gradient import custom_gradient_p, custom_gradient_vjp_p

    neutral = [function_call_p, guard_check_p, random_draw_p, stateless_random_draw_p, identity_p,
               stop_gradient_p, custom_gradient_p, custom_gradient_vjp_p]
    assert [p.name for p in neutral if not p.kind_neutral] == []
    assert getitem_p.index_operands and scatter_add_p.index_operands
    assert not gt.ops.elementwise.negative_p.kind_neutral
