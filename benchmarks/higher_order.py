"""Hessians and Jacobians: gradtape's nested tapes, ``jacobian`` and ``batch_jacobian``
against hand-written NumPy and against JAX, autograd, PyTorch and TensorFlow, in one
process.

    python benchmarks/higher_order.py                 # full run (about two minutes)
    python benchmarks/higher_order.py --quick         # smoke run
    python benchmarks/higher_order.py --update-docs   # also rewrite docs/performance.md

Every implementation is checked against the hand-written result before it is timed.
Everything here is float64 (tight checks; JAX runs with x64 enabled).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
if __name__ == "__main__":  # before NumPy and the peers load their thread pools
    import _threads

    _threads.limit_from_argv()

import _peers as peers
import numpy as np
from _harness import (
    GRADTAPE,
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
N = 64  # x in R^64, A is 64×64
BATCH, LAYER_IN, LAYER_OUT = 256, 32, 32


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N)) / math.sqrt(N)
    x = rng.standard_normal(N)
    return a, x


def _gt() -> Any:
    import gradtape as gt

    return gt


def _interpreted(step: Callable[[], Any]) -> Callable[[], Any]:
    gt = _gt()

    def run() -> Any:
        with gt.config(compile=False):
            return step()
    return run


def _fresh(step: Callable[[], Any]) -> Callable[[], Any]:
    peers.clear_gradtape_cache()  # the first call shows the cost of a new structure
    return step


def _gradtape_variants(make: Callable[[], Callable[[], Any]]) -> dict[str, Maker]:
    return {GRADTAPE: lambda: _fresh(make()),
            "gradtape (interpreted)": lambda: _interpreted(make())}


# --- Hessian of sum(tanh(A @ x)) ------------------------------------------------------------

def hessian_hand(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    t = np.tanh(a @ x)
    return a.T @ ((-2 * t * (1 - t * t))[:, None] * a)


def gradtape_hessian(a: np.ndarray, x: np.ndarray) -> Callable[[], Any]:
    gt = _gt()
    a_t, x_t = gt.constant(a), gt.constant(x)

    def step() -> Any:
        with gt.GradientTape() as outer:
            outer.watch(x_t)
            with gt.GradientTape() as inner:
                inner.watch(x_t)
                y = gt.reduce_sum(gt.tanh(gt.matmul(a_t, x_t)))
            g = inner.gradient(y, x_t)
        return outer.jacobian(g, x_t)
    return step


def tf_hessian(a: np.ndarray, x: np.ndarray, function: bool) -> Callable[[], Any]:
    tf = peers._tf()
    a_t, x_t = tf.constant(a), tf.constant(x)

    def step() -> Any:
        with tf.GradientTape() as outer:
            outer.watch(x_t)
            with tf.GradientTape() as inner:
                inner.watch(x_t)
                y = tf.reduce_sum(tf.tanh(tf.linalg.matvec(a_t, x_t)))
            g = inner.gradient(y, x_t)
        return outer.jacobian(g, x_t)
    return tf.function(step) if function else step


def jax_transform(kind: str, fn: Callable, x: np.ndarray, jit: bool) -> Callable[[], Any]:
    jax = peers._jax()
    transform = {"hessian": jax.hessian, "jacrev": jax.jacrev,
                 "vmap_jacrev": lambda f: jax.vmap(jax.jacrev(f))}[kind](fn)
    if jit:
        transform = jax.jit(transform)
    x_j = jax.numpy.asarray(x)
    return lambda: jax.block_until_ready(transform(x_j))


def autograd_transform(kind: str, fn: Callable, x: np.ndarray) -> Callable[[], Any]:
    peers._need("autograd")
    import autograd

    transform = {"hessian": autograd.hessian, "jacobian": autograd.jacobian}[kind](fn)
    return lambda: transform(x)


def torch_functional(kind: str, fn: Callable, x: np.ndarray,
                     vectorize: bool) -> Callable[[], Any]:
    torch = peers._torch()
    transform = getattr(torch.autograd.functional, kind)
    x_t = torch.from_numpy(x)
    return lambda: transform(fn, x_t, vectorize=vectorize)


def hessian_workload() -> Workload:
    a, x = _data()

    def jax_f(v: Any) -> Any:
        import jax.numpy as jnp
        return jnp.sum(jnp.tanh(a @ v))

    def autograd_f(v: Any) -> Any:
        import autograd.numpy as anp
        return anp.sum(anp.tanh(anp.dot(a, v)))

    def torch_f(v: Any) -> Any:
        import torch
        return torch.sum(torch.tanh(torch.from_numpy(a) @ v))

    makers: dict[str, Maker] = {HAND: lambda: lambda: hessian_hand(a, x)}
    makers.update(_gradtape_variants(lambda: gradtape_hessian(a, x)))
    makers.update({
        "autograd hessian": lambda: autograd_transform("hessian", autograd_f, x),
        "JAX hessian": lambda: jax_transform("hessian", jax_f, x, jit=False),
        "JAX jit(hessian)": lambda: jax_transform("hessian", jax_f, x, jit=True),
        "TF eager nested tapes": lambda: tf_hessian(a, x, function=False),
        "TF tf.function nested tapes": lambda: tf_hessian(a, x, function=True),
        "PyTorch functional.hessian": lambda: torch_functional("hessian", torch_f, x, False),
        "PyTorch functional.hessian (vectorize)":
            lambda: torch_functional("hessian", torch_f, x, True),
    })
    return Workload("hessian", "Hessian of sum(tanh(A @ x)), x in R^64, nested tapes",
                    makers, hessian_hand(a, x))


# --- Jacobian of tanh(A @ x) ----------------------------------------------------------------

def jacobian_hand(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    t = np.tanh(a @ x)
    return (1 - t * t)[:, None] * a


def gradtape_jacobian(a: np.ndarray, x: np.ndarray) -> Callable[[], Any]:
    gt = _gt()
    a_t, x_t = gt.constant(a), gt.constant(x)

    def step() -> Any:
        with gt.GradientTape() as tape:
            tape.watch(x_t)
            y = gt.tanh(gt.matmul(a_t, x_t))
        return tape.jacobian(y, x_t)
    return step


def tf_jacobian(a: np.ndarray, x: np.ndarray, function: bool) -> Callable[[], Any]:
    tf = peers._tf()
    a_t, x_t = tf.constant(a), tf.constant(x)

    def step() -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x_t)
            y = tf.tanh(tf.linalg.matvec(a_t, x_t))
        return tape.jacobian(y, x_t)
    return tf.function(step) if function else step


def jacobian_workload() -> Workload:
    a, x = _data()

    def jax_f(v: Any) -> Any:
        import jax.numpy as jnp
        return jnp.tanh(a @ v)

    def autograd_f(v: Any) -> Any:
        import autograd.numpy as anp
        return anp.tanh(anp.dot(a, v))

    def torch_f(v: Any) -> Any:
        import torch
        return torch.tanh(torch.from_numpy(a) @ v)

    makers: dict[str, Maker] = {HAND: lambda: lambda: jacobian_hand(a, x)}
    makers.update(_gradtape_variants(lambda: gradtape_jacobian(a, x)))
    makers.update({
        "autograd jacobian": lambda: autograd_transform("jacobian", autograd_f, x),
        "JAX jacrev": lambda: jax_transform("jacrev", jax_f, x, jit=False),
        "JAX jit(jacrev)": lambda: jax_transform("jacrev", jax_f, x, jit=True),
        "TF eager tape.jacobian": lambda: tf_jacobian(a, x, function=False),
        "TF tf.function tape.jacobian": lambda: tf_jacobian(a, x, function=True),
        "PyTorch functional.jacobian": lambda: torch_functional("jacobian", torch_f, x, False),
        "PyTorch functional.jacobian (vectorize)":
            lambda: torch_functional("jacobian", torch_f, x, True),
    })
    return Workload("jacobian", "Jacobian of tanh(A @ x), 64×64", makers, jacobian_hand(a, x))


# --- batch_jacobian of a dense tanh layer, batch 256 ----------------------------------------

def layer_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    w = rng.standard_normal((LAYER_IN, LAYER_OUT)) / math.sqrt(LAYER_IN)
    b = 0.1 * rng.standard_normal(LAYER_OUT)
    x = rng.standard_normal((BATCH, LAYER_IN))
    return w, b, x


def batch_jacobian_hand(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    y = np.tanh(x @ w + b)
    return (1 - y * y)[:, :, None] * w.T[None]


def gradtape_batch_jacobian(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> Callable[[], Any]:
    gt = _gt()
    w_t, b_t, x_t = gt.constant(w), gt.constant(b), gt.constant(x)

    def step() -> Any:
        with gt.GradientTape() as tape:
            tape.watch(x_t)
            y = gt.tanh(gt.matmul(x_t, w_t) + b_t)
        return tape.batch_jacobian(y, x_t)
    return step


def gradtape_per_example(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> Callable[[], Any]:
    """What one writes without batch_jacobian: a tape and a jacobian per example."""
    gt = _gt()
    w_t, b_t = gt.constant(w), gt.constant(b)
    rows = [gt.constant(r) for r in x]

    def step() -> Any:
        out = []
        for r in rows:
            with gt.GradientTape() as tape:
                tape.watch(r)
                y = gt.tanh(gt.matmul(r[None], w_t) + b_t)[0]
            out.append(np.asarray(tape.jacobian(y, r)))
        return np.stack(out)
    return step


def tf_batch_jacobian(w: np.ndarray, b: np.ndarray, x: np.ndarray,
                      function: bool) -> Callable[[], Any]:
    tf = peers._tf()
    w_t, b_t, x_t = tf.constant(w), tf.constant(b), tf.constant(x)

    def step() -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x_t)
            y = tf.tanh(tf.matmul(x_t, w_t) + b_t)
        return tape.batch_jacobian(y, x_t)
    return tf.function(step) if function else step


def torch_vmap_jacrev(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> Callable[[], Any]:
    torch = peers._torch()
    w_t, b_t, x_t = torch.from_numpy(w), torch.from_numpy(b), torch.from_numpy(x)
    if not hasattr(torch, "func"):
        raise Skip("torch.func is missing")
    per_example = torch.func.vmap(torch.func.jacrev(lambda r: torch.tanh(r @ w_t + b_t)))
    return lambda: per_example(x_t)


def autograd_per_example(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> Callable[[], Any]:
    peers._need("autograd")
    import autograd
    import autograd.numpy as anp

    jac = autograd.jacobian(lambda r: anp.tanh(anp.dot(r, w) + b))
    return lambda: np.stack([jac(r) for r in x])


def batch_jacobian_workload() -> Workload:
    w, b, x = layer_data()

    def jax_layer(r: Any) -> Any:
        import jax.numpy as jnp
        return jnp.tanh(r @ w + b)

    makers: dict[str, Maker] = {HAND: lambda: lambda: batch_jacobian_hand(w, b, x)}
    makers.update(_gradtape_variants(lambda: gradtape_batch_jacobian(w, b, x)))
    makers.update({
        "gradtape per-example loop": lambda: gradtape_per_example(w, b, x),
        "autograd jacobian, per-example loop": lambda: autograd_per_example(w, b, x),
        "JAX vmap(jacrev)": lambda: jax_transform("vmap_jacrev", jax_layer, x, jit=False),
        "JAX jit(vmap(jacrev))": lambda: jax_transform("vmap_jacrev", jax_layer, x, jit=True),
        "TF eager batch_jacobian": lambda: tf_batch_jacobian(w, b, x, function=False),
        "TF tf.function batch_jacobian": lambda: tf_batch_jacobian(w, b, x, function=True),
        "PyTorch func.vmap(jacrev)": lambda: torch_vmap_jacrev(w, b, x),
    })
    return Workload("batch", f"batch_jacobian of tanh(x @ W + b), batch {BATCH}, "
                    f"{LAYER_IN}→{LAYER_OUT}", makers, batch_jacobian_hand(w, b, x))


WORKLOADS = [hessian_workload, jacobian_workload, batch_jacobian_workload]


def targets(titles: dict[str, str]) -> list[Target]:
    """Issue 4's targets, as ratios to the hand-written NumPy result."""
    return [Target(titles["hessian"], GRADTAPE, 5.0), Target(titles["jacobian"], GRADTAPE, 5.0)]


def main(argv: list[str] | None = None) -> list[Result]:
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    settings = settings_from(args)
    peers.warm_up(settings.peers)
    results, titles = run_workloads(WORKLOADS, settings)
    text = render(results, titles, args.threads)
    print(text)
    if args.update_docs:
        update_docs("higher_order", text)
    return results


def render(results: list[Result], titles: dict[str, str], threads: int) -> str:
    parts = ["## Hessians and Jacobians (issue 4)", "",
             f"Command: `{command()}`", "",
             f"Machine: {machine(threads)}.", "",
             "Versions: " + versions(["gradtape", "autograd", "jax", "tensorflow", "torch"])
             + ".", "",
             "float64 throughout. Every call records the forward pass again (new tapes), as "
             "a TF user's loop would.", ""]
    parts += [report_result(r) for r in results]
    parts.append(report_targets(results, targets(titles)))
    parts.append(report_cold(results))
    return "\n".join(parts)


if __name__ == "__main__":
    main()
