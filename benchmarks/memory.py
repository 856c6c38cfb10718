"""The peak memory of one gradient step, above the steady baseline, each in a fresh process.

Three workloads, each in four variants (hand-written NumPy, the gradtape eager tape,
``@gt.function``, PyTorch; JAX too when importable, for the MLP):

- ``mlp`` (issue [6/6]): a 4-layer tanh MLP, batch 4096, 1024 -> 2048 -> 2048 -> 2048
  -> 2048, float32, 128 MiB of layer outputs.
- ``deep``: the same kind of MLP 16 layers deep, batch 8192, 1024 wide, float32 (512 MiB
  of layer outputs): deep enough for ``recompute_grad``'s sqrt(L) blocks of sqrt(L)
  layers to cut the peak (``--recompute``: blocks of 1, 2 and 4 layers).
- ``cnn``: two 3x3 ``SAME`` convolutions with ReLU (3 -> 16 -> 32 channels) on a batch of
  128 32x32 images, a global mean and a 32 -> 10 dense layer, float32 (24 MiB of
  convolution outputs).
- ``rnn``: a tanh recurrence ``h = tanh(x_t @ Wx + h @ Wh)`` over 32 steps, batch 256,
  256 inputs, 1024 hidden units, float32 (32 MiB of states).

Each variant builds the model and its input, runs two warm-up steps (so code, caches
and the allocator's pools are in place), then measures the resident set's peak over a
third step against the resident size just before it, and (the fair figure) against the
resident size after building the model and its input, before the first step: memory a
variant keeps between steps (``@gt.function``'s buffer pool, an allocator's cache)
counts in the second, not in the first. A variant that cannot import is reported as
skipped.

    python benchmarks/memory.py                      # every workload, the sizes above
    python benchmarks/memory.py --workload cnn       # one workload
    python benchmarks/memory.py --quick              # small sizes: only that each runs
    python benchmarks/memory.py --workload mlp --recompute   # with recompute_grad blocks
    python benchmarks/memory.py --workload deep --recompute  # 16 layers: 4 blocks of 4

The peak comes from ``/proc/self/status`` (``VmHWM``, reset through
``/proc/self/clear_refs``), so it counts what the allocator took from the system, as
``ru_maxrss`` does, without the process's earlier history. glibc's mmap threshold is
fixed at 128 KiB in each variant's process (``MALLOC_MMAP_THRESHOLD_``), so every array
of 128 KiB or more is mapped when allocated and unmapped when freed, and the peak counts
the arrays alive at once. With glibc's adaptive threshold (``--adaptive-malloc``), a
freed block raises the threshold to its size, later blocks of that size come from a
heap the warm-up steps left resident, and a step whose arrays are all that size (the
RNN's 1 MiB states) shows no peak at all in every variant.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

VARIANTS = ("numpy", "gradtape_eager", "gradtape_function", "torch", "jax")
# The MLP with ``gt.recompute_grad`` blocks of 1, 2 or 4 layers (``--recompute``).
RECOMPUTE = tuple(f"gradtape_{mode}_recompute{k}" for mode in ("eager", "function")
                  for k in (1, 2, 4))
WORKLOADS = ("mlp", "cnn", "rnn", "deep")
# The workloads measured without --workload (``deep`` is for recompute_grad: ask for it).
DEFAULT_WORKLOADS = ("mlp", "cnn", "rnn")
MiB = 1 << 20


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:  # "5": reset VmHWM to the current RSS
        f.write("5")


# --- the MLP ------------------------------------------------------------------------------

def _mlp_sizes(quick: bool, layers: int = 4) -> tuple[int, list[int]]:
    if layers != 4:  # the deep MLP: wide batches, square layers
        return (64, [32] * (layers + 1)) if quick else (8192, [1024] * (layers + 1))
    if quick:
        return 64, [32, 64, 64, 64, 32]
    return 4096, [1024, 2048, 2048, 2048, 2048]


def _numpy_step(np, xs, ws):
    """Forward and backward by hand: keep each layer's output, nothing else."""
    h = [xs]
    for w in ws:
        h.append(np.tanh(h[-1] @ w))
    g = np.ones_like(h[-1]) / h[-1].size
    grads = [None] * len(ws)
    for k in reversed(range(len(ws))):
        g = g * (1 - h[k + 1] * h[k + 1])
        grads[k] = h[k].T @ g
        g = g @ ws[k].T if k else None
    return grads


def _gradtape_step(gt, x, ws, per_block=0):
    """The eager step; with ``per_block``, each ``per_block`` layers one
    ``gt.recompute_grad`` block."""
    def layers(block_ws):
        def run(h):
            for w in block_ws:
                h = gt.tanh(gt.matmul(h, w))
            return h
        return run

    step = per_block or len(ws)
    blocks = [layers(ws[i:i + step]) for i in range(0, len(ws), step)]
    if per_block:
        blocks = [gt.recompute_grad(b) for b in blocks]
    with gt.GradientTape() as tape:
        h = x
        for block in blocks:
            h = block(h)
        loss = gt.reduce_mean(h)
    return tape.gradient(loss, ws)


def _mlp(name: str, quick: bool, layers: int = 4):
    import numpy as np
    batch, widths = _mlp_sizes(quick, layers)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, widths[0]), dtype=np.float32)
    ws = [(rng.standard_normal((a, b), dtype=np.float32) / np.sqrt(a)).astype(np.float32)
          for a, b in zip(widths, widths[1:])]
    if name == "numpy":
        return lambda: _numpy_step(np, xs, ws)
    if name.startswith("gradtape"):
        import gradtape as gt
        x, variables = gt.constant(xs), [gt.Variable(w) for w in ws]
        per_block = int(name.rsplit("recompute", 1)[1]) if "recompute" in name else 0
        return _gradtape_variant(gt, name.split("_recompute")[0],
                                 lambda: _gradtape_step(gt, x, variables, per_block))
    if name == "torch":
        import torch
        tx = torch.from_numpy(xs)
        tw = [torch.from_numpy(w).requires_grad_() for w in ws]

        def torch_step():
            h = tx
            for w in tw:
                h = torch.tanh(h @ w)
            return torch.autograd.grad(h.mean(), tw)
        return torch_step
    if name == "jax":
        import jax
        import jax.numpy as jnp

        def loss(ws_, x_):
            h = x_
            for w in ws_:
                h = jnp.tanh(h @ w)
            return jnp.mean(h)
        grad = jax.jit(jax.grad(loss))
        jx, jw = jnp.asarray(xs), [jnp.asarray(w) for w in ws]
        return lambda: [g.block_until_ready() for g in grad(jw, jx)]
    raise ValueError(f"unknown variant {name!r}")


def _gradtape_variant(gt, name: str, step):
    return step if name == "gradtape_eager" else gt.function(step)


# --- the CNN ------------------------------------------------------------------------------

def _cnn_sizes(quick: bool) -> tuple[int, int, tuple[int, ...]]:
    """Batch, image side, channels (input, first conv, second conv), classes."""
    return (8, 8, (3, 4, 8, 10)) if quick else (128, 32, (3, 16, 32, 10))


def _np_conv(np, x, k):
    """3x3 ``SAME`` convolution, NHWC, as nine shifted matmuls (no window copies)."""
    n, h, w, _ = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    out = np.zeros((n, h, w, k.shape[3]), x.dtype)
    for i in range(3):
        for j in range(3):
            out += xp[:, i:i + h, j:j + w, :] @ k[i, j]
    return out


def _np_conv_filter_grad(np, x, g):
    n, h, w, _ = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    return np.stack([np.stack([np.tensordot(xp[:, i:i + h, j:j + w, :], g,
                                            axes=([0, 1, 2], [0, 1, 2]))
                               for j in range(3)]) for i in range(3)])


def _numpy_cnn_step(np, x, k1, k2, wd):
    a1 = np.maximum(_np_conv(np, x, k1), 0)
    a2 = np.maximum(_np_conv(np, a1, k2), 0)
    pooled = a2.mean(axis=(1, 2))
    logits = pooled @ wd
    g_logits = 2 * logits / logits.size  # d mean(logits ** 2)
    g_wd = pooled.T @ g_logits
    g_a2 = np.broadcast_to((g_logits @ wd.T)[:, None, None, :] / (a2.shape[1] * a2.shape[2]),
                           a2.shape) * (a2 > 0)
    del a2
    g_k2 = _np_conv_filter_grad(np, a1, g_a2)
    g_a1 = _np_conv(np, g_a2, k2[::-1, ::-1].transpose(0, 1, 3, 2)) * (a1 > 0)
    del g_a2
    g_k1 = _np_conv_filter_grad(np, x, g_a1)
    return g_k1, g_k2, g_wd


def _gradtape_cnn_step(gt, x, k1, k2, wd):
    with gt.GradientTape() as tape:
        a1 = gt.nn.relu(gt.nn.conv2d(x, k1, 1, "SAME"))
        a2 = gt.nn.relu(gt.nn.conv2d(a1, k2, 1, "SAME"))
        logits = gt.matmul(gt.reduce_mean(a2, axis=[1, 2]), wd)
        loss = gt.reduce_mean(gt.square(logits))
    return tape.gradient(loss, [k1, k2, wd])


def _cnn(name: str, quick: bool):
    import numpy as np
    batch, side, (c0, c1, c2, classes) = _cnn_sizes(quick)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, side, side, c0), dtype=np.float32)
    k1 = (rng.standard_normal((3, 3, c0, c1), dtype=np.float32) / 5).astype(np.float32)
    k2 = (rng.standard_normal((3, 3, c1, c2), dtype=np.float32) / 12).astype(np.float32)
    wd = (rng.standard_normal((c2, classes), dtype=np.float32) / 6).astype(np.float32)
    if name == "numpy":
        return lambda: _numpy_cnn_step(np, xs, k1, k2, wd)
    if name.startswith("gradtape"):
        import gradtape as gt
        x, v1, v2, vd = gt.constant(xs), gt.Variable(k1), gt.Variable(k2), gt.Variable(wd)
        return _gradtape_variant(gt, name, lambda: _gradtape_cnn_step(gt, x, v1, v2, vd))
    if name == "torch":
        import torch
        import torch.nn.functional as F
        tx = torch.from_numpy(xs).permute(0, 3, 1, 2).contiguous()
        t1, t2 = (torch.from_numpy(k.transpose(3, 2, 0, 1).copy()).requires_grad_()
                  for k in (k1, k2))
        td = torch.from_numpy(wd).requires_grad_()

        def torch_step():
            a1 = torch.relu(F.conv2d(tx, t1, padding=1))
            a2 = torch.relu(F.conv2d(a1, t2, padding=1))
            logits = a2.mean(dim=(2, 3)) @ td
            return torch.autograd.grad((logits ** 2).mean(), [t1, t2, td])
        return torch_step
    return None


# --- the RNN ------------------------------------------------------------------------------

def _rnn_sizes(quick: bool) -> tuple[int, int, int, int]:
    """Steps, batch, inputs, hidden units."""
    return (4, 8, 8, 16) if quick else (32, 256, 256, 1024)


def _numpy_rnn_step(np, xs, wx, wh):
    hs = [np.zeros((xs.shape[1], wh.shape[0]), xs.dtype)]
    for x in xs:
        hs.append(np.tanh(x @ wx + hs[-1] @ wh))
    g = np.ones_like(hs[-1]) / hs[-1].size
    g_wx, g_wh = np.zeros_like(wx), np.zeros_like(wh)
    for t in reversed(range(len(xs))):
        g = g * (1 - hs[t + 1] * hs[t + 1])
        hs[t + 1] = None  # read for the last time
        g_wx += xs[t].T @ g
        g_wh += hs[t].T @ g
        g = g @ wh.T
    return g_wx, g_wh


def _gradtape_rnn_step(gt, xs, wx, wh, h0):
    with gt.GradientTape() as tape:
        h = h0
        for t in range(xs.shape[0]):
            h = gt.tanh(gt.matmul(xs[t], wx) + gt.matmul(h, wh))
        loss = gt.reduce_mean(h)
    return tape.gradient(loss, [wx, wh])


def _rnn(name: str, quick: bool):
    import numpy as np
    steps, batch, inputs, hidden = _rnn_sizes(quick)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((steps, batch, inputs), dtype=np.float32)
    wx = (rng.standard_normal((inputs, hidden), dtype=np.float32) / 16).astype(np.float32)
    wh = (rng.standard_normal((hidden, hidden), dtype=np.float32) / 32).astype(np.float32)
    if name == "numpy":
        return lambda: _numpy_rnn_step(np, xs, wx, wh)
    if name.startswith("gradtape"):
        import gradtape as gt
        x, vx, vh = gt.constant(xs), gt.Variable(wx), gt.Variable(wh)
        h0 = gt.zeros((batch, hidden), gt.float32)
        return _gradtape_variant(gt, name, lambda: _gradtape_rnn_step(gt, x, vx, vh, h0))
    if name == "torch":
        import torch
        tx = torch.from_numpy(xs)
        tvx, tvh = (torch.from_numpy(w).requires_grad_() for w in (wx, wh))

        def torch_step():
            h = torch.zeros(batch, hidden)
            for t in range(steps):
                h = torch.tanh(tx[t] @ tvx + h @ tvh)
            return torch.autograd.grad(h.mean(), [tvx, tvh])
        return torch_step
    return None


_BUILDERS = {"mlp": _mlp, "cnn": _cnn, "rnn": _rnn,
             "deep": lambda name, quick: _mlp(name, quick, layers=16)}


def _variant(name: str, quick: bool, workload: str = "mlp"):
    """The step function of ``name`` on ``workload`` (called with no arguments), or
    ``None`` where the workload has no such variant."""
    if name == "torch":
        import torch
        torch.set_num_threads(1)
    return _BUILDERS[workload](name, quick)


def measure(name: str, quick: bool, workload: str = "mlp") -> dict:
    """Run in this process: the step's peak above the resident size before it."""
    row = {"workload": workload, "variant": name}
    try:
        step = _variant(name, quick, workload)
    except ImportError as e:
        return {**row, "skipped": f"not importable: {e}"}
    if step is None:
        return {**row, "skipped": "not written for this workload"}
    built = _status("VmRSS")  # the model and its input, before any step
    step()  # warm-up: code, caches, the allocator's pools
    step()
    before = _status("VmRSS")
    _reset_peak()
    result = step()
    peak = _status("VmHWM")
    del result
    return {**row, "peak_mib": round((peak - before) / MiB, 1),
            "fair_peak_mib": round((peak - built) / MiB, 1)}


def run(variant: str, quick: bool, python: str = sys.executable,
        workload: str = "mlp", adaptive_malloc: bool = False) -> dict:
    """``measure`` in a fresh process (the peaks of earlier variants don't count)."""
    src = Path(__file__).resolve().parent.parent / "src"
    cmd = [python, __file__, "--one", variant, "--workload", workload] + (
        ["--quick"] if quick else [])
    env = {"PYTHONPATH": str(src), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    if not adaptive_malloc:
        env["MALLOC_MMAP_THRESHOLD_"] = str(128 * 1024)
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        return {"workload": workload, "variant": variant,
                "failed": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--one", choices=VARIANTS + RECOMPUTE,
                        help="measure one variant here")
    parser.add_argument("--recompute", action="store_true",
                        help="the MLPs also with recompute_grad blocks of 1, 2 and 4 layers")
    parser.add_argument("--workload", choices=WORKLOADS, action="append",
                        help="the workload(s) to measure (default: all)")
    parser.add_argument("--adaptive-malloc", action="store_true",
                        help="leave glibc's mmap threshold adaptive (its default)")
    parser.add_argument("--torch-python", default=None,
                        help="the Python to run the torch variant with (its own venv)")
    args = parser.parse_args(argv)
    workloads = args.workload or list(DEFAULT_WORKLOADS)
    if args.one:
        print(json.dumps(measure(args.one, args.quick, workloads[0])))
        return []
    rows = []
    for workload in workloads:
        extra = RECOMPUTE if args.recompute and workload in ("mlp", "deep") else ()
        for name in VARIANTS + extra:
            python = args.torch_python if name == "torch" and args.torch_python \
                else sys.executable
            rows.append(run(name, args.quick, python, workload, args.adaptive_malloc))
    print(f"{'':>4} {'':>28}  {'above the step':>16}  {'above the model':>16}")
    for row in rows:
        if "peak_mib" in row:
            value = f"{row['peak_mib']:>12.1f} MiB  {row['fair_peak_mib']:>12.1f} MiB"
        else:
            value = str(row.get("skipped") or row.get("failed"))
        print(f"{row['workload']:>4} {row['variant']:>28}  {value}")
    return rows


if __name__ == "__main__":
    main()
