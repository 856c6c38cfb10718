"""The memo of shape questions (ir/abstract.py) answers exactly what the shape rule does.

Autodiff and the passes ask it for every equation they emit; a key that merged two
questions with different answers would give a var the wrong dtype or shape.
"""

import numpy as np
import pytest

from gradtape.ir import abstract
from gradtape.ir.nodes import Aval, Literal, Var
from gradtape.ops import elementwise as ew
from gradtape.ops import reduce as rd
from gradtape.ops import shape as sh


def var(shape, dtype):
    return Var(Aval(tuple(shape), np.dtype(dtype)), "x")


@pytest.fixture(autouse=True)
def empty_memo():
    abstract.clear()
    yield
    abstract.clear()


def _both(prim, inputs, params=None):
    params = params or {}
    return abstract.abstract_eval(prim, inputs, params), tuple(prim.abstract_eval(inputs, params))


@pytest.mark.parametrize("scalar", [1, 1.0, True, np.int64(1), np.float32(1), 1j, -0.0])
def test_literals_of_equal_value_and_other_types_get_their_own_answer(scalar):
    x = var((3,), np.int8)
    for lit in (Literal(1), Literal(scalar), Literal(1)):  # the memo is filled in between
        remembered, direct = _both(ew.add.primitive, (x, lit))
        assert remembered == direct


def test_params_of_equal_value_and_other_types_get_their_own_answer():
    x = var((2, 3), np.float32)
    for keepdims in (False, 0, True, 1):
        remembered, direct = _both(rd.sum_p, (x,), {"axis": (1,), "keepdims": keepdims})
        assert remembered == direct
    for shape in ((3, 2), (6,), (1, 6)):
        remembered, direct = _both(sh.reshape_p, (x,), {"shape": shape})
        assert remembered == direct


def test_the_answer_depends_on_the_input_avals():
    for shape, dtype in [((3,), np.float32), ((3,), np.float64), ((2, 3), np.float32),
                         ((), np.float32), ((3,), np.int32)]:
        x = var(shape, dtype)
        remembered, direct = _both(ew.multiply.primitive, (x, var((3,), np.float32)))
        assert remembered == direct


def test_nan_literals_and_object_params_are_not_remembered():
    x = var((3,), np.float32)
    abstract.abstract_eval(ew.add.primitive, (x, Literal(float("nan"))), {})
    abstract.abstract_eval(ew.add.primitive, (x, Literal(np.float32("nan"))), {})
    assert len(abstract._memo) == 0
    assert abstract._key(sh.reshape_p, (x,), {"shape": object()}) is None
    assert abstract._key(sh.reshape_p, (x,), {"shape": [3]}) is None  # unhashable


def test_a_rejected_question_raises_every_time_and_is_not_remembered():
    x = var((3,), np.float32)
    for _ in range(2):
        with pytest.raises(ValueError):
            abstract.abstract_eval(ew.add.primitive, (x, var((4,), np.float32)), {})
    assert len(abstract._memo) == 0


def test_the_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(abstract, "MAX_ENTRIES", 4)
    for n in range(1, 11):
        abstract.abstract_eval(ew.negative_p, (var((n,), np.float32),), {})
        assert len(abstract._memo) <= 4
