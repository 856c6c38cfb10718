"""One adapter per library: the same few ops under one set of names, and the usual way of
taking a gradient in that library (a tape for gradtape and TF, ``grad`` for autograd and
JAX, ``autograd.grad`` for PyTorch).

Workloads are written once as ``loss(ops, params, data)``; the adapters run them. Every
``*_step`` function returns the zero-argument step to time, or raises ``Skip``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
from _harness import Skip, have

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TF's start-up chatter
os.environ.setdefault("JAX_PLATFORMS", "cpu")

Loss = Callable[[Any, list, tuple], Any]


def _need(module: str) -> None:
    if not have(module):
        raise Skip(f"{module} is not installed")


# --- gradtape -----------------------------------------------------------------------------

def gradtape_ops() -> SimpleNamespace:
    import gradtape as gt

    return SimpleNamespace(
        matmul=_gt_attr("matmul"), tanh=gt.tanh, sin=gt.sin, cos=gt.cos, exp=gt.exp,
        sum=gt.reduce_sum, relu=gt.relu, log_softmax=gradtape_log_softmax,
    )


def _gt_attr(name: str) -> Callable:
    import gradtape as gt

    fn = getattr(gt, name, None)
    if fn is None:
        def missing(*args: Any, **kwargs: Any) -> Any:
            raise Skip(f"gradtape has no {name} yet")
        return missing
    return fn


def gradtape_log_softmax_kind() -> str:
    """Which gradtape op the softmax cross-entropy uses (the best one that exists)."""
    import gradtape as gt

    nn = getattr(gt, "nn", None)
    if nn is not None and hasattr(nn, "log_softmax"):
        return "gt.nn.log_softmax"
    if hasattr(gt, "log_softmax"):
        return "gt.log_softmax"
    if hasattr(gt, "reduce_logsumexp") or hasattr(gt, "logsumexp"):
        return "z - logsumexp(z)"
    return "z - m - log(sum(exp(z - m))), m = row max as a constant"


def gradtape_log_softmax(z: Any) -> Any:
    import gradtape as gt

    kind = gradtape_log_softmax_kind()
    if kind == "gt.nn.log_softmax":
        return gt.nn.log_softmax(z, axis=-1)
    if kind == "gt.log_softmax":
        return gt.log_softmax(z, axis=-1)
    if kind.startswith("z - logsumexp"):
        lse = getattr(gt, "reduce_logsumexp", None) or gt.logsumexp
        return z - lse(z, axis=-1, keepdims=True)
    # The row max only shifts the logits for stability; log_softmax does not depend on
    # it, so it may enter as a constant (its gradient contribution is exactly zero).
    m = np.max(np.asarray(z), axis=-1, keepdims=True)
    shifted = z - m
    return shifted - gt.log(gt.reduce_sum(gt.exp(shifted), axis=-1, keepdims=True))


def gradtape_step(loss: Loss, params: Sequence[np.ndarray], data: tuple,
                  variables: bool = True, interpreted: bool = False) -> Callable[[], Any]:
    """A new tape every call: record the forward, return ``tape.gradient``."""
    import gradtape as gt

    ops = gradtape_ops()
    data = tuple(gt.constant(d) for d in data)
    if variables:
        ps = [gt.Variable(p) for p in params]

        def step() -> Any:
            with gt.GradientTape() as tape:
                value = loss(ops, ps, data)
            return tape.gradient(value, ps)
    else:
        ps = [gt.constant(p) for p in params]

        def step() -> Any:
            with gt.GradientTape() as tape:
                tape.watch(ps)
                value = loss(ops, ps, data)
            return tape.gradient(value, ps)

    if interpreted:
        return _interpreted(step)
    clear_gradtape_cache()  # so the first call shows the cost of a new structure
    return step


def clear_gradtape_cache() -> None:
    import gradtape as gt

    clear = getattr(gt, "clear_cache", None)
    if clear is not None:
        clear()


def _interpreted(step: Callable[[], Any]) -> Callable[[], Any]:
    import gradtape as gt

    if not hasattr(gt, "config"):
        raise Skip("gradtape has no config(compile=False) yet")

    def run() -> Any:
        with gt.config(compile=False):
            return step()
    return run


def gradtape_persistent(loss: Loss, params: Sequence[np.ndarray], data: tuple,
                        interpreted: bool = False) -> Callable[[], Any]:
    """Record once on a persistent tape; each call is one more ``tape.gradient``."""
    import gradtape as gt

    ops = gradtape_ops()
    data = tuple(gt.constant(d) for d in data)
    ps = [gt.Variable(p) for p in params]
    with gt.GradientTape(persistent=True) as tape:
        value = loss(ops, ps, data)

    def step() -> Any:
        return tape.gradient(value, ps)

    if interpreted:
        return _interpreted(step)
    clear_gradtape_cache()
    return step


# --- autograd -----------------------------------------------------------------------------

def autograd_ops() -> SimpleNamespace:
    import autograd.numpy as anp
    from autograd.scipy.special import logsumexp

    return SimpleNamespace(
        matmul=anp.dot, tanh=anp.tanh, sin=anp.sin, cos=anp.cos, exp=anp.exp, sum=anp.sum,
        relu=lambda z: anp.maximum(z, 0.0),
        log_softmax=lambda z: z - logsumexp(z, axis=-1, keepdims=True),
    )


def autograd_step(loss: Loss, params: Sequence[np.ndarray], data: tuple) -> Callable[[], Any]:
    _need("autograd")
    import autograd

    ops = autograd_ops()
    ps = list(params)
    g = autograd.grad(lambda p: loss(ops, p, data))
    return lambda: g(ps)


def autograd_persistent(loss: Loss, params: Sequence[np.ndarray],
                        data: tuple) -> Callable[[], Any]:
    """Trace once with ``make_vjp``; each call runs the stored backward pass."""
    _need("autograd")
    from autograd.core import make_vjp

    ops = autograd_ops()
    vjp, value = make_vjp(lambda p: loss(ops, p, data), list(params))
    one = np.ones_like(value)
    return lambda: vjp(one)


# --- JAX ----------------------------------------------------------------------------------

def jax_ops() -> SimpleNamespace:
    import jax
    import jax.numpy as jnp

    return SimpleNamespace(
        matmul=jnp.matmul, tanh=jnp.tanh, sin=jnp.sin, cos=jnp.cos, exp=jnp.exp, sum=jnp.sum,
        relu=jax.nn.relu, log_softmax=lambda z: jax.nn.log_softmax(z, axis=-1),
    )


def _jax() -> Any:
    _need("jax")
    import jax

    jax.config.update("jax_enable_x64", True)  # the scalar chain is float64
    return jax


def jax_step(loss: Loss, params: Sequence[np.ndarray], data: tuple,
             jit: bool) -> Callable[[], Any]:
    jax = _jax()
    ops = jax_ops()
    ps = [jax.numpy.asarray(p) for p in params]
    ds = tuple(jax.numpy.asarray(d) for d in data)
    g = jax.grad(lambda p, d: loss(ops, p, d))
    if jit:
        g = jax.jit(g)
    return lambda: jax.block_until_ready(g(ps, ds))


def jax_persistent(loss: Loss, params: Sequence[np.ndarray], data: tuple,
                   jit: bool) -> Callable[[], Any]:
    """``jax.vjp`` once; each call applies the stored VJP function."""
    jax = _jax()
    ops = jax_ops()
    ps = [jax.numpy.asarray(p) for p in params]
    ds = tuple(jax.numpy.asarray(d) for d in data)
    value, vjp = jax.vjp(lambda p: loss(ops, p, ds), ps)
    one = jax.numpy.ones_like(value)
    if jit:
        apply = jax.jit(lambda f, ct: f(ct)[0])
        return lambda: jax.block_until_ready(apply(vjp, one))
    return lambda: jax.block_until_ready(vjp(one)[0])


# --- TensorFlow ---------------------------------------------------------------------------

def _tf() -> Any:
    _need("tensorflow")
    import tensorflow as tf

    return tf


def tf_ops() -> SimpleNamespace:
    tf = _tf()
    return SimpleNamespace(
        matmul=tf.matmul, tanh=tf.tanh, sin=tf.sin, cos=tf.cos, exp=tf.exp,
        sum=tf.reduce_sum, relu=tf.nn.relu, log_softmax=lambda z: tf.nn.log_softmax(z, -1),
    )


def tf_step(loss: Loss, params: Sequence[np.ndarray], data: tuple, function: bool,
            variables: bool = True) -> Callable[[], Any]:
    tf = _tf()
    ops = tf_ops()
    ds = tuple(tf.constant(d) for d in data)
    if variables:
        ps = [tf.Variable(p) for p in params]

        def step() -> Any:
            with tf.GradientTape() as tape:
                value = loss(ops, ps, ds)
            return tape.gradient(value, ps)
    else:
        ps = [tf.constant(p) for p in params]

        def step() -> Any:
            with tf.GradientTape() as tape:
                tape.watch(ps)
                value = loss(ops, ps, ds)
            return tape.gradient(value, ps)

    return tf.function(step) if function else step


def tf_persistent(loss: Loss, params: Sequence[np.ndarray], data: tuple) -> Callable[[], Any]:
    tf = _tf()
    ops = tf_ops()
    ds = tuple(tf.constant(d) for d in data)
    ps = [tf.Variable(p) for p in params]
    with tf.GradientTape(persistent=True) as tape:
        value = loss(ops, ps, ds)
    return lambda: tape.gradient(value, ps)


# --- PyTorch ------------------------------------------------------------------------------

def _torch() -> Any:
    _need("torch")
    import torch

    return torch


def torch_ops() -> SimpleNamespace:
    torch = _torch()
    return SimpleNamespace(
        matmul=torch.matmul, tanh=torch.tanh, sin=torch.sin, cos=torch.cos, exp=torch.exp,
        sum=torch.sum, relu=torch.relu, log_softmax=lambda z: torch.log_softmax(z, -1),
    )


def torch_step(loss: Loss, params: Sequence[np.ndarray], data: tuple) -> Callable[[], Any]:
    torch = _torch()
    ops = torch_ops()
    ps = [torch.tensor(p, requires_grad=True) for p in params]
    ds = tuple(torch.from_numpy(np.asarray(d)) for d in data)
    return lambda: torch.autograd.grad(loss(ops, ps, ds), ps)


def torch_persistent(loss: Loss, params: Sequence[np.ndarray],
                     data: tuple) -> Callable[[], Any]:
    torch = _torch()
    ops = torch_ops()
    ps = [torch.tensor(p, requires_grad=True) for p in params]
    ds = tuple(torch.from_numpy(np.asarray(d)) for d in data)
    value = loss(ops, ps, ds)
    return lambda: torch.autograd.grad(value, ps, retain_graph=True)


# --- tangent ------------------------------------------------------------------------------

def tangent_step(fn: Callable, params: Sequence[np.ndarray], data: tuple) -> Callable[[], Any]:
    """``fn(*params, *data)`` written with plain NumPy, as tangent needs source it can read."""
    _need("tangent")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import tangent

        df = tangent.grad(fn, wrt=tuple(range(len(params))), verbose=0)
    args = (*params, *data)
    if len(params) == 1:
        return lambda: [df(*args)]
    return lambda: list(df(*args))


def all_steps(loss: Loss, params: Sequence[np.ndarray], data: tuple,
              variables: bool = True) -> dict[str, Callable[[], Callable[[], Any]]]:
    """Makers for gradtape and every peer, a new tape/trace per call."""
    return {
        "gradtape": lambda: gradtape_step(loss, params, data, variables),
        "gradtape (interpreted)": lambda: gradtape_step(loss, params, data, variables,
                                                        interpreted=True),
        "autograd": lambda: autograd_step(loss, params, data),
        "JAX grad": lambda: jax_step(loss, params, data, jit=False),
        "JAX jit(grad)": lambda: jax_step(loss, params, data, jit=True),
        "TF eager tape": lambda: tf_step(loss, params, data, False, variables),
        "TF tf.function": lambda: tf_step(loss, params, data, True, variables),
        "PyTorch": lambda: torch_step(loss, params, data),
    }


def _tiny_loss(ops: Any, p: list, data: tuple) -> Any:
    x = p[0]
    return ops.sum(ops.tanh(ops.matmul(x, x)) * ops.sin(x) + ops.exp(-x * ops.cos(x)))


def warm_up(with_peers: bool = True) -> None:
    """Import and initialise each library once on a tiny problem (float32 and float64),
    so first-call figures show the cost of a new structure, not of loading a library."""
    for dtype in (np.float32, np.float64):
        tiny = [np.eye(3, dtype=dtype)]
        for name, make in all_steps(_tiny_loss, tiny, (), variables=False).items():
            if not with_peers and not name.startswith("gradtape"):
                continue
            try:
                fn = make()
                fn()
                fn()
            except Exception:
                pass
