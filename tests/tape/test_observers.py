"""One observer protocol (``core.state.Observer``): ``on_op``, ``sees`` and
``on_variable_read`` (and ``on_op_alone``, ``on_op_nested`` for bind's fast branch),
implemented by the tape, the forward accumulator, the ``@gt.function`` tracer and
custom_gradient's variable watcher; nobody reads another observer's fields (issue 20, item 3)."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.core.gradient_drops import is_watched
from gradtape.core.state import Observer, RecordingObserver, state


class _Spy:
    """An observer with nothing but the protocol: if bind, the drop warning, forward
    mode or Variable reached for a tape's private fields, it would fail here."""

    def __init__(self, followed=()):
        self.ops, self.alone, self.nested, self.reads = [], [], [], []
        self.followed = {t._id for t in followed}

    def on_op(self, prim, args, values, params, result, out, shared):
        self.ops.append((prim.name, [np.asarray(v) for v in values], np.asarray(out)))
        return shared

    def on_op_alone(self, prim, in_ids, values, params, result, out, reads, raw_arrays):
        self.alone.append((prim.name, list(in_ids), np.asarray(out)))

    def on_op_nested(self, prim, args, in_ids, values, params, result, out, reads,
                     raw_arrays, shared):
        self.nested.append((prim.name, list(in_ids), [np.asarray(v) for v in values],
                            np.asarray(out), shared))
        return (prim.name, id(self))  # what the next observer is handed as shared

    def sees(self, tensor):
        return tensor._id in self.followed

    def on_variable_read(self, variable):
        self.reads.append(variable.name)


@pytest.fixture
def spy():
    def push(*followed):
        observer = _Spy(followed)
        state.recording.append(observer)
        return observer
    yield push
    state.recording[:] = [o for o in state.recording if not isinstance(o, _Spy)]


def test_an_observer_alone_gets_each_op_through_the_fast_branch(spy):
    x = gt.constant(np.array([1.0, 2.0]))
    observer = spy()
    y = x * 3.0
    (name, in_ids, out), = observer.alone
    assert name == "multiply" and in_ids == [x._id, None]
    np.testing.assert_array_equal(out, [3.0, 6.0])
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0])
    assert observer.ops == []


def test_observers_nested_get_each_op_through_on_op_nested_outermost_first(spy):
    x = gt.constant(np.array([1.0, -2.0]))
    outer, inner = spy(), spy()
    gt.exp(x)
    for observer, shared in ((outer, None), (inner, ("exp", id(outer)))):
        (name, in_ids, values, out, handed), = observer.nested
        assert name == "exp" and in_ids == [x._id] and handed == shared
        np.testing.assert_array_equal(values[0], [1.0, -2.0])
        np.testing.assert_allclose(out, np.exp([1.0, -2.0]), rtol=1e-15)
        assert observer.alone == [] and observer.ops == []


def test_observers_beside_a_forward_accumulator_get_each_op_through_on_op(spy):
    x = gt.constant(np.array([1.0, -2.0]))
    outer, inner = spy(), spy()
    with gt.autodiff.ForwardAccumulator(x, np.array([1.0, 0.0])) as acc:
        y = gt.exp(x)
    for observer in (outer, inner):
        (name, values, out), = observer.ops
        assert name == "exp"
        np.testing.assert_array_equal(values[0], [1.0, -2.0])
        np.testing.assert_allclose(out, np.exp([1.0, -2.0]), rtol=1e-15)
        # the exp is not handed to them again (the tangent's multiply is: the
        # accumulator computes it with itself paused)
        assert observer.alone == [] and [op[0] for op in observer.nested] == ["multiply"]
    np.testing.assert_allclose(acc.jvp(y).numpy(), [np.e, 0.0], rtol=1e-15)


def test_a_variable_read_is_told_through_on_variable_read(spy):
    v = gt.Variable(np.array([0.5, 1.5]), name="kernel")
    observer = spy()
    v.assign_add(np.array([1.0, 1.0]))  # TF's "variable accessed": read or assigned
    assert observer.reads == ["kernel:0"]


def test_the_gradient_drop_asks_observers_whether_they_see_a_tensor(spy):
    x, z = gt.constant(np.array([1.0, 2.0])), gt.constant(np.array([3.0]))
    spy(x)
    assert is_watched(x) and not is_watched(z)


def test_every_observer_speaks_the_protocol():
    v = gt.Variable(np.array([0.5, 1.5]))
    x = gt.constant(np.array([1.0, 2.0]))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * v
    assert isinstance(tape, RecordingObserver)
    assert tape.sees(x) and tape.sees(y) and tape.sees(v)
    assert not tape.sees(gt.constant(1.0))
    with gt.autodiff.ForwardAccumulator(x, np.array([1.0, 0.0])) as acc:
        w = x * 2.0
    assert isinstance(acc, Observer)
    assert acc.sees(x) and acc.sees(w) and not acc.sees(gt.constant(1.0))
    np.testing.assert_array_equal(acc.jvp(w).numpy(), [2.0, 0.0])
    seen = {}

    @gt.function
    def traced(a):
        b = a * 2.0
        seen["tracer"] = state.tracer
        seen["sees"] = (state.tracer.sees(a), state.tracer.sees(b))
        return b

    np.testing.assert_array_equal(traced(x).numpy(), [2.0, 4.0])
    assert isinstance(seen["tracer"], Observer) and seen["sees"] == (True, True)


def test_custom_gradient_watches_the_variables_it_reads_through_the_protocol():
    v = gt.Variable(np.array([2.0, -1.0]), name="scale")
    x = gt.constant(np.array([1.0, 3.0]))
    watchers = []

    @gt.custom_gradient
    def scaled(a):
        watchers.append(state.recording[-1])
        out = a * v

        def grad_fn(upstream, variables=None):
            return upstream * v, [upstream * a]
        return out, grad_fn

    with gt.GradientTape() as tape:
        y = gt.reduce_sum(scaled(x))
    dv = tape.gradient(y, v)
    assert isinstance(watchers[0], RecordingObserver) and watchers[0].sees(v)
    np.testing.assert_allclose(dv.numpy(), [1.0, 3.0])  # x, by grad_fn


def test_nested_tapes_still_share_one_record():
    x = gt.constant(np.array([0.5, 2.0]))
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.sin(x) * x
        dy = inner.gradient(y, x)
    d2 = outer.gradient(dy, x)
    v = x.numpy()
    np.testing.assert_allclose(dy.numpy(), np.cos(v) * v + np.sin(v), rtol=1e-12)
    np.testing.assert_allclose(d2.numpy(), 2 * np.cos(v) - v * np.sin(v), rtol=1e-12)


def test_only_tapes_follows_every_change_of_who_observes():
    """bind's fast branch reads ``state.only_tapes`` alone: it must be the tape stack
    exactly while no accumulator or tracer observes, whatever changed last."""
    import threading

    assert state.only_tapes is state.recording
    x = gt.constant(np.array([1.0, 2.0]))
    with gt.GradientTape() as tape:
        tape.watch(x)
        assert state.only_tapes is state.recording and state.only_tapes == [tape]
        with gt.autodiff.ForwardAccumulator(x, np.array([1.0, 0.0])) as acc:
            assert state.only_tapes is None and state.accumulators == (acc,)
            y = gt.sin(x) * x  # both the tape and the accumulator see it
        assert state.only_tapes is state.recording and state.accumulators == ()
    np.testing.assert_allclose(acc.jvp(y).numpy(), [np.cos(1.0) + np.sin(1.0), 0.0])
    v = x.numpy()
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos(v) * v + np.sin(v))
    saved = state.recording, state.accumulators, state.tracer
    try:
        state.tracer = object()
        assert state.only_tapes is None
        state.tracer = None
        state.recording = []
        assert state.only_tapes is state.recording
        state.accumulators = [acc]  # a list assigned is kept as a tuple
        assert state.accumulators == (acc,) and state.only_tapes is None
    finally:
        state.recording, state.accumulators, state.tracer = saved
    assert state.only_tapes is state.recording
    seen = []
    thread = threading.Thread(target=lambda: seen.append(
        (state.only_tapes is state.recording, state.accumulators)))
    thread.start()
    thread.join()
    assert seen == [(True, ())]
