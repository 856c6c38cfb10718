"""How bind hands ops to a tape and what the tape keeps: records (tuples read by named
field indices), written by the
tape alone, the same whether one tape records alone (bind's fast branch) or among other
observers (nested tapes, forward accumulators)."""

import inspect

import numpy as np

import gradtape as gt
from gradtape.ir.lower import (
    IN_IDS,
    IN_VALUES,
    LOCATION,
    OUT_IDS,
    OUT_VALUES,
    PARAMS,
    PRIM,
    Released,
)
from gradtape.tape.site_references import signature_key

X = np.array([0.3, -1.2, 2.5])


def _loss(x, v=None):
    y = gt.sin(x) * x  # the recorded line
    return gt.reduce_sum(y * 3.0 if v is None else y * v)


def _loss_line() -> int:
    lines, first = inspect.getsourcelines(_loss)
    return first + next(i for i, line in enumerate(lines) if "the recorded line" in line)


def _finite_difference(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def _numpy_loss(x):
    return float(np.sum(np.sin(x) * x * 3.0))


def _record(with_accumulator: bool):
    """The tape alone (bind's fast branch), or beside a forward accumulator (every op
    then goes through bind's observer loop)."""
    x = gt.constant(X)
    accumulator = gt.ForwardAccumulator(x, gt.constant(np.ones(3))) if with_accumulator \
        else None
    if accumulator is None:
        with gt.GradientTape() as tape:
            tape.watch(x)
            loss = _loss(x)
    else:
        with accumulator:  # opened outside the tape: its JVP ops are not recorded
            with gt.GradientTape() as tape:
                tape.watch(x)
                loss = _loss(x)
    return tape, x, loss


def test_records_are_plain_tuples_read_by_named_fields():
    tape, x, loss = _record(with_accumulator=False)
    first = tape._records[0]
    assert type(first) is tuple and len(first) == 7  # a subclass costs on every op
    assert first[PRIM].name == "sin"
    assert first[IN_IDS] == (x._id,)
    np.testing.assert_array_equal(first[IN_VALUES][0], X)
    # sin's rules read its input only, but an output this small (below
    # MIN_RELEASE_SIZE) is kept whole: a Released would cost more than the array.
    np.testing.assert_array_equal(first[OUT_VALUES][0], np.sin(X))
    assert first[LOCATION] == (__file__, _loss_line())
    assert tape._records[-1][OUT_IDS] == (loss._id,)


def test_the_fast_branch_and_the_observer_loop_record_the_same(compile_mode):
    alone, x_alone, loss_alone = _record(with_accumulator=False)
    shared, x_shared, loss_shared = _record(with_accumulator=True)
    assert len(alone._records) == len(shared._records) == 4
    for a, s in zip(alone._records, shared._records):
        assert type(a) is type(s) is tuple
        assert a[PRIM] is s[PRIM] and a[PARAMS] == s[PARAMS] and a[LOCATION] == s[LOCATION]
        assert [i is None for i in a[IN_IDS]] == [i is None for i in s[IN_IDS]]
        for va, vs in zip(a[IN_VALUES] + a[OUT_VALUES], s[IN_VALUES] + s[OUT_VALUES]):
            if isinstance(va, Released):  # a value no rule reads: its shape and dtype
                assert isinstance(vs, Released) and (va.shape, va.dtype) == (vs.shape, vs.dtype)
            else:
                np.testing.assert_array_equal(va, vs)
    # A tape that follows its site's reference keeps its signature there: compare keys.
    assert signature_key(alone).items == signature_key(shared).items
    expected = _finite_difference(_numpy_loss, X)
    np.testing.assert_allclose(alone.gradient(loss_alone, x_alone).numpy(), expected,
                               rtol=1e-6)
    np.testing.assert_allclose(shared.gradient(loss_shared, x_shared).numpy(), expected,
                               rtol=1e-6)


def test_nested_tapes_keep_one_record_of_an_op(compile_mode):
    x = gt.constant(X)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            loss = _loss(x)
        grad = inner.gradient(loss, x)
        total = gt.reduce_sum(grad * grad)
    assert outer._records[0][PRIM].name == "sin"

    # d/dx sum((3 (cos x * x + sin x))^2), by finite differences
    def numpy_total(v):
        g = 3.0 * (np.cos(v) * v + np.sin(v))
        return float(np.sum(g * g))

    np.testing.assert_allclose(outer.gradient(total, x).numpy(),
                               _finite_difference(numpy_total, X), rtol=1e-5)


def test_shared_records_are_one_object_across_nested_tapes():
    x = gt.constant(X)
    with gt.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with gt.GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = gt.sin(x)
    assert inner._records[0] is outer._records[0]
    assert inner._records[0][OUT_IDS] == (y._id,)


def test_a_variable_read_at_two_values_keeps_records_whole(compile_mode):
    x = gt.constant(X)
    v = gt.Variable(2.0, dtype="float64")
    with gt.GradientTape() as tape:
        tape.watch(x)
        first = _loss(x, v)
        v.assign(10.0)
        loss = first + _loss(x, v)
    records = tape._records_for([x])  # v is not a source: its reads are told apart
    assert all(type(r) is tuple and len(r) == 7 for r in records)
    read_ids = {r[IN_IDS][1] for r in records if r[PRIM].name == "multiply" and
                r[IN_IDS][1] not in (None, x._id) and r[IN_VALUES][1].shape == ()}
    assert len(read_ids) == 2 and v._id not in read_ids
    expected = _finite_difference(
        lambda u: float(np.sum(np.sin(u) * u * 2.0) + np.sum(np.sin(u) * u * 10.0)), X)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), expected, rtol=1e-6)


def test_a_tensor_of_a_result_is_made_one_way():
    assert not hasattr(gt.Tensor, "_wrap")
    from gradtape.core.tensor import wrap

    t = wrap(np.float64(2.0))
    assert type(t) is gt.Tensor and t.numpy() == 2.0
    assert wrap(np.float64(2.0))._id != t._id
