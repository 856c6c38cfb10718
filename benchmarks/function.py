"""Decorated functions: a gradient and a full training step under ``@gt.function``
against hand-written NumPy and against ``tf.function``, ``jax.jit``, PyTorch and
autograd, in one process.

    python benchmarks/function.py                 # full run
    python benchmarks/function.py --quick         # smoke run
    python benchmarks/function.py --update-docs   # also rewrite docs/performance.md

The ``@gt.function`` rows are skipped (with a note) while ``gradtape.functions.api`` does not
exist; the eager gradtape rows and the peers run regardless.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
if __name__ == "__main__":  # before NumPy and the peers load their thread pools
    import _threads

    _threads.limit_from_argv()

import _peers as peers
import gradient
import numpy as np
from _harness import (
    HAND,
    Result,
    Skip,
    Target,
    Workload,
    command,
    machine,
    parser,
    report_cold,
    report_result,
    report_targets,
    run_workloads,
    settings_from,
    update_docs,
    versions,
)

Maker = Callable[[], Callable[[], Any]]
LEARNING_RATE = 0.05
FUNCTION = "gradtape @function"
MISSING = "gradtape.functions.api does not exist yet (issue 5)"


def _gt_function() -> Callable:
    import gradtape as gt

    function = getattr(gt, "function", None)
    if function is None:
        raise Skip(MISSING)
    return function


def _with_state(step: Callable[[], Any], observe: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        return step()
    run.observe = observe  # type: ignore[attr-defined]
    return run


# --- the 20-step scalar chain's gradient ----------------------------------------------------

def gradtape_chain(x: np.float64, decorate: bool) -> Callable[[], Any]:
    import gradtape as gt

    ops = peers.gradtape_ops()
    x_t = gt.constant(x)

    def grad_fn(v: Any) -> Any:
        with gt.GradientTape() as tape:
            tape.watch(v)
            y = gradient.chain_loss(ops, [v], ())
        return tape.gradient(y, v)

    fn = _gt_function()(grad_fn) if decorate else grad_fn
    peers.clear_gradtape_cache()
    return lambda: [fn(x_t)]


def tf_chain(x: np.float64) -> Callable[[], Any]:
    tf = peers._tf()
    ops = peers.tf_ops()
    x_t = tf.constant(x)

    @tf.function
    def grad_fn(v: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = gradient.chain_loss(ops, [v], ())
        return tape.gradient(y, v)
    return lambda: [grad_fn(x_t)]


def chain_workload() -> Workload:
    x = np.float64(0.7)
    params = [x]
    makers: dict[str, Maker] = {
        HAND: lambda: lambda: gradient.chain_hand(x),
        "hand-written (math module)": lambda: lambda: gradient.chain_hand_math(float(x)),
        FUNCTION: lambda: gradtape_chain(x, decorate=True),
        "gradtape eager tape": lambda: gradtape_chain(x, decorate=False),
        "TF tf.function": lambda: tf_chain(x),
        "JAX jit(grad)": lambda: peers.jax_step(gradient.chain_loss, params, (), jit=True),
        "PyTorch": lambda: peers.torch_step(gradient.chain_loss, params, ()),
        "autograd": lambda: peers.autograd_step(gradient.chain_loss, params, ()),
    }
    return Workload("chain", "Scalar chain gradient (20 steps, float64) under a compiled "
                    "function", makers, gradient.chain_hand(x), rtol=1e-10, atol=1e-12)


# --- MLP training step: forward, gradient, SGD update ---------------------------------------

def hand_train(params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> Callable[[], Any]:
    p = [a.copy() for a in params]

    def step() -> Any:
        loss, acts = gradient.mlp_forward(p, x, y)
        for a, g in zip(p, gradient.mlp_backward(p, x, acts)):
            a -= LEARNING_RATE * g
        return loss
    return _with_state(step, lambda: [a.copy() for a in p])


def hand_params_after(params: list[np.ndarray], x: np.ndarray,
                      y: np.ndarray) -> Callable[[int], list[np.ndarray]]:
    """The hand-written parameters after n steps, n = 1, 2, 3."""
    step = hand_train(params, x, y)
    after = []
    for _ in range(3):
        step()
        after.append(step.observe())
    return lambda n: after[n - 1]


def gradtape_train(params: list[np.ndarray], x: np.ndarray, y: np.ndarray,
                   decorate: bool) -> Callable[[], Any]:
    import gradtape as gt

    ops = peers.gradtape_ops()
    vs = [gt.Variable(a) for a in params]
    x_t, y_t = gt.constant(x), gt.constant(y)

    def train_step(xb: Any, yb: Any) -> Any:
        with gt.GradientTape() as tape:
            loss = gradient.mlp_loss(ops, vs, (xb, yb))
        for v, g in zip(vs, tape.gradient(loss, vs)):
            v.assign_sub(LEARNING_RATE * g)
        return loss

    fn = _gt_function()(train_step) if decorate else train_step
    peers.clear_gradtape_cache()
    return _with_state(lambda: fn(x_t, y_t), lambda: [v.numpy() for v in vs])


def tf_train(params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> Callable[[], Any]:
    tf = peers._tf()
    ops = peers.tf_ops()
    vs = [tf.Variable(a) for a in params]
    x_t, y_t = tf.constant(x), tf.constant(y)

    @tf.function
    def train_step(xb: Any, yb: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = gradient.mlp_loss(ops, vs, (xb, yb))
        for v, g in zip(vs, tape.gradient(loss, vs)):
            v.assign_sub(LEARNING_RATE * g)
        return loss
    return _with_state(lambda: train_step(x_t, y_t), lambda: [v.numpy() for v in vs])


def jax_train(params: list[np.ndarray], x: np.ndarray, y: np.ndarray,
              jit: bool) -> Callable[[], Any]:
    jax = peers._jax()
    ops = peers.jax_ops()
    x_j, y_j = jax.numpy.asarray(x), jax.numpy.asarray(y)
    value_and_grad = jax.value_and_grad(lambda p, xb, yb: gradient.mlp_loss(ops, p, (xb, yb)))

    def train_step(p: list, xb: Any, yb: Any) -> tuple[list, Any]:
        loss, grads = value_and_grad(p, xb, yb)
        return [a - LEARNING_RATE * g for a, g in zip(p, grads)], loss

    if jit:
        train_step = jax.jit(train_step)
    state = [[jax.numpy.asarray(a) for a in params]]

    def step() -> Any:
        state[0], loss = train_step(state[0], x_j, y_j)
        return jax.block_until_ready((state[0], loss))[1]
    return _with_state(step, lambda: [np.asarray(a) for a in state[0]])


def torch_train(params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> Callable[[], Any]:
    torch = peers._torch()
    ops = peers.torch_ops()
    ps = [torch.tensor(a, requires_grad=True) for a in params]
    x_t, y_t = torch.from_numpy(x), torch.from_numpy(y)

    def step() -> Any:
        loss = gradient.mlp_loss(ops, ps, (x_t, y_t))
        grads = torch.autograd.grad(loss, ps)
        with torch.no_grad():
            for p, g in zip(ps, grads):
                p.sub_(LEARNING_RATE * g)
        return loss
    return _with_state(step, lambda: [p.detach().numpy().copy() for p in ps])


def autograd_train(params: list[np.ndarray], x: np.ndarray,
                   y: np.ndarray) -> Callable[[], Any]:
    peers._need("autograd")
    import autograd

    ops = peers.autograd_ops()
    value_and_grad = autograd.value_and_grad(lambda p: gradient.mlp_loss(ops, p, (x, y)))
    state = [[a.copy() for a in params]]

    def step() -> Any:
        loss, grads = value_and_grad(state[0])
        state[0] = [a - LEARNING_RATE * g for a, g in zip(state[0], grads)]
        return loss
    return _with_state(step, lambda: [a.copy() for a in state[0]])


def train_workload() -> Workload:
    params, (x, y) = gradient.mlp_data()
    makers: dict[str, Maker] = {
        HAND: lambda: hand_train(params, x, y),
        FUNCTION: lambda: gradtape_train(params, x, y, decorate=True),
        "gradtape eager tape": lambda: gradtape_train(params, x, y, decorate=False),
        "TF tf.function": lambda: tf_train(params, x, y),
        "JAX jit": lambda: jax_train(params, x, y, jit=True),
        "JAX (no jit)": lambda: jax_train(params, x, y, jit=False),
        "PyTorch": lambda: torch_train(params, x, y),
        "autograd": lambda: autograd_train(params, x, y),
    }
    return Workload("train", "MLP train step (tanh, batch 32, width 64: forward, gradient, "
                    "SGD update)", makers, hand_params_after(params, x, y),
                    rtol=1e-4, atol=1e-6)


WORKLOADS = [chain_workload, train_workload]


def targets(titles: dict[str, str]) -> list[Target]:
    """Issue 5's targets, as ratios to the hand-written NumPy code; the scalar chain's
    is issue [6/6]'s (its code runs on Python floats: codegen/floats.py)."""
    return [Target(titles["chain"], FUNCTION, 0.3), Target(titles["train"], FUNCTION, 1.2)]


def warm_up_function() -> None:
    """Run a tiny decorated gradient, so the first-call figures show the cost of tracing
    a new structure, not of loading ``@gt.function``'s machinery."""
    for decorate in (True, False):
        step = gradtape_chain(np.float64(0.1), decorate)
        for _ in range(3):
            step()


def main(argv: list[str] | None = None) -> list[Result]:
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    settings = settings_from(args)
    try:
        _gt_function()
    except Skip:
        print(f"note: {MISSING}; its rows are skipped.", file=sys.stderr)
    else:
        warm_up_function()
    peers.warm_up(settings.peers)
    results, titles = run_workloads(WORKLOADS, settings)
    text = render(results, titles, args.threads)
    print(text)
    if args.update_docs:
        update_docs("function", text)
    return results


def render(results: list[Result], titles: dict[str, str], threads: int) -> str:
    parts = ["## Compiled functions (issue 5)", "",
             f"Command: `{command()}`", "",
             f"Machine: {machine(threads)}.", "",
             "Versions: " + versions(["gradtape", "autograd", "jax", "tensorflow", "torch"])
             + ".", "",
             f"Training step: SGD with learning rate {LEARNING_RATE}; every "
             "implementation's parameters after 1, 2 and 3 steps are checked against the "
             "hand-written NumPy step's before timing. "
             "PyTorch and autograd run eagerly (no compiled mode is used for them).", ""]
    parts += [report_result(r, versus=FUNCTION) for r in results]
    parts.append(report_targets(results, targets(titles)))
    parts.append(report_cold(results))
    return "\n".join(parts)


if __name__ == "__main__":
    main()
